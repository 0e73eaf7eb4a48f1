"""Batch sessions on a Dask cluster: input documents by content hash, one session job per question.

Imports ``distributed``; :mod:`orchestrator.run.batch_runner` uses it only for a Dask executor.
"""

from __future__ import annotations

import contextlib
import dataclasses
from pathlib import Path
from typing import Any

import distributed

from orchestrator.run.dask_blobs import ScatteredBlobs
from orchestrator.run.jobs import staged_inputs
from orchestrator.run.session_jobs import SessionJob, SessionResult, run_session_job


class DaskSessionPool:
    """Whole sessions on the cluster's workers; each input file is scattered once for the whole batch."""

    def __init__(self, client: distributed.Client, workers: int | None = None, owned: tuple[Any, ...] = ()):
        self.client = client
        threads = sum(w.get("nthreads", 1) for w in client.scheduler_info().get("workers", {}).values())
        self.workers = max(1, workers or threads or 1)
        self._owned = owned
        self._scattered = ScatteredBlobs(self.client)
        self._blobs = self._scattered.index
        self._keys: list[str] = []
        self._sent: dict[tuple[str, ...], tuple[dict[str, str], tuple[str, ...]]] = {}

    def prepare(self, job: SessionJob) -> SessionJob:
        """Name the input folders' files by hash (once per batch: every question shares them)."""
        if job.input_dirs not in self._sent:
            inputs: dict[str, str] = {}
            named = []
            for n, folder in enumerate(job.input_dirs):
                root, files = staged_inputs(Path(folder))
                named.append(f"{n}/{root}")
                for rel, path in files:
                    inputs[f"{n}/{rel}"] = self._blobs.add_file(path)
            self._sent[job.input_dirs] = (inputs, tuple(named))
        inputs, roots = self._sent[job.input_dirs]
        return dataclasses.replace(job, inputs=inputs, input_roots=roots)

    def submit(self, job: SessionJob) -> distributed.Future:
        blobs = self._scattered.futures(set(job.inputs.values()))
        key = f"session-{job.qid}-{len(self._keys)}"
        self._keys.append(key)
        return self.client.submit(run_session_on_worker, job, blobs, f"cconductor-cancel-{key}", key=key,
                                  pure=False, retries=1)

    def close(self, cancel: bool = False) -> None:
        if cancel:
            for key in self._keys:
                with contextlib.suppress(Exception):
                    distributed.Event(f"cconductor-cancel-{key}", client=self.client).set()
        self.client.close()
        for thing in self._owned:
            thing.close()


def run_session_on_worker(job: SessionJob, blobs: dict[str, bytes], cancel_event: str) -> SessionResult:
    """:func:`run_session_job` on a worker; the driver's Ctrl-C reaches it through a Dask event."""
    return run_session_job(job, blobs, should_stop=distributed.Event(cancel_event).is_set)


def open_pool(spec: str, workers: int | None) -> DaskSessionPool:
    from orchestrator.run.executor_choice import connect

    client, owned = connect(spec, workers or 2)
    return DaskSessionPool(client, workers, owned=owned)
