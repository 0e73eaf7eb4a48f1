"""The worker side of an :class:`~orchestrator.run.jobs.AgentJob`: run the agent in a scratch folder, return its files.

This is the function a Dask worker (or any other engine) calls. It never touches the session
folder: the inputs arrive as bytes keyed by content hash, the agent runs as a local process
(with the local executor's timeout, heartbeat and process-group handling) inside a fresh
scratch folder laid out like a session, and every file the agent produced comes back by value.
The scratch folder is removed afterwards, so running a job twice is harmless (idempotent).
"""

from __future__ import annotations

import json
import shutil
import socket
import tempfile
import time
from collections.abc import Callable, Mapping
from pathlib import Path

from orchestrator.model.layout import LOCK_SUFFIX, STATE_DIR_NAME
from orchestrator.run.executor import Job, JobResult, LocalExecutor
from orchestrator.run.jobs import AgentJob, AgentResult, scratch_path, sha256_bytes, worker_pythonpath

#: Files an agent appends to in the session; their new bytes come back and are appended there.
APPENDED = ("events.jsonl", "costs.jsonl")
#: More than this in one result is refused (an agent's artifacts are capped at 4 MiB; texts at 8 MiB each).
MAX_RESULT_BYTES = 256 * 1024 * 1024
LOG_TAIL_BYTES = 1024 * 1024


class BlobMismatch(RuntimeError):
    """A blob's bytes do not hash to the name it was sent under (corrupted in transit or in a store)."""


def _materialise(job: AgentJob, blobs: Mapping[str, bytes], scratch: Path) -> None:
    for rel, sha in job.inputs.items():
        data = blobs[sha]
        if sha256_bytes(data) != sha:
            raise BlobMismatch(f"input {rel} of job {job.job_id} does not match its hash {sha}")
        if rel.startswith("tasks/"):  # the task names scratch paths; put this folder's real path in
            data = scratch_path(data.decode("utf-8"), scratch).encode("utf-8")
        target = scratch / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)


def _collect(job: AgentJob, scratch: Path, blobs_given: Mapping[str, bytes]) -> tuple[dict[str, bytes],
                                                                                    dict[str, bytes]]:
    files: dict[str, bytes] = {}
    folder = scratch / "artifacts" / job.agent
    if folder.is_dir():
        for path in sorted(folder.rglob("*")):
            if path.is_file() and not path.is_symlink():
                files[path.relative_to(scratch).as_posix()] = path.read_bytes()
    sources = scratch / "sources"
    if sources.is_dir():
        for path in sorted(sources.iterdir()):  # new texts, figure images and table cells
            rel = f"sources/{path.name}"
            if path.suffix in (".txt", ".png", ".json") and rel not in job.inputs and path.is_file() \
                    and not path.is_symlink():
                files[rel] = path.read_bytes()
    failure = scratch / STATE_DIR_NAME / "failures" / f"{job.agent}-{job.attempt}.json"
    if failure.is_file():
        files[failure.relative_to(scratch).as_posix()] = failure.read_bytes()
    appends = {}
    for name in APPENDED:  # only what the agent added to what it was given
        if (scratch / name).is_file():
            given = len(blobs_given[name]) if name in blobs_given else 0
            appends[name] = (scratch / name).read_bytes()[given:]
    return files, appends


def run_agent_job(
    job: AgentJob, blobs: Mapping[str, bytes], poll_interval: float = 0.05,
    should_stop: Callable[[], bool] | None = None,
) -> AgentResult:
    """Run ``job`` to the end in a scratch folder of this machine and return what it produced.

    ``should_stop`` is asked about once a second; when it says yes (the job was cancelled),
    the agent's process group is stopped as the local executor stops it.
    """
    scratch = Path(tempfile.mkdtemp(prefix=f"cconductor-{job.agent}-"))
    started = time.monotonic()
    try:
        _materialise(job, blobs, scratch)
        (scratch / "artifacts" / job.agent).mkdir(parents=True, exist_ok=True)
        state = scratch / STATE_DIR_NAME
        log = state / "job.log"
        local = Job(
            job_id=job.job_id,
            agent=job.agent,
            argv=tuple(scratch_path(a, scratch) for a in job.argv),
            cwd=str(scratch),
            log_path=str(log),
            timeout_seconds=job.timeout_seconds,
            heartbeat_path=str(state / "heartbeats" / f"{job.agent}.heartbeat")
            if job.heartbeat_timeout_seconds else None,
            heartbeat_timeout_seconds=job.heartbeat_timeout_seconds,
            env={**{k: scratch_path(v, scratch) for k, v in job.env.items()}, "PYTHONPATH": worker_pythonpath()},
        )
        executor = LocalExecutor(max_parallel=1, poll_interval=poll_interval)
        executor.submit(local)
        results: list[JobResult] = []
        while not results:
            results = executor.wait(timeout=1.0)
            if not results and should_stop is not None and should_stop():
                results = executor.cancel_all()
        outcome = results[0]
        files, appends = _collect(job, scratch, {n: blobs[job.inputs[n]] for n in APPENDED if n in job.inputs})
        size = sum(map(len, files.values())) + sum(map(len, appends.values()))
        locked = (scratch / f"{job.agent}{LOCK_SUFFIX}").exists()
        status, message = outcome.status, outcome.message
        if size > MAX_RESULT_BYTES:
            files, appends, locked = {}, {}, False
            status, message = "failed", f"the agent produced {size} bytes, over the {MAX_RESULT_BYTES}-byte limit"
        log_bytes = log.read_bytes()[-LOG_TAIL_BYTES:] if log.is_file() else b""
        return AgentResult(
            job_id=job.job_id, agent=job.agent, status=status, exit_code=outcome.exit_code,
            duration_seconds=round(time.monotonic() - started, 3), message=message, files=files,
            appends=appends, locked=locked, log=log_bytes, worker=socket.gethostname(),
        )
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def describe(result: AgentResult) -> str:
    """One line for logs and tests: what came back, without the bytes."""
    return json.dumps({"job": result.job_id, "agent": result.agent, "status": result.status,
                       "files": sorted(result.files), "locked": result.locked, "worker": result.worker})
