"""The run's progress view: a live table on a terminal, plain lines otherwise, JSON lines on request."""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[1] / "docs"
QUESTION = "How are artifacts validated?"


def _command(tmp_path: Path, *extra: str) -> tuple[list[str], dict[str, str]]:
    env = {**os.environ, "CCONDUCTOR_SESSIONS_DIR": str(tmp_path / "sessions"), "COLUMNS": "140", "TERM": "xterm"}
    command = [sys.executable, "-m", "orchestrator.cli", "run", QUESTION, "--input-dir", str(DOCS),
               "--mission", "general-research", *extra]
    return command, env


@pytest.mark.slow  # a whole run: the slow group (CI runs it) keeps the everyday suite under 10 min
def test_a_terminal_gets_the_live_table(tmp_path: Path) -> None:
    command, env = _command(tmp_path)
    leader, follower = os.openpty()
    process = subprocess.Popen(command, stdin=follower, stdout=follower, stderr=follower, env=env, close_fds=True)
    os.close(follower)
    output = b""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        ready, _, _ = select.select([leader], [], [], 0.5)
        if ready:
            try:
                chunk = os.read(leader, 65536)
            except OSError:
                break
            if not chunk:
                break
            output += chunk
        elif process.poll() is not None:
            break
    process.wait(timeout=30)
    os.close(leader)
    text = output.decode(errors="replace")
    assert process.returncode == 0, text[-2000:]
    assert "phase" in text and "iteration" in text and "claims" in text  # the table's title line
    assert "merged" in text and "research-planner" in text  # agent rows with their state
    assert "\x1b[" in text  # drawn with terminal control sequences
    assert "report:" in text


@pytest.mark.slow  # a whole run: the slow group (CI runs it) keeps the everyday suite under 10 min
def test_a_pipe_gets_plain_lines(tmp_path: Path) -> None:
    command, env = _command(tmp_path)
    out = subprocess.run(command, capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert any(line.startswith("[") and "merged as commit" in line for line in lines)
    assert "\x1b[" not in out.stdout


@pytest.mark.slow  # a whole run: the slow group (CI runs it) keeps the everyday suite under 10 min
def test_json_mode_prints_one_event_per_line(tmp_path: Path) -> None:
    command, env = _command(tmp_path, "--json")
    out = subprocess.run(command, capture_output=True, text=True, env=env, timeout=120)
    events = [json.loads(line) for line in out.stdout.splitlines()]
    assert {"timestamp", "type", "message", "data"} <= set(events[0])
    assert events[-1]["type"] == "run.result" and events[-1]["report"].endswith("mission-report.md")


def test_quiet_mode_prints_only_the_answer_and_the_result(tmp_path: Path) -> None:
    command, env = _command(tmp_path, "--quiet")
    out = subprocess.run(command, capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0
    lines = out.stdout.splitlines()
    assert [line.split(":")[0] for line in lines[:4]] == ["answer", "status", "session", "report"]
    assert len(lines) == 5 and lines[4].strip().endswith("mission-report.html")


@pytest.mark.parametrize("width", [80, 120])
def test_the_live_view_fits_the_terminal_and_keeps_the_event_timeline(tmp_path: Path, width: int) -> None:
    import io

    from rich.console import Console

    from orchestrator.run.progress import LiveProgress

    out = io.StringIO()
    console = Console(file=out, width=width, force_terminal=True, color_system=None)
    view = LiveProgress(tmp_path, console, start=False)
    long_reason = "success criteria not met: " + "; ".join(f"criterion {n} is far from its target" for n in range(9))
    agents = [f"academic-researcher-i{i}-{j}" for i in range(1, 4) for j in range(1, 6)]
    for name in agents:
        view({"type": "agent.dispatched", "message": f"{name}: attempt 1 started",
              "data": {"agent": name, "attempt": 1}})
        view({"type": "merge.committed", "message": f"{name}: attempt 1 merged as commit 3",
              "data": {"agent": name, "attempt": 1}})
    view({"type": "run.finished", "message": f"run finished: partial ({long_reason})", "data": {}})
    console.print(view._render())
    lines = out.getvalue().splitlines()
    assert max(len(line) for line in lines) <= width, "a line is wider than the terminal"
    assert lines[0].startswith("phase -") and len([line for line in lines if "academic-researcher-i" in line]) >= 15
    timeline = [line for line in lines if line.lstrip().startswith("[")]
    assert len(timeline) == LiveProgress.TIMELINE and "run finished: partial" in timeline[-1]
    assert timeline[-1].endswith("…"), "a long event is cut with an ellipsis, not wrapped"


def test_plain_lines_show_each_warning_on_a_line_of_its_own() -> None:
    import io

    from orchestrator.run.progress import PlainProgress

    out = io.StringIO()
    view = PlainProgress(out)
    view({"type": "merge.committed", "message": "researcher: attempt 1 merged as commit 4", "data": {"warnings": [
        {"file": "artifacts/researcher/claims.json", "pointer": "/claims/0/sub_question_id",
         "message": "names sub-question 'Q9',\n which is not in any plan.json", "severity": "warning"},
        {"file": "artifacts/researcher/claims.json", "pointer": "/claims/1",
         "message": "has only one source", "severity": "warning"}]}})
    view({"type": "research.stopped", "message": "research stopped: iteration limit reached", "data": {}})
    lines = out.getvalue().splitlines()
    assert lines[1] == ("  warning: artifacts/researcher/claims.json /claims/0/sub_question_id: names sub-question "
                        "'Q9', which is not in any plan.json")
    assert lines[2] == "  warning: artifacts/researcher/claims.json /claims/1: has only one source"
    assert lines[3].endswith("research stopped: iteration limit reached")
