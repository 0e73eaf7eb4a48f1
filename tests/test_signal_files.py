"""The files named after an agent (retry instructions, ``.kg.lock.error``) for any lock name, and leftovers.

A lock's name can be as long as the file system allows (255 bytes, UTF-8: 247 ASCII characters, 123 of 2 bytes
or 61 of 4 bytes before ``.kg.lock``); every file derived from it must still be written, under the name the console
prints. A ``.kg.lock.error`` folder left from earlier (not the processor's: it writes files) must
neither break a later merge nor make ``status`` or ``validate`` report a rejection that was retried.
"""

from __future__ import annotations

import json
import re
import subprocess
from typing import Any

import pytest

from orchestrator.model.layout import SessionPaths
from tests.conftest import cconductor, merge_pending
from tests.helpers.agent_writer import write_agent


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*cconductor(), *args], capture_output=True, text=True, timeout=300)


def status(session: SessionPaths) -> dict[str, Any]:
    result = run("status", str(session.root), "--json")
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


@pytest.mark.parametrize("length", [65, 200, 222, 231, 240, 247])
def test_a_lock_name_of_any_length_gets_the_retry_instructions_the_console_names(
    session: SessionPaths, length: int
) -> None:
    name = "a" * length
    folder = session.agent_artifacts(name)
    folder.mkdir(parents=True)
    (folder / "notes.json").write_text('{"x": 1}')
    session.lock(name).touch()
    result = run("process", str(session.root))
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    named = re.search(r"see (\S+)", result.stdout)
    assert named, result.stdout
    instructions = session.root / named.group(1)
    assert instructions.is_file(), f"the console names {named.group(1)}, which was not written"
    assert json.loads(instructions.read_text())["error_class"] == "agent_name"
    assert len(instructions.name.encode()) <= 255
    errored = [p for p in session.root.iterdir() if p.name.endswith(".kg.lock.error")]
    assert len(errored) == 1 and errored[0].is_file()
    assert not session.lock(name).exists()
    assert [p.name for p in session.root.glob(".*.tmp")] == [], "a temporary file was left behind"
    assert not (session.state / "internal-errors.log").exists()


def test_a_leftover_error_folder_neither_breaks_a_merge_nor_reads_as_a_rejection(session: SessionPaths) -> None:
    stale = session.lock_error("agent-x")
    stale.mkdir()
    (stale / "note.txt").write_text("someone's copy")
    write_agent(session.root, "agent-x", claims=1)
    assert merge_pending(session) == {"agent-x": "merged"}
    events = [json.loads(line)["type"] for line in session.events.read_text().splitlines()]
    assert "merge.committed" in events and "processor.agent_failed" not in events
    assert not (session.state / "internal-errors.log").exists()
    info = status(session)
    assert info["locks_errored"] == [] and info["agents"]["agent-x"]["state"] == "merged"
    result = run("validate", str(session.root))
    assert result.returncode == 0, result.stdout
    assert "lock.errored" not in result.stdout and "WARNING" not in result.stdout


def test_an_empty_leftover_error_folder_is_removed_by_the_merge(session: SessionPaths) -> None:
    session.lock_error("agent-y").mkdir()
    write_agent(session.root, "agent-y", claims=1)
    assert merge_pending(session) == {"agent-y": "merged"}
    assert not session.lock_error("agent-y").exists()


def test_a_rejection_retried_successfully_is_no_longer_errored_and_a_current_one_is(session: SessionPaths) -> None:
    write_agent(session.root, "fixed", claims=1, lock=False)
    claims = session.agent_artifacts("fixed") / "claims.json"
    good = claims.read_text()
    claims.write_text('{"claims": [{"id": "C1"}]}')
    session.lock("fixed").touch()
    write_agent(session.root, "broken", claims=1, lock=False)
    (session.agent_artifacts("broken") / "claims.json").write_text('{"claims": [{"id": "C1"}]}')
    session.lock("broken").touch()
    assert merge_pending(session) == {"fixed": "rejected", "broken": "rejected"}
    assert status(session)["locks_errored"] == ["broken", "fixed"]
    claims.write_text(good)
    result = run("retry", str(session.root), "fixed")
    assert result.returncode == 0, result.stdout + result.stderr
    assert status(session)["locks_errored"] == ["broken"]
    session.lock_error("fixed").write_text("")  # a stale signal restored by hand: the ledger says merged
    assert status(session)["locks_errored"] == ["broken"]
    validated = run("validate", str(session.root))
    assert "broken.kg.lock.error" in validated.stdout and "fixed.kg.lock.error" not in validated.stdout


#: Lock names in characters of 1 to 4 UTF-8 bytes, at and around the file system's 255-byte limit (247 bytes
#: before ``.kg.lock``): file-name limits count bytes, not characters.
MULTIBYTE_NAMES = {
    "é*115": "é" * 115, "é*116": "é" * 116, "é*120": "é" * 120, "é*123": "é" * 123, "aé*123": "a" + "é" * 123,
    "中*78": "中" * 78, "中*82": "中" * 82, "a中*82": "a" + "中" * 82,
    "😀*58": "😀" * 58, "😀*61": "😀" * 61, "aaa😀*61": "aaa" + "😀" * 61, "mixed": "a" + "é中😀" * 27,
}


def test_lock_names_of_multibyte_characters_keep_their_lock_and_instructions(session: SessionPaths) -> None:
    """Every lock of a name up to 255 bytes, whatever its characters, is rejected with the retry instructions
    the console names and a ``.kg.lock.error``; nothing is lost (one processor run handles them all)."""
    for name in MULTIBYTE_NAMES.values():
        assert len((name + ".kg.lock").encode()) <= 255
        session.lock(name).touch()
    result = run("process", str(session.root))
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    named = re.findall(r"see (\S+\.retry-instructions\.json)", result.stdout)
    assert len(named) == len(MULTIBYTE_NAMES), result.stdout
    for name in named:
        assert len(name.encode()) <= 255, (len(name.encode()), name, result.stdout)
        instructions = session.root / name
        assert instructions.is_file(), f"the console names {name}, which was not written"
        assert json.loads(instructions.read_text())["error_class"] == "agent_name"
    errored = [p for p in session.root.iterdir() if p.name.endswith(".kg.lock.error")]
    assert len(errored) == len(MULTIBYTE_NAMES) and all(p.is_file() for p in errored)
    assert not [p for p in session.root.iterdir() if p.name.endswith(".kg.lock")]
    assert [p.name for p in session.root.glob(".*.tmp")] == []
    events = session.events.read_text(encoding="utf-8")
    assert "processor.agent_failed" not in events and "File name too long" not in events
    assert not (session.state / "internal-errors.log").exists()
    assert sorted(status(session)["locks_errored"]) == sorted(MULTIBYTE_NAMES.values())  # each one says so


@pytest.mark.parametrize("name", list(MULTIBYTE_NAMES.values()), ids=list(MULTIBYTE_NAMES))
def test_every_file_named_after_an_agent_fits_in_255_bytes(name: str, tmp_path: Any) -> None:
    from orchestrator.model.layout import ERROR_SUFFIX, RETRY_SUFFIX, clip_name, fitting_name
    from orchestrator.session.atomic import atomic_write_bytes

    short = fitting_name(name)
    assert (short == name) == (len(name.encode()) + len(RETRY_SUFFIX) <= 255)
    for suffix in (RETRY_SUFFIX, ERROR_SUFFIX, ".pending.json"):
        assert len((short + suffix).encode()) <= 255
    assert fitting_name(name + "x") != short  # unique: the hash of the whole name
    assert name.startswith(clip_name(name, 100)) and len(clip_name(name, 100).encode()) <= 100
    target = tmp_path / (short + RETRY_SUFFIX)
    atomic_write_bytes(target, b"{}")  # its temporary file's name fits too
    assert target.read_bytes() == b"{}"
