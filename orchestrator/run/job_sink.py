"""The orchestrator side of a remote agent job: write its returned files into the session, lock last.

The orchestrator is the single writer of the session folder. Every returned file is written
atomically (temp name, then rename), appended logs are appended under the events mutex, and
only then is ``<agent>.kg.lock`` created, by this process, on its own disk: the watcher and
the pipeline see exactly what a local agent would have left. Landing is idempotent: a result
whose job already landed, or whose agent already has a lock waiting, changes nothing.
"""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath

from filelock import FileLock

from orchestrator.model.layout import STATE_DIR_NAME, SessionPaths
from orchestrator.run.executor import Job, JobResult
from orchestrator.run.jobs import AgentResult
from orchestrator.session.atomic import atomic_write_bytes

#: What an agent stores in sources/: texts, figure images and table cells (docs/data-model.md#documents).
STORED_SUFFIXES = (".txt", ".png", ".json")


class UnsafeResultPath(ValueError):
    """A returned file would land outside the places an agent may write."""


def _destination(paths: SessionPaths, agent: str, rel: str) -> Path:
    parts = PurePosixPath(rel).parts
    if rel.startswith("/") or ".." in parts or not parts:
        raise UnsafeResultPath(f"{agent}: returned file {rel!r} is not a relative path inside the session")
    allowed = (
        (parts[:2] == ("artifacts", agent) and len(parts) > 2)
        or (parts[0] == "sources" and len(parts) == 2 and parts[1].endswith(STORED_SUFFIXES))
        or (parts[:2] == (STATE_DIR_NAME, "failures") and len(parts) == 3 and parts[2].startswith(f"{agent}-"))
    )
    if not allowed:
        raise UnsafeResultPath(f"{agent}: returned file {rel!r} is outside artifacts/{agent}/, sources/ "
                               "and its failure record")
    return paths.root.joinpath(*parts)


def _mutex(paths: SessionPaths, name: str) -> Path:
    """The mutex the agents' own writers take for that file."""
    return paths.events_mutex if name == "events.jsonl" else paths.state / "costs.mutex"


def _append(paths: SessionPaths, name: str, data: bytes) -> None:
    if not data:
        return
    if not data.endswith(b"\n"):
        data += b"\n"
    with FileLock(_mutex(paths, name)):
        fd = os.open(paths.root / name, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o644)
        try:
            os.write(fd, data)
        finally:
            os.close(fd)


def create_lock(paths: SessionPaths, agent: str) -> None:
    lock = paths.lock(agent)
    tmp = lock.with_name(f".{lock.name}.tmp")
    tmp.touch()
    os.replace(tmp, lock)


def land(paths: SessionPaths, job: Job, result: AgentResult) -> JobResult:
    """Write ``result`` for the local ``job`` into the session; the lock, if the agent made one, comes last."""
    files = {_destination(paths, result.agent, rel): data for rel, data in result.files.items()}
    outcome = JobResult(job.job_id, job.agent, result.status, result.exit_code, result.duration_seconds,
                        job.log_path, result.message)
    if paths.lock(result.agent).exists():
        return outcome  # an earlier copy of this job already landed and waits to be processed
    atomic_write_bytes(Path(job.log_path), result.log + f"\n[ran on {result.worker}]\n".encode(), durable=False)
    for target, data in files.items():
        if target.parent.name == "sources" and target.exists():
            continue  # named by its content's hash: already the same text
        atomic_write_bytes(target, data)
    for name, data in result.appends.items():
        if name in ("events.jsonl", "costs.jsonl"):
            _append(paths, name, data)
    if result.locked:
        create_lock(paths, result.agent)
    return outcome
