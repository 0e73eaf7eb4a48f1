"""The lock life-cycle (pending -> claimed -> consumed | errored) and per-agent isolation in one-shot processing."""

from __future__ import annotations

import json
import os
import subprocess
from typing import Any

import pytest

from orchestrator.commit import checks, judging, locks
from orchestrator.commit import processor as processor_module
from orchestrator.commit.processor import Processor
from orchestrator.commit.views import flush_views
from orchestrator.model.layout import SessionPaths
from orchestrator.session.events import read_events
from orchestrator.session.ledger import Ledger
from tests.conftest import cconductor
from tests.helpers.agent_writer import write_agent


def _write_version(session: SessionPaths, agent: str, marker: str) -> None:
    folder = session.agent_artifacts(agent)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "notes.json").write_text(json.dumps({"notes": {"version": marker}}))


def _namespace(session: SessionPaths, agent: str) -> Any:
    return json.loads(session.kg_json.read_text())[agent]


def test_a_new_version_locked_while_the_old_one_is_being_committed_is_merged_next(
    session: SessionPaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    _write_version(session, "writer", "v1")
    session.lock("writer").touch()
    real_commit = Ledger.commit

    def commit_then_resubmit(self: Ledger, entries: list[Any]) -> list[int]:
        seqs = real_commit(self, entries)
        if not (session.root / "v2-written").exists():  # the agent writes v2 and locks it right now
            (session.root / "v2-written").touch()
            _write_version(session, "writer", "v2")
            session.lock("writer").touch()
        return seqs

    monkeypatch.setattr(Ledger, "commit", commit_then_resubmit)
    processor = Processor(session)
    try:
        first = processor.process_pending()
        assert [(o.agent, o.status) for o in first] == [("writer", "merged")]
        assert session.lock("writer").exists(), "the new submission's lock was dropped with the old one's"
        second = processor.process_pending()
        assert [(o.agent, o.status) for o in second] == [("writer", "merged")]
    finally:
        processor.close()
    from orchestrator.commit.views import flush_views

    processor = Processor(session)
    flush_views(processor, force=True)
    processor.close()
    assert _namespace(session, "writer")["notes"] == {"version": "v2"}
    assert locks.waiting(session) == []


def test_a_claimed_lock_left_by_a_crash_is_processed_by_the_next_processor(session: SessionPaths) -> None:
    _write_version(session, "crashed", "v1")
    session.lock("crashed").touch()
    assert locks.claim(session, "crashed")
    assert not session.lock("crashed").exists() and locks.waiting(session) == ["crashed"]
    processor = Processor(session)
    try:
        assert [(o.agent, o.status) for o in processor.process_pending()] == [("crashed", "merged")]
    finally:
        processor.close()
    assert locks.waiting(session) == [] and not locks.claim_path(session, "crashed").exists()


def test_a_kill_between_the_claims_link_and_unlink_leaves_nothing_waiting_after_the_next_sweep(
        session: SessionPaths) -> None:
    _write_version(session, "halfway", "v1")
    session.lock("halfway").touch()
    locks.claim_path(session, "halfway").parent.mkdir(exist_ok=True)
    os.link(session.lock("halfway"), locks.claim_path(session, "halfway"))  # killed before the unlink
    processor = Processor(session)
    try:
        assert [(o.agent, o.status) for o in processor.process_pending()] == [("halfway", "merged")]
    finally:
        processor.close()
    assert locks.waiting(session) == [] and not session.lock("halfway").exists()


def test_a_rejected_claim_becomes_the_error_lock_and_a_lock_made_meanwhile_stays_pending(
    session: SessionPaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = session.agent_artifacts("flaky")
    folder.mkdir()
    (folder / "claims.json").write_text("{not json")
    session.lock("flaky").touch()
    real = judging.read_artifact_set

    def read_then_relock(*args: Any, **kwargs: Any) -> Any:
        result = real(*args, **kwargs)
        session.lock("flaky").touch()  # the agent signals again while its old files are judged
        return result

    monkeypatch.setattr(judging, "read_artifact_set", read_then_relock)
    processor = Processor(session)
    try:
        assert [o.status for o in processor.process_pending()] == ["rejected"]
    finally:
        processor.close()
    assert session.lock_error("flaky").exists()
    assert session.lock("flaky").exists(), "the newer signal is kept for the next sweep"


def test_an_exception_for_one_agent_rejects_it_and_merges_the_bystander_in_the_same_batch(
    session: SessionPaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_agent(session.root, "bystander")
    write_agent(session.root, "victim")
    real = checks.build_contribution

    def failing_for_victim(agent: str, *args: Any, **kwargs: Any) -> Any:
        if agent == "victim":
            raise KeyError("simulated bug")
        return real(agent, *args, **kwargs)

    monkeypatch.setattr(checks, "build_contribution", failing_for_victim)
    processor = Processor(session)
    try:
        outcomes = {o.agent: o for o in processor.process_pending()}
    finally:
        processor.close()
    assert outcomes["bystander"].status == "merged"
    assert outcomes["victim"].status == "rejected"
    assert [p.rule for p in outcomes["victim"].problems] == ["internal.error"]
    instructions = json.loads(session.retry_instructions("victim").read_text())
    assert instructions["files"][0]["problems"][0]["rule"] == "internal.error"
    assert session.lock_error("victim").exists()


def test_an_exception_while_applying_an_outcome_is_finished_by_the_next_batch(
    session: SessionPaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_agent(session.root, "archived")
    write_agent(session.root, "other")
    real = processor_module.settle_outcome
    failed: list[str] = []

    def failing_once(paths: SessionPaths, staged: Any, **kwargs: Any) -> None:
        if staged.agent == "archived" and not failed:
            failed.append("archived")
            raise OSError(28, "No space left on device")
        real(paths, staged, **kwargs)

    monkeypatch.setattr(processor_module, "settle_outcome", failing_once)
    processor = Processor(session)
    try:
        statuses = {o.agent: o.status for o in processor.process_pending()}
        assert statuses == {"archived": "merged", "other": "merged"}
        assert processor.failures and "archived" in processor.failures[0]
        assert locks.waiting(session) == ["archived"], "the committed agent's claim waits to be finished"
        assert [(o.agent, o.status) for o in processor.process_pending()] == [("archived", "noop")]
    finally:
        processor.close()
    assert locks.waiting(session) == []


@pytest.mark.parametrize("agent", ["../x", "a/b", "..", "X" * 3, "a" * 65, "stats"])
def test_retry_refuses_agent_names_that_are_not_agent_names(session: SessionPaths, agent: str) -> None:
    result = subprocess.run([*cconductor(), "retry", str(session.root), agent], capture_output=True, text=True)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "Traceback" not in result.stderr and "agent name" in result.stderr
    assert not (session.root.parent / "x.kg.lock").exists()
    assert locks.waiting(session) == []


def test_an_unwritable_retry_file_still_ends_the_submission_as_errored(session: SessionPaths) -> None:
    folder = session.agent_artifacts("broken")
    folder.mkdir()
    (folder / "claims.json").write_text("{not json")
    session.retry_instructions("broken").mkdir()  # where the instructions should go
    session.lock("broken").touch()
    processor = Processor(session)
    try:
        assert [o.status for o in processor.process_pending()] == ["rejected"]
        assert processor.notices and "broken.retry-instructions.json is a folder" in processor.notices[0]
        assert processor.process_pending() == [], "the rejection is not judged again and again"
    finally:
        processor.close()
    assert session.lock_error("broken").exists() and locks.waiting(session) == []


def test_an_archive_that_cannot_be_written_does_not_hold_the_lock(session: SessionPaths) -> None:
    session.archive.mkdir(parents=True, exist_ok=True)
    session.archive.rmdir()
    session.archive.write_text("a file where the archive folder belongs")
    write_agent(session.root, "keeper")
    processor = Processor(session)
    try:
        assert [o.status for o in processor.process_pending()] == ["merged"]
        assert flush_views(processor)  # the archive is written with the views: its failure stops neither
    finally:
        processor.close()
    assert locks.waiting(session) == []
    assert any(e["type"] == "archive.failed" for e in read_events(session.events))
    assert "keeper" in json.loads(session.kg_json.read_text(encoding="utf-8"))
