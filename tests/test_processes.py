"""Agent process groups: Ctrl-C, SIGTERM and timeouts leave no process behind, and runs end "interrupted"."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from orchestrator.run.processes import group_alive, still_running, stop_group, write_record
from tests.test_runner import _definitions, _docs, _mission

SPAWNER = """#!/usr/bin/env bash
# an agent that starts a helper process of its own, then works for a long time
sleep 300 &
echo $! > "{pids}/child-$$"
echo $$ > "{pids}/leader-$$"
trap '' TERM   # a stubborn agent: ignores SIGTERM, so only SIGKILL of the group stops it
sleep 300
"""


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_bytes().rsplit(b")", 1)[1].split()[0]
    except OSError:
        return False
    return state != b"Z"


def _spawner(tmp_path: Path) -> tuple[Path, Path]:
    pids = tmp_path / "pids"
    pids.mkdir()
    script = tmp_path / "spawner.sh"
    script.write_text(SPAWNER.format(pids=pids))
    return script, pids


def _wait_for_files(folder: Path, count: int, timeout: float = 30) -> list[int]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = [p for p in folder.iterdir() if p.read_text().strip()]
        if len(found) >= count:
            return [int(p.read_text()) for p in found]
        time.sleep(0.05)
    raise AssertionError(f"no {count} pid files in {folder}")


#: Starts what follows with Ctrl-C ignored, as a script's background job is: Python then installs no handler.
IGNORING_CTRL_C = [sys.executable, "-c", "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_IGN); "
                   "os.execv(sys.executable, [sys.executable, *sys.argv[1:]])"]


@pytest.mark.parametrize(("sig", "started_ignoring"), [
    (signal.SIGINT, False),
    pytest.param(signal.SIGTERM, False, marks=pytest.mark.slow),  # the slow group (CI runs it) keeps the
    pytest.param(signal.SIGINT, True, marks=pytest.mark.slow),    # everyday suite under 10 minutes
])
def test_interrupting_a_run_stops_every_agent_process_and_marks_the_session_interrupted(
    tmp_path: Path, sig: signal.Signals, started_ignoring: bool
) -> None:
    script, pids = _spawner(tmp_path)
    defs = _definitions(tmp_path / "defs", planner_cmd=["bash", str(script)])
    sessions = tmp_path / "sessions"
    env = {**os.environ, "CCONDUCTOR_SESSIONS_DIR": str(sessions)}
    python = IGNORING_CTRL_C if started_ignoring else [sys.executable]
    cmd = [*python, "-m", "orchestrator.cli", "run", "How fast is the cache?", "--mission",
           str(_mission(tmp_path)), "--agents-dir", str(defs), "--backend", "offline",
           "--input-dir", str(_docs(tmp_path)), "--quiet"]
    process = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        agent_pids = _wait_for_files(pids, 2)
        process.send_signal(sig)
        _out, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 130, err
    assert "Traceback" not in err
    [root] = list(sessions.iterdir())
    assert f"cconductor resume {root.name}" in err
    session = json.loads((root / "session.json").read_text())
    assert session["status"] == "interrupted"
    assert f"cconductor resume {root.name}" in session["status_reason"]
    assert not [pid for pid in agent_pids if _alive(pid)], "agent processes survived the interrupt"


def test_a_timed_out_agent_loses_its_children_too(tmp_path: Path) -> None:
    from orchestrator.run.executor import Job, LocalExecutor

    script, pids = _spawner(tmp_path)
    executor = LocalExecutor(max_parallel=1, terminate_grace=0.5)
    executor.submit(Job("j1", "slow", ("bash", str(script)), str(tmp_path), str(tmp_path / "log"), 1.0,
                        pid_file=str(tmp_path / "slow.pid.json")))
    agent_pids = _wait_for_files(pids, 2)
    results = executor.wait(timeout=30)
    assert [r.status for r in results] == ["timed_out"]
    assert not [pid for pid in agent_pids if _alive(pid)]
    assert not (tmp_path / "slow.pid.json").exists()


def test_children_left_by_an_agent_that_exited_are_stopped(tmp_path: Path) -> None:
    from orchestrator.run.executor import Job, LocalExecutor

    marker = tmp_path / "orphan"
    executor = LocalExecutor(max_parallel=1, terminate_grace=0.5)
    executor.submit(Job("j1", "leaver", ("bash", "-c", f"sleep 300 & echo $! > {marker}; exit 0"), str(tmp_path),
                        str(tmp_path / "log"), 30.0))
    results = executor.wait(timeout=30)
    assert [r.status for r in results] == ["succeeded"]
    assert not _alive(int(marker.read_text()))


def test_a_recorded_agent_process_that_still_lives_is_found_and_stopped(tmp_path: Path) -> None:
    orphan = subprocess.Popen(["sleep", "300"], start_new_session=True)
    record = tmp_path / "pids" / "agent.json"
    try:
        write_record(record, orphan.pid, "agent-1")
        assert still_running(record) is not None
        stop_group(orphan.pid, grace=0.5)
        orphan.wait(timeout=10)
        assert not group_alive(orphan.pid)
        assert still_running(record) is None and not record.exists(), "a dead agent's record is dropped"
    finally:
        if orphan.poll() is None:
            orphan.kill()
