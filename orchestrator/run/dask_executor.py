"""An :class:`~orchestrator.run.executor.Executor` that runs agent jobs on a Dask cluster.

Each local :class:`~orchestrator.run.executor.Job` is packed into a plain-data
:class:`~orchestrator.run.jobs.AgentJob` (inputs by content hash), its input bytes are scattered
to the cluster once per hash, a worker runs it with
:func:`~orchestrator.run.job_worker.run_agent_job` in a scratch folder, and the returned files
land in the session through :func:`~orchestrator.run.job_sink.land` (lock last). A job lost with
its worker is re-run by Dask, and a job whose future still fails (worker killed repeatedly,
scheduler restarted) is re-submitted here: jobs are idempotent. Caps per resource (``llm=4``)
bound how many jobs holding that resource are in flight at once. Import this module only when
Dask is wanted: it imports ``distributed``.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from concurrent.futures import CancelledError
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import distributed

from orchestrator.model.layout import SessionPaths
from orchestrator.run.dask_blobs import ScatteredBlobs
from orchestrator.run.executor import Job, JobResult
from orchestrator.run.job_sink import UnsafeResultPath, land
from orchestrator.run.job_worker import run_agent_job
from orchestrator.run.jobs import AgentJob, AgentResult, pack_job

#: A job's future is given up on this long after its own timeout (the worker enforces the timeout).
LOST_GRACE_SECONDS = 120.0

Notify = Callable[..., Any]


@dataclass
class _Flight:
    job: Job
    packed: AgentJob
    future: distributed.Future
    tries: int
    started: float = field(default_factory=time.monotonic)


class DaskExecutor:
    """Agent jobs on a Dask cluster, at most ``max_parallel`` in flight and within ``caps``."""

    def __init__(
        self,
        client: distributed.Client,
        max_parallel: int = 2,
        *,
        caps: dict[str, int] | None = None,
        resources: dict[str, float] | None = None,
        resubmits: int = 2,
        owned: tuple[Any, ...] = (),
    ):
        self.client = client
        self.max_parallel = max(1, max_parallel)
        self.caps = dict(caps or {})
        #: what every job holds against the caps (agent jobs are the model callers: {"llm": 1})
        self.resources = dict(resources if resources is not None else {"llm": 1})
        self.resubmits = resubmits
        #: called as notify(type, message, **data) when a job is re-submitted (the run's event log)
        self.notify: Notify | None = None
        self.resubmitted = 0
        self._owned = owned
        self._scattered = ScatteredBlobs(self.client)
        self._blobs = self._scattered.index
        self._queue: list[Job] = []
        self._running: dict[str, _Flight] = {}
        self._done: list[JobResult] = []
        self._used: dict[str, float] = {}

    # -- Executor protocol ----------------------------------------------------------------
    def submit(self, job: Job) -> None:
        self._queue.append(job)
        self._start_queued()

    def pending(self) -> int:
        return len(self._queue) + len(self._running) + len(self._done)

    def wait(self, timeout: float | None = None) -> list[JobResult]:
        if self._running and not self._done:
            with contextlib.suppress(TimeoutError, CancelledError):  # a cancelled one is handled below as lost
                distributed.wait([f.future for f in self._running.values()], timeout=timeout,
                                 return_when="FIRST_COMPLETED")
        self._collect()
        self._start_queued()
        done, self._done = self._done, []
        return done

    def cancel_all(self) -> list[JobResult]:
        self._queue.clear()
        flights = list(self._running.values())
        self._running.clear()
        self._used.clear()
        for flight in flights:
            self._stop(flight)
        return [JobResult(f.job.job_id, f.job.agent, "cancelled", None, round(time.monotonic() - f.started, 3),
                          f.job.log_path, "cancelled") for f in flights]

    def close(self) -> None:
        self.cancel_all()
        self.client.close()
        for thing in self._owned:
            thing.close()

    # -- internals --------------------------------------------------------------------------
    def _fits(self) -> bool:
        return all(self._used.get(r, 0.0) + amount <= self.caps[r]
                   for r, amount in self.resources.items() if r in self.caps)

    def _start_queued(self) -> None:
        while self._queue and len(self._running) < self.max_parallel and self._fits():
            self._launch(self._queue.pop(0), tries=0)

    def _launch(self, job: Job, tries: int, packed: AgentJob | None = None) -> None:
        try:
            packed = packed or pack_job(job, Path(job.cwd), self._blobs, self.resources)
        except (OSError, ValueError, KeyError) as exc:
            self._done.append(JobResult(job.job_id, job.agent, "failed", None, 0.0, job.log_path,
                                        f"could not prepare the job's inputs: {exc}"))
            return
        blobs = self._scattered.futures(set(packed.inputs.values()))
        key = f"agent-{packed.agent}-{packed.job_id}-{tries}"
        future = self.client.submit(run_on_worker, packed, blobs, cancel_event_name(key), key=key, pure=False)
        self._running[key] = _Flight(job, packed, future, tries)
        for r, amount in self.resources.items():
            self._used[r] = self._used.get(r, 0.0) + amount

    def _release(self, key: str) -> _Flight:
        flight = self._running.pop(key)
        for r, amount in self.resources.items():
            self._used[r] = max(0.0, self._used.get(r, 0.0) - amount)
        return flight

    def _collect(self) -> None:
        now = time.monotonic()
        for key, flight in list(self._running.items()):
            status = flight.future.status
            overdue = now - flight.started > flight.job.timeout_seconds + LOST_GRACE_SECONDS
            if status == "finished":
                self._release(key)
                self._done.append(self._land(flight))
            elif status in ("error", "cancelled", "lost") or overdue:
                self._release(key)
                self._stop(flight)
                self._lost(flight, _why(flight.future, overdue))
        self._forget_unused()

    def _forget_unused(self) -> None:
        """Drop blobs held as bytes (graph versions, tasks) that no job in flight needs any more."""
        used = {sha for f in self._running.values() for sha in f.packed.inputs.values()}
        for sha in [s for s, source in self._blobs.sources.items() if isinstance(source, bytes) and s not in used]:
            del self._blobs.sources[sha]
            self._scattered.forget(sha)

    def _land(self, flight: _Flight) -> JobResult:
        try:
            return land(SessionPaths(Path(flight.job.cwd)), flight.job, flight.future.result())
        except UnsafeResultPath as exc:  # nothing was written: the result is refused as a whole
            return JobResult(flight.job.job_id, flight.job.agent, "failed", None,
                             round(time.monotonic() - flight.started, 3), flight.job.log_path, str(exc))

    def _stop(self, flight: _Flight) -> None:
        """Cancel the future and tell the worker to stop the agent's process (cancelling alone leaves it running)."""
        with contextlib.suppress(Exception):
            distributed.Event(cancel_event_name(str(flight.future.key)), client=self.client).set()
        self.client.cancel([flight.future])

    def _lost(self, flight: _Flight, why: str) -> None:
        """Infrastructure failed (not the agent): run the same job again, up to ``resubmits`` times."""
        if flight.tries < self.resubmits:
            self.resubmitted += 1
            if self.notify:
                self.notify("agent.resubmitted", f"{flight.job.agent}: job lost on the cluster ({why}); "
                            f"submitting it again", agent=flight.job.agent, reason=why, tries=flight.tries + 1)
            self._launch(flight.job, flight.tries + 1, flight.packed)
            return
        self._done.append(JobResult(flight.job.job_id, flight.job.agent, "failed", None,
                                    round(time.monotonic() - flight.started, 3), flight.job.log_path,
                                    f"the job was lost on the cluster {flight.tries + 1} time(s): {why}"))


def cancel_event_name(key: str) -> str:
    """One event per submission: a re-submitted job must not see its lost predecessor's cancellation."""
    return f"cconductor-cancel-{key}"


def run_on_worker(job: AgentJob, blobs: dict[str, bytes], cancel_event: str) -> AgentResult:
    """:func:`run_agent_job` on a Dask worker, stopping the agent when the orchestrator cancels the job."""
    cancelled = distributed.Event(cancel_event)
    return run_agent_job(job, blobs, should_stop=cancelled.is_set)


def _why(future: distributed.Future, overdue: bool) -> str:
    if overdue:
        return "no answer from the cluster long past the job's timeout"
    if future.status == "error":
        exc = future.exception()
        return f"{type(exc).__name__}: {exc}"
    return f"future {future.status}"
