"""The orchestration loop driving external agents (a shell script, a stdlib Python script).

Real processes through the LocalExecutor, real pipeline; these agents are what any
third-party program following docs/agent-protocol.md looks like.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from orchestrator.run.missions import load_mission
from orchestrator.run.runner import MissionRunner, RunOptions
from orchestrator.session.events import read_events
from orchestrator.session.record import create_session, load_session

AGENTS = Path(__file__).resolve().parent / "data" / "external_agents"


def _definitions(folder: Path, researcher_cmd: list[str] | None = None, planner_cmd: list[str] | None = None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "script-planner.json").write_text(
        json.dumps(
            {
                "name": "script-planner",
                "description": "plans in shell",
                "phase": "planning",
                "required_files": ["plan.json"],
                "timeout_seconds": 60,
                "command": planner_cmd or ["bash", str(AGENTS / "planner.sh"), "{session}", "{task}"],
            }
        )
    )
    (folder / "script-researcher.json").write_text(
        json.dumps(
            {
                "name": "script-researcher",
                "description": "researches in plain Python",
                "phase": "research",
                "required_files": ["claims.json", "completion.json"],
                "timeout_seconds": 60,
                "command": researcher_cmd or [sys.executable, str(AGENTS / "researcher.py"), "{session}", "{task}"],
            }
        )
    )
    return folder


def _mission(folder: Path, **constraints: Any) -> Path:
    mission = {
        "name": "script-mission",
        "description": "external agents",
        "objective": "test the loop",
        "phases": {
            "planning": ["script-planner"],
            "ingestion": [],
            "research": ["script-researcher"],
            "fact_check": [],
            "synthesis": [],
        },
        "success_criteria": {
            "confidence_threshold": 0.5,
            "min_sources": 1,
            "min_peer_reviewed_sources": 0,
            "all_claims_cited": True,
            "min_quality_score": 0,
            "min_verified_evidence_ratio": 0.5,
            "required_sections": ["Key Findings"],
        },
        "constraints": {
            "max_iterations": 1,
            "max_minutes": 5,
            "max_agent_invocations": 20,
            "budget_usd": 1,
            "max_attempts_per_agent": 3,
            "agent_timeout_seconds": 60,
            **constraints,
        },
        "output": {"formats": ["markdown", "html", "bibtex", "csl-json"], "citation_style": "numbered"},
    }
    path = folder / "script-mission.json"
    path.write_text(json.dumps(mission))
    return path


def _run(tmp_path: Path, defs: Path, mission: Path) -> tuple[dict[str, Any], Path]:
    paths = create_session(tmp_path / "sessions", "How fast is the cache?", "script-mission")
    runner = MissionRunner(paths, load_mission(str(mission)), RunOptions(agent_dirs=(str(defs),), max_parallel=2))
    return runner.run(), paths.root


def _docs(tmp_path: Path) -> Path:
    """A folder with one document, so the run's input check passes (these agents read none)."""
    folder = tmp_path / "docs"
    folder.mkdir(exist_ok=True)
    (folder / "notes.md").write_text("# Cache notes\n\nThe cache is fast.")
    return folder


def _events(root: Path, kind: str) -> list[dict[str, Any]]:
    return [e for e in read_events(root / "events.jsonl") if e["type"] == kind]


def test_external_agents_complete_a_mission_after_a_corrected_retry(tmp_path: Path) -> None:
    result, root = _run(tmp_path, _definitions(tmp_path / "defs"), _mission(tmp_path))
    assert result["status"] == "completed", result
    rejected = _events(root, "merge.rejected")
    assert {e["data"]["agent"] for e in rejected} == {"script-researcher-i1-1", "script-researcher-i1-2"}
    assert all(e["data"]["attempt"] == 1 and e["data"]["error_class"] == "shacl" for e in rejected)
    committed = {e["data"]["agent"]: e["data"]["attempt"] for e in _events(root, "merge.committed")}
    assert committed == {"script-planner": 1, "script-researcher-i1-1": 2, "script-researcher-i1-2": 2}
    retry_task = json.loads((root / "tasks" / "script-researcher-i1-1-2.json").read_text())
    message = retry_task["retry_instructions"]["shacl_violations"][0]["message"]
    assert "script-researcher-i1-1:C1" in message and "latency was 12 ms on average" in message
    graph = json.loads((root / "knowledge-graph.json").read_text())
    assert all(e["verification"]["verified"] for c in graph["claims"] for e in c["evidence"])
    assert (root / ".cconductor" / "attempts" / "script-researcher-i1-1-1" / "claims.json").exists()
    report = (root / "mission-report.md").read_text()
    assert "Cache design notes" in report
    session = load_session(type("P", (), {"session_json": root / "session.json", "root": root})())  # type: ignore[arg-type]
    assert session["status"] == "completed" and session["run"]["invocations"] == 5


def test_an_agent_past_its_timeout_is_killed_and_retried_and_the_run_fails_honestly(tmp_path: Path) -> None:
    defs = _definitions(tmp_path / "defs", planner_cmd=["bash", "-c", "sleep 30"])
    started = time.monotonic()
    result, root = _run(tmp_path, defs, _mission(tmp_path, agent_timeout_seconds=0.5, max_attempts_per_agent=2))
    assert time.monotonic() - started < 30
    assert result["status"] == "failed" and "planner" in result["reason"]
    finished = _events(root, "agent.finished")
    assert [e["data"]["status"] for e in finished] == ["timed_out", "timed_out"]
    assert _events(root, "agent.gave_up")[0]["data"]["attempts"] == 2
    retry = json.loads((root / "tasks" / "script-planner-2.json").read_text())["retry_instructions"]
    assert retry["files"][0]["problems"][0]["rule"] == "process.timed_out"


def test_invocation_budget_ends_the_run_as_budget_exhausted(tmp_path: Path) -> None:
    result, root = _run(tmp_path, _definitions(tmp_path / "defs"), _mission(tmp_path, max_agent_invocations=2))
    assert result["status"] == "budget_exhausted" and "invocations" in result["reason"]
    assert (root / "mission-report.md").exists()


def test_an_agent_that_writes_nothing_is_retried_with_instructions(tmp_path: Path) -> None:
    defs = _definitions(tmp_path / "defs", planner_cmd=["bash", "-c", "echo thinking; exit 0"])
    result, root = _run(tmp_path, defs, _mission(tmp_path, max_attempts_per_agent=2))
    assert result["status"] == "failed"
    retry = json.loads((root / "tasks" / "script-planner-2.json").read_text())["retry_instructions"]
    problem = retry["files"][0]["problems"][0]
    assert problem["rule"] == "process.succeeded" and "without creating its lock" in problem["message"]
    assert "thinking" in problem["details"]["log_tail"]


@pytest.mark.slow  # a whole run: the slow group (CI runs it) keeps the everyday suite under 10 min
def test_resume_after_kill_finishes_the_run_and_a_second_resume_is_harmless(tmp_path: Path) -> None:
    slow = tmp_path / "slow-researcher.sh"
    slow.write_text(f'#!/usr/bin/env bash\nsleep 1\nexec {sys.executable} {AGENTS / "researcher.py"} "$@"\n')
    defs = _definitions(tmp_path / "defs", researcher_cmd=["bash", str(slow), "{session}", "{task}"])
    mission = _mission(tmp_path)
    sessions = tmp_path / "sessions"
    env = {**os.environ, "CCONDUCTOR_SESSIONS_DIR": str(sessions)}
    cmd = [
        sys.executable,
        "-m",
        "orchestrator.cli",
        "run",
        "How fast is the cache?",
        "--mission",
        str(mission),
        "--agents-dir",
        str(defs),
        "--backend",
        "offline",
        "--input-dir",
        str(_docs(tmp_path)),
        "--quiet",
    ]
    process = subprocess.Popen(cmd, env=env, start_new_session=True)
    deadline = time.monotonic() + 30
    root = None
    while time.monotonic() < deadline:
        found = list(sessions.glob("*/events.jsonl")) if sessions.exists() else []
        if found and any(
            e["type"] == "agent.dispatched" and "researcher" in e["data"]["agent"] for e in read_events(found[0])
        ):
            root = found[0].parent
            break
        time.sleep(0.05)
    assert root is not None, "the run never dispatched a researcher"
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    assert load_session(type("P", (), {"session_json": root / "session.json"})())["status"] == "running"  # type: ignore[arg-type]
    resume = [sys.executable, "-m", "orchestrator.cli", "resume", str(root), "--json"]
    first = subprocess.run(resume, env=env, capture_output=True, text=True, timeout=120)
    assert first.returncode == 0, first.stderr
    lines = [json.loads(line) for line in first.stdout.splitlines()]
    assert lines[0]["type"] == "run.resumed" and lines[-1]["type"] == "run.result"
    assert lines[-1]["status"] == "completed"
    # the log numbers attempts as the pipeline judges them: each merge is the attempt last announced, and an
    # attempt the kill cut off before it submitted is started again under its own number
    announced: dict[str, int] = {}
    for event in read_events(root / "events.jsonl"):
        agent = event["data"].get("agent")
        if event["type"] == "agent.dispatched":
            if event["data"]["attempt"] == announced.get(agent):
                assert "started again" in event["message"], event["message"]
            announced[agent] = event["data"]["attempt"]
        elif event["type"] == "merge.committed" and agent in announced:
            assert event["data"]["attempt"] == announced[agent], event["message"]
    invocations = json.loads((root / "session.json").read_text())["run"]["invocations"]
    second = subprocess.run(resume, env=env, capture_output=True, text=True, timeout=120)
    assert second.returncode == 0 and json.loads(second.stdout.splitlines()[-1])["status"] == "completed"
    assert json.loads((root / "session.json").read_text())["run"]["invocations"] == invocations


@pytest.mark.parametrize("backend", ["anthropic"])
def test_anthropic_backend_without_a_key_fails_at_once(tmp_path: Path, backend: str) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "orchestrator.cli", "run", "q", "--backend", backend],
        capture_output=True,
        text=True,
        timeout=30,
        env={**os.environ, "CCONDUCTOR_SESSIONS_DIR": str(tmp_path)},
    )
    assert out.returncode == 2 and "ANTHROPIC_API_KEY" in out.stderr
    assert not any(tmp_path.iterdir())


def test_an_attempt_cut_off_before_it_submitted_is_started_again_under_its_number() -> None:
    from orchestrator.run.checkpoint import settle_running

    instances = {"cut": {"state": "running", "attempts": 2}, "judged": {"state": "running", "attempts": 2},
                 "merged": {"state": "running", "attempts": 1}}
    agents = {"cut": {"attempts": 1, "state": "rejected"}, "judged": {"attempts": 2, "state": "rejected"},
              "merged": {"attempts": 1, "state": "merged"}}
    settle_running(instances, {}, agents)
    assert instances["cut"] == {"state": "retry", "attempts": 1, "restarted": True}  # the next dispatch is 2 again
    assert instances["judged"] == {"state": "retry", "attempts": 2}  # its attempt 2 was judged: the next is 3
    assert instances["merged"]["state"] == "merged"
