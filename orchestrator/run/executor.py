"""Running agent jobs: an engine-neutral interface and the local process executor.

A :class:`Job` is plain data (argv, working folder, limits, where the log and heartbeat
go) and results come back as files in the session folder, so a distributed engine can
take over by implementing :class:`Executor` as one adapter: nothing else changes.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import IO, Any, Protocol

from orchestrator.run.processes import group_alive, write_record

TERMINATE_GRACE_SECONDS = 5.0


@dataclass(frozen=True)
class Job:
    job_id: str
    agent: str
    argv: tuple[str, ...]
    cwd: str
    log_path: str
    timeout_seconds: float
    heartbeat_path: str | None = None
    heartbeat_timeout_seconds: float | None = None
    env: dict[str, str] = field(default_factory=dict)
    #: Where the local executor records the running process group (see orchestrator/processes.py).
    pid_file: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class JobResult:
    job_id: str
    agent: str
    status: str  # succeeded | failed | timed_out | stalled | cancelled
    exit_code: int | None
    duration_seconds: float
    log_path: str
    message: str

    @property
    def ok(self) -> bool:
        return self.status == "succeeded"


class Executor(Protocol):
    """Submit jobs; collect results as they finish."""

    max_parallel: int

    def submit(self, job: Job) -> None: ...

    def wait(self, timeout: float | None = None) -> list[JobResult]:
        """Block until at least one job finishes (or ``timeout``); return finished jobs."""
        ...

    def pending(self) -> int:
        """Jobs submitted and not yet returned by :meth:`wait`."""
        ...

    def cancel_all(self) -> list[JobResult]: ...


@dataclass
class _Running:
    job: Job
    process: subprocess.Popen[bytes]
    log: IO[bytes]
    started: float
    terminating_since: float | None = None
    reason: str | None = None


class LocalExecutor:
    """Runs each job as a child process, at most ``max_parallel`` at a time.

    A job past its timeout, or whose heartbeat file stops changing, gets SIGTERM and,
    after a grace period, SIGKILL (to its whole process group).
    """

    def __init__(
        self, max_parallel: int = 2, poll_interval: float = 0.05, terminate_grace: float = TERMINATE_GRACE_SECONDS
    ):
        self.max_parallel = max(1, max_parallel)
        self.poll_interval = poll_interval
        self.terminate_grace = terminate_grace
        self._queue: list[Job] = []
        self._running: dict[str, _Running] = {}
        self._done: list[JobResult] = []

    def submit(self, job: Job) -> None:
        self._queue.append(job)
        self._start_queued()

    def pending(self) -> int:
        return len(self._queue) + len(self._running) + len(self._done)

    def _start_queued(self) -> None:
        while self._queue and len(self._running) < self.max_parallel:
            job = self._queue.pop(0)
            Path(job.log_path).parent.mkdir(parents=True, exist_ok=True)
            log = open(job.log_path, "ab")  # noqa: SIM115 - closed when the job ends
            env = {**os.environ, **job.env}
            try:
                process = subprocess.Popen(
                    list(job.argv), cwd=job.cwd, env=env, stdout=log, stderr=subprocess.STDOUT,
                    stdin=subprocess.DEVNULL, start_new_session=True,
                )
            except OSError as exc:
                log.close()
                self._done.append(JobResult(job.job_id, job.agent, "failed", None, 0.0, job.log_path,
                                            f"could not start {job.argv[0]!r}: {exc}"))
                continue
            self._running[job.job_id] = _Running(job, process, log, time.monotonic())
            if job.pid_file:
                write_record(Path(job.pid_file), process.pid, job.job_id)

    def _signal(self, run: _Running, sig: int) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(run.process.pid, sig)

    def _check(self, run: _Running, now: float) -> JobResult | None:
        code = run.process.poll()
        if code is not None:
            if group_alive(run.process.pid):
                # the leader is gone but its children live on: they are part of the agent, stop them too
                if run.terminating_since is None:
                    run.terminating_since = now
                    self._signal(run, signal.SIGTERM)
                elif now - run.terminating_since > self.terminate_grace:
                    self._signal(run, signal.SIGKILL)
                return None
            if run.job.pid_file:
                with contextlib.suppress(OSError):
                    os.unlink(run.job.pid_file)
            run.log.close()
            duration = now - run.started
            if run.reason:
                status, message = run.reason, f"{run.reason.replace('_', ' ')} after {duration:.1f}s"
            elif code == 0:
                status, message = "succeeded", "exited 0"
            else:
                status, message = "failed", f"exited with code {code}"
            return JobResult(run.job.job_id, run.job.agent, status, code, round(duration, 3), run.job.log_path, message)
        if run.terminating_since is not None:
            if now - run.terminating_since > self.terminate_grace:
                self._signal(run, signal.SIGKILL)
            return None
        if now - run.started > run.job.timeout_seconds:
            run.reason = "timed_out"
        elif run.job.heartbeat_path and run.job.heartbeat_timeout_seconds:
            try:
                age = time.time() - os.stat(run.job.heartbeat_path).st_mtime
            except FileNotFoundError:
                age = now - run.started
            if age > run.job.heartbeat_timeout_seconds:
                run.reason = "stalled"
        if run.reason:
            run.terminating_since = now
            self._signal(run, signal.SIGTERM)
        return None

    def wait(self, timeout: float | None = None) -> list[JobResult]:
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            now = time.monotonic()
            for job_id, run in list(self._running.items()):
                result = self._check(run, now)
                if result is not None:
                    del self._running[job_id]
                    self._done.append(result)
            self._start_queued()
            if self._done or (not self._running and not self._queue):
                done, self._done = self._done, []
                return done
            if deadline is not None and now >= deadline:
                return []
            time.sleep(self.poll_interval)

    def cancel_all(self) -> list[JobResult]:
        self._queue.clear()
        for run in self._running.values():
            run.reason = "cancelled"
            run.terminating_since = time.monotonic()
            self._signal(run, signal.SIGTERM)
        results: list[JobResult] = []
        while self._running:
            results += self.wait(timeout=self.terminate_grace + 1)
        return results
