"""A big batch's artifact sets read and schema-checked in a helper process while the batch is judged.

Reading an agent's files (safe read, strict JSON, sha256, JSON Schema) is ~2 ms of the ~8 ms an
agent costs, and it depends on nothing but the files: a second process (the machine has two cores)
reads the batch's agents in order while this one judges. What it hands back is used only if the
agent's folder still has the fingerprint (name, size, mtime of each entry) the helper took before
reading, checked after the lock is claimed, where the judging itself reads; else the folder is
read again here. So an agent is judged on the files its folder holds when its lock is claimed, as
without the helper. A helper that fails or lags changes nothing: the folder is read here.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from orchestrator.contract.artifacts import ArtifactSet, folder_fingerprint
from orchestrator.model.layout import SessionPaths

if TYPE_CHECKING:  # imported when a big batch starts the helper (~15 ms a one-shot run need not pay)
    from concurrent.futures import Future, ProcessPoolExecutor

__all__ = ["MIN_BATCH", "ReadAhead"]

#: Batches smaller than this are read in place (starting the helper costs ~0.2 s once).
MIN_BATCH = 64
#: Agents per helper task: results come back while the rest is still being read.
CHUNK = 16
#: Seconds to wait for a read the helper has not finished (0: read in place at once; tests wait).
WAIT = 0.0


def _read_many(root: str, wanted: list[tuple[str, list[str]]]) -> dict[str, ArtifactSet]:
    """In the helper: each agent's artifact set, as the processor would read it."""
    from orchestrator.contract.artifacts import read_artifact_set
    from orchestrator.contract.schemas import SchemaRegistry

    paths, registry = SessionPaths(Path(root)), SchemaRegistry.default()
    return {name: read_artifact_set(paths, name, registry, required) for name, required in wanted}


class ReadAhead:
    """The helper process (started on the first big batch, kept until :meth:`close`) and its results."""

    def __init__(self, paths: SessionPaths, required_files: Callable[[str], Iterable[str]]) -> None:
        self.paths, self.required_files = paths, required_files
        self._pool: ProcessPoolExecutor | None = None
        self._pending: dict[str, Future[dict[str, ArtifactSet]]] = {}

    def start(self, names: list[str]) -> None:
        """Queue these agents' reads (in this order) if the batch is big enough to pay for the helper."""
        self._pending.clear()
        if len(names) < MIN_BATCH:
            return
        try:
            if self._pool is None:
                import multiprocessing
                from concurrent.futures import ProcessPoolExecutor

                self._pool = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn"))
            for i in range(0, len(names), CHUNK):
                chunk = [(n, list(self.required_files(n))) for n in names[i:i + CHUNK]]
                future = self._pool.submit(_read_many, str(self.paths.root), chunk)
                self._pending.update((name, future) for name, _ in chunk)
        except Exception:  # no helper (no processes allowed here, a broken pool): read in place
            self._pending.clear()
            self.close()

    def take(self, name: str) -> ArtifactSet | None:
        """The helper's read of ``name`` if it is ready and the folder has not changed since, else None."""
        future = self._pending.pop(name, None)
        if future is None:
            return None
        if WAIT:
            from concurrent.futures import wait

            wait([future], timeout=WAIT)
        if not future.done() or future.exception() is not None:
            return None
        found = future.result().get(name)
        if found is None or folder_fingerprint(self.paths.agent_artifacts(name)) != found.fingerprint:
            return None
        return found

    def close(self) -> None:
        pool, self._pool = self._pool, None
        self._pending.clear()
        if pool is not None:
            with contextlib.suppress(Exception):
                pool.shutdown(wait=True, cancel_futures=True)
