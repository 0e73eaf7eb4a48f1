"""A first submission judged whole by a read-ahead helper is adopted only where it is alone, and judged the same.

Each case runs one session two ways, with the helpers (every read used) and without
(tests/helpers/judging.py), and checks which agents the processor adopted as the helpers judged
them. More cases, built to break it: tests/test_speculation_attacks.py.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from orchestrator.commit import readahead
from orchestrator.commit.processor import Processor
from orchestrator.model.layout import SessionPaths
from tests.conftest import sample_claim, sample_source, store_text, write_artifacts
from tests.helpers.judging import QUOTE, TEXT, alone_files, both_ways


def test_agents_alone_are_adopted_and_the_others_judged_here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def stage(session: SessionPaths) -> None:
        sha = store_text(session, TEXT)
        write_artifacts(session, "planner", {"plan.json": {"query": "How?", "sub_questions": [
            {"id": "Q1", "question": "Why?", "priority": "high"}]}})
        proc = Processor(session)
        try:
            assert [o.status for o in proc.process_pending()] == ["merged"]
        finally:
            proc.close()
        write_artifacts(session, "alone-a", alone_files("alone-a", sha))
        write_artifacts(session, "alone-b", alone_files("alone-b", sha, priority="high"))
        # names a committed agent's sub-question: alone, the helper could not resolve it (kept as written)
        write_artifacts(session, "names-plan", alone_files("names-plan", sha, sub_question_id="planner:Q1"))
        plain = alone_files("no-locator", sha)
        plain["sources.json"]["sources"][0].pop("url")  # a source nobody can locate again: a SHACL warning
        plain["sources.json"]["sources"][0].pop("content_sha256")
        write_artifacts(session, "no-locator", plain)
        citing = alone_files("citing", sha)  # cites another agent of the batch: judged here
        citing["claims.json"]["claims"].append(sample_claim("C2", "alone-a:S1", QUOTE))
        write_artifacts(session, "citing", citing)
        write_artifacts(session, "misquoted", alone_files("misquoted", sha, priority="high") | {"claims.json": {
            "claims": [sample_claim("C1", "S1", "merged under one namespace", priority="high")]}})

    got, _ = both_ways(tmp_path, monkeypatch, stage)
    assert sorted(got["adopted"]) == ["alone-a", "alone-b", "no-locator"]
    statuses = {agent: status for agent, status, *_ in got["outcomes"]}
    assert statuses == {"alone-a": "merged", "alone-b": "merged", "citing": "merged", "misquoted": "rejected",
                        "names-plan": "merged", "no-locator": "merged"}
    warnings = next(problems for agent, _, _, _, problems in got["outcomes"] if agent == "no-locator")
    assert any(p["rule"].startswith("shacl.") for p in warnings)  # a SHACL warning, the same both ways


def test_an_agent_cited_by_an_earlier_one_of_the_batch_is_judged_here(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """'aaa' names a sub-question of 'bbb' (kept as written): bbb's validation reaches aaa's claim."""
    def stage(session: SessionPaths) -> None:
        claim = sample_claim("C0", source_id="S0")
        claim["sub_question_id"] = "bbb:Q1"
        write_artifacts(session, "aaa", {"sources.json": {"sources": [sample_source("S0", url="https://x.org/a")]},
                                         "claims.json": {"claims": [claim]}})
        write_artifacts(session, "bbb", {"plan.json": {"query": "How?", "sub_questions": [
            {"id": "Q1", "question": "Why?", "priority": "high"}]}})

    got, _ = both_ways(tmp_path, monkeypatch, stage)
    assert got["adopted"] == []
    assert {agent: status for agent, status, *_ in got["outcomes"]} == {"aaa": "merged", "bbb": "merged"}


def test_a_text_replaced_after_the_helper_judged_is_checked_here(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    def stage(session: SessionPaths) -> None:
        sha = store_text(session, TEXT)
        write_artifacts(session, "alone-a", alone_files("alone-a", sha, priority="high"))

    def corrupt(session: SessionPaths) -> None:
        for path in session.sources.glob("*.txt"):
            path.write_text(TEXT.replace("52", "25"), encoding="utf-8")  # same size, another sha256
            os.utime(path, ns=(1, 1))  # an old file: judged at once, not waited for

    got, _ = both_ways(tmp_path, monkeypatch, stage, between=corrupt)
    assert got["adopted"] == []
    assert [(agent, status) for agent, status, *_ in got["outcomes"]] == [("alone-a", "rejected")]


def test_a_resubmission_after_a_rejection_keeps_the_attempt_count(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    def stage(session: SessionPaths) -> None:
        sha = store_text(session, TEXT)
        write_artifacts(session, "again", {"claims.json": {"claims": [sample_claim("C1", "S9", QUOTE)]}})
        proc = Processor(session)
        try:
            assert [o.status for o in proc.process_pending()] == ["rejected"]
        finally:
            proc.close()
        os.unlink(session.lock_error("again"))
        shutil.rmtree(session.agent_artifacts("again"))
        write_artifacts(session, "again", alone_files("again", sha))
        write_artifacts(session, "other", alone_files("other", sha))

    got, _ = both_ways(tmp_path, monkeypatch, stage)
    assert sorted(got["adopted"]) == ["again", "other"]
    assert {agent: attempt for agent, _, attempt, *_ in got["outcomes"]} == {"again": 2, "other": 1}


def test_a_later_agent_citing_an_adopted_one_is_validated_with_its_graph(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """The adopted agent's graph was never installed here: the citing agent's SHACL check installs it."""
    def stage(session: SessionPaths) -> None:
        sha = store_text(session, TEXT)
        write_artifacts(session, "aaa", alone_files("aaa", sha))
        write_artifacts(session, "zzz", {"claims.json": {"claims": [
            sample_claim("C9", "aaa:S1", QUOTE, priority="high")]}})

    got, _ = both_ways(tmp_path, monkeypatch, stage)
    assert got["adopted"] == ["aaa"]
    assert {agent: status for agent, status, *_ in got["outcomes"]} == {"aaa": "merged", "zzz": "merged"}


def test_a_helper_that_fails_changes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def stage(session: SessionPaths) -> None:
        sha = store_text(session, TEXT)
        for agent in ("alone-a", "alone-b"):
            write_artifacts(session, agent, alone_files(agent, sha))

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("the helper pool is broken")

    monkeypatch.setattr(readahead.ReadAhead, "_ensure_pool", broken)
    got, _ = both_ways(tmp_path, monkeypatch, stage)
    assert got["adopted"] == []
    assert {status for _, status, *_ in got["outcomes"]} == {"merged"}


def test_the_evidence_time_budget_is_one_wherever_its_checks_ran(session: SessionPaths) -> None:
    """What a helper's text checks spent of the submission's budget is not spent again (ahead.Prechecked.deadline)."""
    from orchestrator.commit.ahead import Prechecked
    from orchestrator.graph.evidence import DEFAULT_TIME_BUDGET_S, bind_evidence

    assert not Prechecked().deadline().expired()
    assert Prechecked(spent_s=DEFAULT_TIME_BUDGET_S).deadline().expired()
    sha = store_text(session, TEXT)
    contribution = {"items": {"sources": [{"id": "a:S1", "content_sha256": sha}], "claims": [
        {"id": "a:C1", "evidence": [{"source_id": "a:S1", "snippet": QUOTE, "locator": {"page": 1}}]}]}}
    spent = Prechecked(spent_s=2 * DEFAULT_TIME_BUDGET_S)  # the helper used it all up: nothing more is checked
    bind_evidence(contribution, lambda gid: None, lambda s: TEXT, deadline=spent.deadline())
    verification = contribution["items"]["claims"][0]["evidence"][0]["verification"]
    assert verification["verified"] is False and "ran out of time" in verification["reason"]
    bind_evidence(contribution, lambda gid: None, lambda s: TEXT, deadline=Prechecked().deadline())
    assert contribution["items"]["claims"][0]["evidence"][0]["verification"]["verified"] is True
