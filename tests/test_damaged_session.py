"""Damaged session files and file-system surprises: one line that names the file and the fix, never a traceback."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from orchestrator.model.layout import SessionPaths
from tests.conftest import cconductor
from tests.helpers.agent_writer import write_agent
from tests.helpers.watching import wait_for

Damage = Callable[[SessionPaths], None]


def _write(path: Path, text: str) -> None:
    path.write_text(text)


def _manifest(change: Callable[[dict], object]) -> Damage:
    def damage(paths: SessionPaths) -> None:
        data = json.loads(paths.session_json.read_text())
        replaced = change(data)
        paths.session_json.write_text(json.dumps(data if replaced is None else replaced))

    return damage


def _replace_with_folder(path_of: Callable[[SessionPaths], Path]) -> Damage:
    def damage(paths: SessionPaths) -> None:
        target = path_of(paths)
        if target.is_dir():
            shutil.rmtree(target)
        elif target.exists():
            target.unlink()
        target.mkdir()
        (target / "inside").write_text("x")

    return damage


def _replace_with_file(path_of: Callable[[SessionPaths], Path]) -> Damage:
    def damage(paths: SessionPaths) -> None:
        target = path_of(paths)
        if target.is_dir():
            shutil.rmtree(target)
        target.write_text("not what belongs here")

    return damage


CASES: dict[str, tuple[Damage, str]] = {
    "session.json is an array": (lambda p: _write(p.session_json, "[1, 2]"), "session.json must hold a JSON object"),
    "session.json is a string": (lambda p: _write(p.session_json, '"x"'), "session.json must hold a JSON object"),
    "session.json is truncated": (lambda p: _write(p.session_json, '{"id": "x", '), "session.json is not valid JSON"),
    "session.json id is null": (_manifest(lambda d: d.update(id=None)), "session.json: /id is null"),
    "session.json query is null": (_manifest(lambda d: d.update(query=None)), "session.json: /query is null"),
    "session.json agents is null": (_manifest(lambda d: d.update(agents=None)), "session.json: /agents is null"),
    "session.json agent entry is null": (
        _manifest(lambda d: d.update(agents={"a": None})), "session.json: /agents/a is null"),
    "session.json is a folder": (_replace_with_folder(lambda p: p.session_json), "session.json is not a file"),
    "state folder missing": (lambda p: shutil.rmtree(p.state), ".cconductor is missing"),
    "state folder is a file": (_replace_with_file(lambda p: p.state), ".cconductor is not a folder"),
    "ledger missing": (lambda p: p.store_db.unlink(), "store.sqlite3 is missing or not a file"),
    "mutex is a folder": (_replace_with_folder(lambda p: p.mutex), "kg.mutex is not a file"),
    "session mutex is a folder": (_replace_with_folder(lambda p: p.session_mutex), "session.mutex is not a file"),
    "archive is a file": (_replace_with_file(lambda p: p.archive), "archive is not a folder"),
    "knowledge-graph.json is a folder": (
        _replace_with_folder(lambda p: p.kg_json), "knowledge-graph.json is not a file"),
    "knowledge-graph.trig is a folder": (
        _replace_with_folder(lambda p: p.kg_trig), "knowledge-graph.trig is not a file"),
}


@pytest.mark.parametrize("command", ["process", "status", "validate"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_a_damaged_session_gets_one_line_naming_the_file(session: SessionPaths, case: str, command: str) -> None:
    damage, expected = CASES[case]
    session_id = session.root.name
    damage(session)
    result = subprocess.run([*cconductor(), command, str(session.root)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 2, (case, result.stdout, result.stderr)
    assert "Traceback" not in result.stderr + result.stdout
    assert expected in result.stderr, result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    if case != "state folder missing":  # nothing was silently re-created or re-based
        assert not (session.root / session_id).exists()


def test_a_truncated_view_is_rebuilt_from_the_ledger_without_asking(session: SessionPaths) -> None:
    write_agent(session.root, "agent-a")
    assert subprocess.run([*cconductor(), "process", str(session.root)], capture_output=True).returncode == 0
    whole = json.loads(session.kg_json.read_text())
    session.kg_json.write_text(session.kg_json.read_text()[:100])
    session.kg_trig.write_text("")
    result = subprocess.run([*cconductor(), "process", str(session.root)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    rebuilt = json.loads(session.kg_json.read_text())
    assert rebuilt["agent-a"] == whole["agent-a"] and rebuilt["stats"] == whole["stats"]
    assert "agent-a" in session.kg_trig.read_text()


def _watch(session: SessionPaths) -> subprocess.Popen[str]:
    watcher = subprocess.Popen(
        [*cconductor(), "watch", str(session.root), "--rescan-interval", "0.2"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    wait_for(lambda: session.events.exists() and "watch.started" in session.events.read_text(), "the watcher")
    return watcher


@pytest.mark.parametrize("how", ["deleted", "renamed"])
def test_the_watcher_stops_cleanly_when_its_session_folder_goes(session: SessionPaths, how: str) -> None:
    watcher = _watch(session)
    try:
        moved = session.root.with_name(session.root.name + "-moved")
        if how == "deleted":  # as `rm -r` would: again if the watcher wrote a file while it was being deleted
            for _ in range(20):
                try:
                    shutil.rmtree(session.root)
                    break
                except OSError:
                    time.sleep(0.05)
        else:
            os.rename(session.root, moved)
        _, err = watcher.communicate(timeout=30)
    finally:
        if watcher.poll() is None:
            watcher.kill()
    assert watcher.returncode == 1
    assert "was deleted or renamed; the watcher stopped and wrote nothing" in err
    assert "Traceback" not in err
    assert not session.root.exists(), "the watcher re-created the session folder"
    if how == "renamed":
        assert sorted(p.name for p in moved.iterdir()) == sorted(
            ["artifacts", "sources", ".cconductor", "session.json", "events.jsonl"]
        )


def test_the_watcher_survives_events_jsonl_replaced_by_a_folder(session: SessionPaths) -> None:
    watcher = _watch(session)
    try:
        session.events.unlink()
        session.events.mkdir()
        write_agent(session.root, "survivor")
        wait_for(lambda: not session.lock("survivor").exists() and session.kg_json.exists()
                 and "survivor" in json.loads(session.kg_json.read_text()), "the agent to merge")
        assert watcher.poll() is None, "the watcher died"
        watcher.send_signal(signal.SIGINT)
        _, err = watcher.communicate(timeout=30)
    finally:
        if watcher.poll() is None:
            watcher.kill()
    assert "Traceback" not in err
    assert "cannot write" in err and "events.jsonl" in err
    assert err.count("cannot write") == 1, "the damaged audit trail is reported once, not per event"
    time.sleep(0)


def test_a_session_folder_deleted_while_a_batch_is_committed_stays_deleted(session: SessionPaths) -> None:
    """Deleted between a batch's judging and its outcomes (retry instructions, session.json, events, views):
    nothing is written any more and the folder is not re-created."""
    from orchestrator.commit.processor import Processor
    from orchestrator.commit.watcher import Watcher
    from orchestrator.model.errors import SessionGone
    from tests.helpers.agent_writer import write_agent

    write_agent(session.root, "good", claims=1)
    write_agent(session.root, "bad", claims=1, lock=False)
    (session.agent_artifacts("bad") / "claims.json").write_text('{"claims": [{"id": "C1"}]}')
    session.lock("bad").touch()
    processor = Processor(session)

    def delete_after_judging(event: dict[str, Any]) -> None:
        if event["type"] == "validation.completed" and session.root.exists():
            shutil.rmtree(session.root)

    processor.events.subscribe(delete_after_judging)
    try:
        with pytest.raises(SessionGone, match="the watcher stopped and wrote nothing"):
            Watcher(processor, rescan_interval=3600).run()
    finally:
        processor.close()
    assert not session.root.exists(), "the session folder was re-created"
