"""Something that is not a file where cconductor writes a rejection's signal or instructions
(``<agent>.kg.lock.error``, ``<agent>.retry-instructions.json``) or where an agent drops its lock.

Nothing there is replaced, renamed or deleted; the rejection is still recorded (ledger, status);
the user is told which path to move aside; ``cconductor retry`` refuses without using an attempt,
and after the path is moved aside the same submission is signalled without a new ledger entry.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from orchestrator.cli import main
from orchestrator.commit import locks
from orchestrator.commit.inspection import session_status
from orchestrator.commit.processor import Processor
from orchestrator.model.layout import SessionPaths
from orchestrator.session.ledger import Ledger

AGENT = "cg"


def bad_submission(session: SessionPaths) -> None:
    folder = session.agent_artifacts(AGENT)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "claims.json").write_text('{"claims": [}')
    session.lock(AGENT).touch()


def entries(session: SessionPaths) -> list[tuple[str, int]]:
    store = Ledger(session.store_db)
    try:
        return [(e["action"], e["attempt"]) for e in store.ledger()]
    finally:
        store.close()


def process(session: SessionPaths) -> Processor:
    processor = Processor(session)
    try:
        assert [o.status for o in processor.process_pending()] == ["rejected"]
    finally:
        processor.close()
    return processor


def retry(session: SessionPaths) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["retry", str(session.root), AGENT])
    return result.exit_code, result.output


def folder_with_content(path: Path) -> Callable[[], bool]:
    path.mkdir()
    (path / "f").write_text("x")
    return lambda: (path / "f").read_text() == "x"


def symlink_to_file(path: Path) -> Callable[[], bool]:
    target = path.parent / "elsewhere.txt"
    target.write_text("keep me")
    path.symlink_to(target)
    return lambda: path.is_symlink() and target.read_text() == "keep me"


def symlink_to_folder(path: Path) -> Callable[[], bool]:
    target = path.parent / "elsewhere"
    target.mkdir()
    (target / "g").write_text("keep me")
    path.symlink_to(target)
    return lambda: path.is_symlink() and (target / "g").read_text() == "keep me"


def fifo(path: Path) -> Callable[[], bool]:
    os.mkfifo(path)
    return lambda: path.is_fifo()


def unreadable_folder(path: Path) -> Callable[[], bool]:
    path.mkdir()
    (path / "f").write_text("x")
    path.chmod(0)
    return lambda: path.is_dir()


BLOCKERS = {"folder": folder_with_content, "symlink to a file": symlink_to_file,
            "symlink to a folder": symlink_to_folder, "fifo": fifo, "unreadable folder": unreadable_folder}


@pytest.mark.parametrize("kind", sorted(BLOCKERS))
def test_an_error_signal_that_is_not_a_file_is_kept_and_named_and_retry_uses_no_attempt(
    session: SessionPaths, kind: str
) -> None:
    blocker = session.lock_error(AGENT)
    intact = BLOCKERS[kind](blocker)
    try:
        bad_submission(session)
        processor = process(session)
        assert intact(), "the thing at the signal's name was changed"
        assert processor.notices and f"{blocker.name} is " in processor.notices[0] and "move" in processor.notices[0]
        assert session.retry_instructions(AGENT).is_file()
        assert locks.waiting(session) == [], "the claim is not left to be judged again"
        assert entries(session) == [("reject", 1)]
        info = session_status(session)
        assert info["agents"][AGENT]["state"] == "rejected" and info["locks_errored"] == [AGENT]

        code, output = retry(session)
        assert code == 2 and blocker.name in output and "move it aside" in output and "Traceback" not in output
        assert intact() and not session.lock(AGENT).exists()
        assert entries(session) == [("reject", 1)], "retry used an attempt"
    finally:
        if blocker.is_dir() and not blocker.is_symlink():
            blocker.chmod(0o755)
    blocker.rename(session.root / "moved-aside")
    code, output = retry(session)  # the same files: the same verdict, signalled now, no new entry
    assert code == 1 and "rejected (attempt 1)" in output, output
    assert session.lock_error(AGENT).is_file() and entries(session) == [("reject", 1)]


def test_a_lock_that_is_a_folder_is_not_resubmitted_by_retry(session: SessionPaths) -> None:
    bad_submission(session)
    process(session)
    session.lock_error(AGENT).unlink()
    intact = folder_with_content(session.lock(AGENT))
    code, output = retry(session)
    assert code == 2 and f"{AGENT}.kg.lock is a folder" in output
    assert intact() and entries(session) == [("reject", 1)]


def test_retry_instructions_that_are_a_folder_are_kept_and_named(session: SessionPaths) -> None:
    intact = folder_with_content(session.retry_instructions(AGENT))
    bad_submission(session)
    processor = process(session)
    assert intact() and session.lock_error(AGENT).is_file()
    assert any(f"{session.retry_instructions(AGENT).name} is a folder" in n for n in processor.notices)
    code, output = retry(session)
    assert code == 1 and "NOTE:" in output and "retry-instructions.json is a folder" in output
    assert entries(session) == [("reject", 1)]
    (session.retry_instructions(AGENT) / "f").unlink()
    session.retry_instructions(AGENT).rmdir()
    code, output = retry(session)
    assert code == 1 and session.retry_instructions(AGENT).is_file() and entries(session) == [("reject", 1)]
