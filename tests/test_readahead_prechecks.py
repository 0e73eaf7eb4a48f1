"""The read-ahead helper's text checks: used only while the text's file is unchanged, and judged the same."""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path
from typing import Any

import pytest

from orchestrator.commit import readahead
from orchestrator.commit.ahead import precheck
from orchestrator.commit.processor import Processor
from orchestrator.contract.artifacts import read_artifact_set
from orchestrator.contract.schemas import SchemaRegistry
from orchestrator.contract.sourcetexts import TextStore, source_text_problems
from orchestrator.graph import evidence
from orchestrator.model import clock
from orchestrator.model.layout import SessionPaths
from orchestrator.session.record import create_session
from tests.conftest import sample_claim, sample_source, store_text, write_artifacts

TEXT = ("Page one. Knowledge graphs merged under per-agent namespaces keep every contribution apart, "
        "and 52 percent of merges needed no retry.\fPage two. The ledger did not lose a record.")


def _submit(session: SessionPaths, agent: str, sha: str, snippets: list[tuple[str, int]]) -> None:
    claims = [sample_claim(f"C{n}", "S1", snippet, evidence=[{"source_id": "S1", "snippet": snippet,
                                                              "locator": {"page": page}}])
              for n, (snippet, page) in enumerate(snippets)]
    write_artifacts(session, agent, {
        "sources.json": {"sources": [sample_source("S1", url=f"https://x.org/{agent}", content_sha256=sha)]},
        "claims.json": {"claims": claims}}, lock=False)


FIXED = dt.datetime(2026, 1, 2, 3, 4, 5, 678000, tzinfo=dt.UTC)
SNIPPETS = [("merged under per-agent namespaces keep every contribution apart", 1),
            ("52 percent of merges needed no retry", 1),
            ("25 percent of merges needed no retry", 1),  # a wrong number: not verified
            ("The ledger did not lose a record", 1),  # on page 2, not the cited page 1
            ("The ledger lost a record", 2)]  # a dropped negation


def _judge(root: Path, monkeypatch: pytest.MonkeyPatch, *, helper: bool,
           between: Any = None) -> tuple[list[Any], dict[str, Any], int]:
    """Outcomes, records and how many snippets this process verified itself."""
    session = SessionPaths(root)
    names = sorted(p.name for p in session.artifacts.iterdir())
    calls = []
    verify = evidence.verify_snippet

    def counting(*args: Any, **kwargs: Any) -> Any:
        calls.append(args[0])
        return verify(*args, **kwargs)

    with monkeypatch.context() as patch:
        patch.setattr(readahead, "MIN_BATCH", 1 if helper else 10_000)
        patch.setattr(readahead, "WAIT", 60.0)
        patch.setattr(clock, "utc_now", lambda: FIXED)
        proc = Processor(session)
        try:
            proc.readahead.start(names)
            if helper:
                for name in names:
                    proc.readahead._pending[name].result(timeout=60)
            if between:
                between(session)
            patch.setattr(evidence, "verify_snippet", counting)
            patch.setattr(proc.readahead, "start", lambda names, bases=None: None)  # judge on the reads made above
            for name in names:
                session.lock(name).touch()
            outcomes = proc.process_pending()
            records = {n: proc.state.records.get(n) for n in names}
        finally:
            proc.close()
    return [(o.agent, o.status, [p.to_dict() for p in o.problems]) for o in outcomes], records, len(calls)


def _twin_sessions(tmp_path: Path) -> tuple[Path, Path]:
    roots = []
    for copy in ("with-helper", "without"):
        session = create_session(tmp_path / copy, "How do agents merge?", "test-mission")
        sha = store_text(session, TEXT)
        _submit(session, "alpha", sha, SNIPPETS)
        _submit(session, "beta", sha, SNIPPETS[:2])
        roots.append(session.root)
    return roots[0], roots[1]


def test_the_helpers_verifications_are_the_judgings_own(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with_helper, without = _twin_sessions(tmp_path)
    got, got_records, verified_here = _judge(with_helper, monkeypatch, helper=True)
    want, want_records, verified_alone = _judge(without, monkeypatch, helper=False)
    assert got == want
    assert got_records == want_records
    assert verified_alone == len(SNIPPETS) + 2
    assert verified_here == 0
    verifications = [e["verification"] for c in got_records["alpha"]["contribution"]["items"]["claims"]
                     for e in c["evidence"]]
    assert [v["verified"] for v in verifications] == [True, True, False, False, False]


def test_a_text_changed_after_the_helper_read_it_is_checked_again(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    with_helper, without = _twin_sessions(tmp_path)

    def corrupt(session: SessionPaths) -> None:
        for path in session.sources.glob("*.txt"):
            path.write_text(TEXT.replace("52", "25"), encoding="utf-8")  # same size, another sha256
            os.utime(path, ns=(1, 1))  # an old file: judged at once, not waited for

    got, got_records, verified_here = _judge(with_helper, monkeypatch, helper=True, between=corrupt)
    want, want_records, _ = _judge(without, monkeypatch, helper=False, between=corrupt)
    assert got == want
    assert got_records == want_records
    assert {status for _, status, _ in got} == {"rejected"}
    assert any(p["rule"] == "source_text.invalid" for _, _, problems in got for p in problems)
    assert verified_here == 0


def test_prechecks_vouch_only_for_usable_texts_and_only_under_their_key(session: SessionPaths) -> None:
    sha = store_text(session, TEXT)
    missing = "0" * 64
    write_artifacts(session, "gamma", {
        "sources.json": {"sources": [sample_source("S1", url="https://x.org/1", content_sha256=sha),
                                     sample_source("S2", url="https://x.org/2", content_sha256=missing)]},
        "claims.json": {"claims": [sample_claim("C1", "S1", SNIPPETS[0][0]),
                                   sample_claim("C2", "S2", SNIPPETS[1][0]),
                                   sample_claim("C3", "alpha:S1", SNIPPETS[1][0])]}}, lock=False)
    artifact_set = read_artifact_set(session, "gamma", SchemaRegistry.default(), ())
    texts = TextStore(session)
    found = precheck(artifact_set, texts, 90.0)
    assert set(found.texts) == {sha}
    # another agent's source is resolved by the merge, which the helper does not do: checked when judged
    assert {key[:3] for key in found.verifications} == {(SNIPPETS[0][0], sha, 1)}
    assert source_text_problems(artifact_set, texts, found.texts)[0].pointer == "/sources/1/content_sha256"
    checked_before = found.verification(texts, 90.0)
    assert checked_before(SNIPPETS[0][0], sha, 1) == found.verifications[(SNIPPETS[0][0], sha, 1, 90.0)]
    assert found.verification(texts, 80.0)(SNIPPETS[0][0], sha, 1) is None  # another threshold
    assert checked_before(SNIPPETS[0][0], sha, 2) is None
    session.source_text(sha).unlink()  # gone since: nothing is taken as checked
    assert checked_before(SNIPPETS[0][0], sha, 1) is None
    problems = source_text_problems(artifact_set, texts, found.texts)
    assert [p.pointer for p in problems] == ["/sources/0/content_sha256", "/sources/1/content_sha256"]


def test_a_watchers_batches_use_the_helpers_from_its_first_wave(session: SessionPaths,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(readahead, "MIN_BATCH", 5)
    ahead = readahead.ReadAhead(session, lambda agent: (), 90.0, "s")
    try:
        ahead.start(["a", "b"])
        assert ahead._pool is None  # a one-shot run's small batch: no helper
        ahead.expect_bursts(2)
        ahead.start(["a"])
        assert ahead._pool is None
        ahead.start(["a", "b"])
        assert ahead._pool is not None and set(ahead._pending) == {"a", "b"}
    finally:
        ahead.close()
    assert ahead._pool is None
    watching = readahead.ReadAhead(session, lambda agent: (), 90.0, "s")
    try:
        watching.expect_bursts(now=True)  # `cconductor watch`: started before any lock
        assert watching._pool is not None and not watching._pending
    finally:
        watching.close()
