"""A first submission judged whole by a read-ahead helper is adopted only where it is alone, and judged the same.

Each case runs one session two ways, with the helpers (every read used) and without, with the clock
stopped, and compares outcomes with their problems, events, ledger, views and retry files byte for
byte; and checks which agents the processor adopted as the helpers judged them.
"""

from __future__ import annotations

import datetime as dt
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from orchestrator.commit import readahead
from orchestrator.commit.processor import Processor
from orchestrator.commit.views import flush_views
from orchestrator.model import clock
from orchestrator.model.layout import SessionPaths
from orchestrator.session.record import create_session
from tests.conftest import sample_claim, sample_source, store_text, write_artifacts
from tests.helpers.judging import count_adoptions, ledger_bytes

FIXED = dt.datetime(2026, 1, 2, 3, 4, 5, 678000, tzinfo=dt.UTC)
TEXT = ("Page one. Knowledge graphs merged under per-agent namespaces keep every contribution apart, "
        "and 52 percent of merges needed no retry.\fPage two. The ledger did not lose a record.")
QUOTE = "merged under per-agent namespaces keep every contribution apart"


def _alone(agent: str, sha: str, **claim: Any) -> dict[str, Any]:
    return {"sources.json": {"sources": [sample_source("S1", url=f"https://x.org/{agent}", content_sha256=sha)]},
            "claims.json": {"claims": [sample_claim("C1", "S1", QUOTE, **claim)]}}


def _run(root: Path, monkeypatch: pytest.MonkeyPatch, *, helpers: bool,
         between: Callable[[SessionPaths], None] | None = None) -> dict[str, Any]:
    """Process every pending lock in one batch; ``between``: a change after the helpers judged, before the batch."""
    paths = SessionPaths(root)
    with monkeypatch.context() as patch:
        patch.setattr(clock, "utc_now", lambda: FIXED)
        patch.setattr(readahead, "MIN_BATCH", 1 if helpers else 10_000)
        patch.setattr(readahead, "WAIT", 60.0)
        adopted = count_adoptions(patch)
        proc = Processor(paths)
        try:
            if between is not None:  # the helpers judge first, then the change, then the batch
                names = sorted(p.name.removesuffix(".kg.lock") for p in root.glob("*.kg.lock"))
                proc.readahead.start(names, proc._attempt_bases)
                for future in list(proc.readahead._pending.values()):
                    future.result(timeout=120)
                between(paths)
                patch.setattr(proc.readahead, "start", lambda names, bases=None: None)
            outcomes = proc.process_pending()
            flush_views(proc, force=True)
        finally:
            proc.close()
    return {
        "outcomes": [(o.agent, o.status, o.attempt, o.seq, [p.to_dict() for p in o.problems]) for o in outcomes],
        "events": paths.events.read_bytes(),
        "ledger": ledger_bytes(paths),
        "json": paths.kg_json.read_bytes(),
        "trig": paths.kg_trig.read_bytes(),
        "retries": {p.name: p.read_bytes() for p in sorted(root.glob("*.retry-instructions.json"))},
        "archive": sorted(p.name for p in paths.archive.iterdir()) if paths.archive.is_dir() else [],
        "adopted": adopted,
    }


def _both_ways(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, stage: Callable[[SessionPaths], None],
               between: Callable[[SessionPaths], None] | None = None) -> tuple[dict[str, Any], dict[str, Any]]:
    session = create_session(tmp_path / "helpers", "How do agents merge?", "test-mission")
    stage(session)
    copy = tmp_path / "alone" / session.root.name
    shutil.copytree(session.root, copy)
    got = _run(session.root, monkeypatch, helpers=True, between=between)
    want = _run(copy, monkeypatch, helpers=False, between=between)
    for key in ("outcomes", "events", "ledger", "json", "trig", "retries", "archive"):
        assert got[key] == want[key], key
    assert want["adopted"] == []
    return got, want


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
        write_artifacts(session, "alone-a", _alone("alone-a", sha))
        write_artifacts(session, "alone-b", _alone("alone-b", sha, priority="high"))
        # names a committed agent's sub-question: alone, the helper could not resolve it (kept as written)
        write_artifacts(session, "names-plan", _alone("names-plan", sha, sub_question_id="planner:Q1"))
        plain = _alone("no-locator", sha)
        plain["sources.json"]["sources"][0].pop("url")  # a source nobody can locate again: a SHACL warning
        plain["sources.json"]["sources"][0].pop("content_sha256")
        write_artifacts(session, "no-locator", plain)
        citing = _alone("citing", sha)  # cites another agent of the batch: judged here
        citing["claims.json"]["claims"].append(sample_claim("C2", "alone-a:S1", QUOTE))
        write_artifacts(session, "citing", citing)
        write_artifacts(session, "misquoted", _alone("misquoted", sha, priority="high") | {"claims.json": {
            "claims": [sample_claim("C1", "S1", "merged under one namespace", priority="high")]}})

    got, _ = _both_ways(tmp_path, monkeypatch, stage)
    assert sorted(got["adopted"]) == ["alone-a", "alone-b", "no-locator"]
    statuses = {agent: status for agent, status, *_ in got["outcomes"]}
    assert statuses == {"alone-a": "merged", "alone-b": "merged", "citing": "merged", "misquoted": "rejected",
                        "names-plan": "merged", "no-locator": "merged"}
    warnings = next(problems for agent, _, _, _, problems in got["outcomes"] if agent == "no-locator")
    assert any(p["rule"].startswith("shacl.") for p in warnings)  # the helper's SHACL warning, as judged here


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

    got, _ = _both_ways(tmp_path, monkeypatch, stage)
    assert got["adopted"] == []
    assert {agent: status for agent, status, *_ in got["outcomes"]} == {"aaa": "merged", "bbb": "merged"}


def test_a_text_replaced_after_the_helper_judged_is_checked_here(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    def stage(session: SessionPaths) -> None:
        sha = store_text(session, TEXT)
        write_artifacts(session, "alone-a", _alone("alone-a", sha, priority="high"))

    def corrupt(session: SessionPaths) -> None:
        for path in session.sources.glob("*.txt"):
            path.write_text(TEXT.replace("52", "25"), encoding="utf-8")  # same size, another sha256
            os.utime(path, ns=(1, 1))  # an old file: judged at once, not waited for

    got, _ = _both_ways(tmp_path, monkeypatch, stage, between=corrupt)
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
        write_artifacts(session, "again", _alone("again", sha))
        write_artifacts(session, "other", _alone("other", sha))

    got, _ = _both_ways(tmp_path, monkeypatch, stage)
    assert sorted(got["adopted"]) == ["again", "other"]
    assert {agent: attempt for agent, _, attempt, *_ in got["outcomes"]} == {"again": 2, "other": 1}


def test_a_later_agent_citing_an_adopted_one_is_validated_with_its_graph(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """The adopted agent's graph was never installed here: the citing agent's SHACL check installs it."""
    def stage(session: SessionPaths) -> None:
        sha = store_text(session, TEXT)
        write_artifacts(session, "aaa", _alone("aaa", sha))
        write_artifacts(session, "zzz", {"claims.json": {"claims": [
            sample_claim("C9", "aaa:S1", QUOTE, priority="high")]}})

    got, _ = _both_ways(tmp_path, monkeypatch, stage)
    assert got["adopted"] == ["aaa"]
    assert {agent: status for agent, status, *_ in got["outcomes"]} == {"aaa": "merged", "zzz": "merged"}


def test_a_helper_that_fails_changes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def stage(session: SessionPaths) -> None:
        sha = store_text(session, TEXT)
        for agent in ("alone-a", "alone-b"):
            write_artifacts(session, agent, _alone(agent, sha))

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("the helper pool is broken")

    monkeypatch.setattr(readahead.ReadAhead, "_ensure_pool", broken)
    got, _ = _both_ways(tmp_path, monkeypatch, stage)
    assert got["adopted"] == []
    assert {status for _, status, *_ in got["outcomes"]} == {"merged"}
