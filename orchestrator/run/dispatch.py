"""Turning an agent instance into a task file and an executor job, and a failed job into feedback.

The task file is the whole contract with the agent process: what to do, the inputs,
and on a retry the previous attempt's retry instructions (:func:`build_task` is pure). Previous attempts' files are
moved aside (never deleted) so each attempt's artifact set is exactly what it wrote.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from orchestrator.commit import locks
from orchestrator.commit.retry import build_retry_instructions
from orchestrator.model.clock import iso_timestamp
from orchestrator.model.layout import SessionPaths
from orchestrator.model.problems import Problem
from orchestrator.run.config import RunOptions
from orchestrator.run.definitions import AgentDefinition
from orchestrator.run.executor import Job, JobResult
from orchestrator.run.missions import Mission
from orchestrator.session.atomic import atomic_write_json

HEARTBEAT_TIMEOUT_SECONDS = 120.0


#: Retry instructions larger than this are not read back (the orchestrator writes far smaller ones).
MAX_RETRY_FILE_BYTES = 1024 * 1024


def task_path(paths: SessionPaths, agent: str, attempt: int) -> Path:
    return paths.tasks / f"{agent}-{attempt}.json"


def log_path(paths: SessionPaths, agent: str, attempt: int) -> Path:
    return paths.logs / f"{agent}-{attempt}.log"


def pid_path(paths: SessionPaths, agent: str) -> Path:
    return paths.state / "pids" / f"{agent}.json"


def heartbeat_path(paths: SessionPaths, agent: str) -> Path:
    return paths.state / "heartbeats" / f"{agent}.heartbeat"


def set_aside_previous_attempt(paths: SessionPaths, agent: str, attempt: int, *, restarted: bool = False) -> None:
    """Move the last attempt's files out of the artifact folder so a retry starts clean.

    A ``restarted`` attempt (cut off by an interrupted run before it submitted) leaves what it had
    written as ``<agent>-<attempt>-interrupted``, so the judged attempt before it keeps its files.
    """
    folder = paths.agent_artifacts(agent)
    if (attempt <= 1 and not restarted) or not folder.is_dir() or not any(folder.iterdir()):
        return
    name = f"{agent}-{attempt}-interrupted" if restarted else f"{agent}-{attempt - 1}"
    target = paths.state / "attempts" / name
    if target.exists():
        shutil.rmtree(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    os.replace(folder, target)
    folder.mkdir()
    locks.drop_for_new_attempt(paths, agent)


def build_task(
    paths: SessionPaths,
    agent: str,
    definition: AgentDefinition,
    instance: Mapping[str, Any],
    *,
    mission: Mission,
    options: RunOptions,
    query: str,
    questions: Mapping[str, dict[str, Any]],
    retry: dict[str, Any] | None,
    budget_usd: float,
    spent_usd: float,
    created_at: str,
) -> dict[str, Any]:
    """The task file of ``instance``'s current attempt (``instance["attempts"]``)."""
    return {
        "agent": agent,
        "definition": definition.name,
        "attempt": instance["attempts"],
        "max_attempts": mission.constraints.max_attempts_per_agent,
        "session": str(paths.root),
        "query": query,
        "mission": mission.name,
        "objective": mission.objective,
        "phase": definition.phase,
        "iteration": instance["iteration"],
        "backend": options.backend,
        "sub_questions": [questions[q] for q in instance["sub_question_ids"] if q in questions],
        "required_files": list(definition.required_files),
        "required_sections": list(mission.success_criteria.required_sections),
        "inputs": {
            "input_dirs": list(options.input_dirs),
            "libraries": list(options.libraries),
            "include_notes": options.include_notes,
            "graph": str(paths.kg_json),
        },
        "retry_instructions": retry,
        "options": {
            "evidence_threshold": options.evidence_threshold,
            "max_claims_per_question": 6,
            "depth": instance["iteration"],
            "budget_usd": budget_usd,
            "budget_usd_remaining": round(max(0.0, budget_usd - spent_usd), 6),
            "describe_figures": options.describe_figures,
        },
        "heartbeat_path": str(heartbeat_path(paths, agent)),
        "created_at": created_at,
    }


def write_task(paths: SessionPaths, task: dict[str, Any]) -> Path:
    """Write the task after checking it against schemas/task.schema.json: it is a public contract."""
    from orchestrator.contract.schemas import SchemaRegistry

    target = task_path(paths, task["agent"], task["attempt"])
    problems = SchemaRegistry.default().validate_document("task", task, paths.rel(target))
    if problems:
        raise AssertionError("the orchestrator built an invalid task: " + "; ".join(p.render() for p in problems))
    atomic_write_json(target, task)
    return target


def build_job(
    paths: SessionPaths,
    task: dict[str, Any],
    task_file: Path,
    command: tuple[str, ...],
    timeout_seconds: float,
) -> Job:
    agent, attempt = task["agent"], task["attempt"]
    if command:
        argv = tuple(a.replace("{session}", str(paths.root)).replace("{task}", str(task_file)) for a in command)
    else:
        argv = (sys.executable, "-m", "agents", "--task", str(task_file))
    repo_root = str(Path(__file__).resolve().parents[2])
    python_path = os.pathsep.join(p for p in (repo_root, os.environ.get("PYTHONPATH", "")) if p)
    return Job(
        job_id=f"{agent}-{attempt}",
        agent=agent,
        argv=argv,
        cwd=str(paths.root),
        log_path=str(log_path(paths, agent, attempt)),
        timeout_seconds=timeout_seconds,
        heartbeat_path=str(heartbeat_path(paths, agent)) if not command else None,
        heartbeat_timeout_seconds=HEARTBEAT_TIMEOUT_SECONDS if not command else None,
        env={"CCONDUCTOR_SESSION": str(paths.root), "CCONDUCTOR_TASK": str(task_file),
             "CCONDUCTOR_TIMEOUT_SECONDS": str(timeout_seconds), "PYTHONPATH": python_path},
        pid_file=str(pid_path(paths, agent)),
    )


def _log_tail(path: str, lines: int = 15) -> str:
    try:
        text = Path(path).read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return ""
    return "\n".join(text.splitlines()[-lines:])


def failure_instructions(
    paths: SessionPaths, result: JobResult, attempt: int, max_attempts: int
) -> dict[str, Any]:
    """Retry instructions for a process that crashed, timed out or never signalled."""
    agent = result.agent
    tail = _log_tail(result.log_path)
    reasons = {
        "timed_out": "the agent process was stopped because it ran past its timeout",
        "stalled": "the agent process was stopped because its heartbeat stopped",
        "failed": f"the agent process {result.message}",
        "succeeded": "the agent process exited without creating its lock file",
        "cancelled": "the agent process was cancelled",
    }
    message = f"{reasons.get(result.status, result.message)} and produced no artifact set to merge"
    problem = Problem(
        paths.rel(Path(result.log_path)), "", f"process.{result.status}", message,
        f"finish within the time limit, write the artifacts into artifacts/{agent}/ and create "
        f"{agent}.kg.lock last; the log's last lines are in details",
        details={"log_tail": tail, "exit_code": result.exit_code, "duration_seconds": result.duration_seconds},
    )
    instructions = build_retry_instructions(agent, attempt, max_attempts, [problem], {})
    instructions["error_class"] = "internal"
    atomic_write_json(paths.retry_instructions(agent), instructions)
    return instructions


def read_retry_instructions(paths: SessionPaths, agent: str) -> dict[str, Any] | None:
    """The agent's retry instructions, or None when absent or not readable as a JSON object (never raises)."""
    from orchestrator.contract.safe_read import UnsafeFile, read_agent_file

    try:
        raw = read_agent_file(paths.root, paths.retry_instructions(agent), MAX_RETRY_FILE_BYTES)
        data = json.loads(raw.decode("utf-8")) if len(raw) <= MAX_RETRY_FILE_BYTES else None
    except (UnsafeFile, ValueError, RecursionError):
        return None
    return data if isinstance(data, dict) else None


def now() -> str:
    return iso_timestamp()
