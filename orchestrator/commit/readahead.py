"""A big batch read, checked and partly judged by helper processes while the processor judges it.

Reading an agent's files (safe read, strict JSON, sha256, JSON Schema) and checking its stored
texts depend on nothing but the files, and so does judging a first submission that is alone in
its graph (commit/speculation.py): helper processes (one per core, two at most) do this for the
batch's agents, in order, in chunks, while the processor judges. What a helper hands back
(ahead.Read) is used only if the agent's folder still has the fingerprint (name, size, times and
inode of each entry) the helper took before reading, checked after the lock is claimed, where the judging
itself reads; else the folder is read again here. So an agent is judged on the files its folder
holds when its lock is claimed, as without the helpers. A helper that fails changes nothing: the
folder is read here.

The stored-text checks (ahead.Prechecked: each text matches its name, each snippet cited from the
agent's own sources verified, ~1 ms an agent) are taken as is while the text's file keeps the key
(size, times, inode) the helper read it under; a speculation only under the conditions of
evaluation.Evaluation.adopt.

Helpers cost ~0.5 s to start; while they start, the processor judges the first chunks itself
(a read not started yet is cancelled). Once one has delivered, the processor waits for them: a
speculation adopted costs it ~1 ms, judging the agent itself ~4 ms.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import TYPE_CHECKING

from orchestrator.commit.ahead import Read, Wanted
from orchestrator.contract.artifacts import folder_fingerprint
from orchestrator.model.clock import iso_timestamp
from orchestrator.model.layout import SessionPaths

if TYPE_CHECKING:  # imported when a big batch starts the helpers (~15 ms a one-shot run need not pay)
    from concurrent.futures import Future, ProcessPoolExecutor

__all__ = ["MIN_BATCH", "ReadAhead"]

#: Batches smaller than this are read in place (starting the helpers costs ~0.5 s once).
MIN_BATCH = 64
#: Agents per helper task: results come back while the rest is still being read.
CHUNK = 16
#: Helper processes at most (the processor needs a core of its own too, for what it adopts).
MAX_HELPERS = 2
#: Seconds to wait for a read a cold helper is doing (longer: it is stuck; read in place).
RUNNING_WAIT = 1.0
#: Seconds to wait for a read once the helpers have delivered (longer: they are stuck; read in place).
WARM_WAIT = 30.0
#: Seconds to wait for any read the helpers have not finished (tests set it to use every read).
WAIT = 0.0
#: Seconds to wait for a stopped helper to exit before killing it.
CLOSE_WAIT = 5.0
#: A watcher's batch of this many locks starts the helpers for the waves that follow.
WARM_BATCH = 8

#: For the agents of a batch that have no record: (attempts so far, sha256 of a last rejection or None).
Bases = Callable[[list[str]], Mapping[str, tuple[int, str | None]]]


def _detach() -> None:
    """In a helper, first: leave Ctrl-C and the terminal to the processor, which stops the helpers itself.

    A Ctrl-C reaches the whole process group: a helper would print a traceback and break the pool
    mid-batch. And a helper holding the processor's stdout or stderr open would keep whoever reads
    them (a pipe, a test) waiting for as long as it lives. What a helper has to say goes back with
    its results (an exception is the processor's cue to read in place).
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # also when started from a thread (see below)
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    os.close(devnull)


@contextlib.contextmanager
def _sigint_ignored_by_new_processes() -> Iterator[None]:
    """Helpers started meanwhile inherit SIGINT ignored (Python keeps an ignored SIGINT ignored), so a Ctrl-C to
    the process group cannot interrupt one as it starts. This process blocks SIGINT for the while: one sent
    meanwhile waits (Linux keeps a blocked signal pending even when ignored) and reaches the handler it had.
    Only the main thread may change a handler; started from another thread, the helpers have no such guard.
    """
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "pthread_sigmask"):
        yield
        return
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    handler = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, handler)
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)


def _usable_cores() -> int:
    """The cores this process may run on (a container or taskset may allow fewer than the machine has)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not on Linux
        return os.cpu_count() or 1


class ReadAhead:
    """The helper processes (started on the first big batch, kept until :meth:`close`) and their results."""

    def __init__(self, paths: SessionPaths, required_files: Callable[[str], Iterable[str]],
                 evidence_threshold: float, session_id: str) -> None:
        self.paths, self.required_files, self.evidence_threshold = paths, required_files, evidence_threshold
        self.session_id = session_id
        #: batches this big use the helpers too, not only those of MIN_BATCH (:meth:`expect_bursts`)
        self.warm_from: int | None = None
        self._pool: ProcessPoolExecutor | None = None
        self._pending: dict[str, Future[dict[str, Read]]] = {}
        self._warm = False

    def expect_bursts(self, warm_from: int = WARM_BATCH, *, now: bool = False) -> None:
        """Start the helpers at the first batch of ``warm_from`` locks (a watcher: a burst comes in waves).

        Starting them takes ~0.5 s, during which the judging reads in place; started on a burst's
        first wave, they are ready for the rest. ``now``: start them at once (a long-running watch).
        """
        self.warm_from = warm_from
        if now:
            with contextlib.suppress(Exception):  # no helpers here: every read is made in place
                self._ensure_pool()

    def _ensure_pool(self) -> ProcessPoolExecutor:
        """The helper processes, started (each one warming up: imports, schemas, shapes) if need be."""
        if self._pool is None:
            import multiprocessing
            from concurrent.futures import ProcessPoolExecutor

            from orchestrator.commit.speculation import warm

            cores = _usable_cores()
            if cores < 2:  # the helpers would only take turns with the processor on its one core
                raise RuntimeError("one core: every read is made in place")
            helpers = min(MAX_HELPERS, cores)
            with _sigint_ignored_by_new_processes():  # each submission below starts a helper
                self._pool = ProcessPoolExecutor(helpers, mp_context=multiprocessing.get_context("spawn"),
                                                 initializer=_detach)
                self._warm = False
                for _ in range(helpers):
                    self._pool.submit(warm)
        return self._pool

    def start(self, names: list[str], bases: Bases | None = None) -> None:
        """Queue these agents' reads (in this order) if the batch is big enough to pay for the helpers.

        Big enough: :data:`MIN_BATCH` locks, or a watcher's :meth:`expect_bursts` size.

        ``bases``: the attempt bases of the agents without a record, which the helpers may judge whole.
        """
        self._pending.clear()
        if len(names) < MIN_BATCH and (self.warm_from is None or len(names) < self.warm_from):
            return
        try:
            pool = self._ensure_pool()
            from orchestrator.commit.speculation import read_ahead

            found = bases(names) if bases is not None else {}
            merged_at = iso_timestamp()
            for i in range(0, len(names), CHUNK):
                chunk = [Wanted(n, tuple(self.required_files(n)), found.get(n), merged_at) for n in names[i:i + CHUNK]]
                future = pool.submit(read_ahead, str(self.paths.root), self.session_id, chunk,
                                     self.evidence_threshold)
                self._pending.update((want.name, future) for want in chunk)
        except Exception:  # no helper (no processes allowed here, a broken pool): read in place
            self._pending.clear()
            self.close()

    def take(self, name: str) -> Read | None:
        """The helpers' read of ``name`` if it is ready and the folder has not changed since, else None.

        While the helpers start, a read they have not begun is cancelled (read in place, they move
        on to agents still ahead) and one they are doing is waited for up to :data:`RUNNING_WAIT`
        seconds; once they have delivered, a read is waited for up to :data:`WARM_WAIT` seconds.
        """
        future = self._pending.pop(name, None)
        if future is None or (not WAIT and not self._warm and not future.done() and future.cancel()):
            return None
        from concurrent.futures import wait

        wait([future], timeout=max(WAIT, WARM_WAIT if self._warm else RUNNING_WAIT))
        if not future.done() or future.cancelled() or future.exception() is not None:
            return None
        self._warm = True
        found = future.result().get(name)
        if found is None or folder_fingerprint(self.paths.agent_artifacts(name)) != found.artifact_set.fingerprint:
            return None
        return found

    def close(self) -> None:
        """Stop the helpers now, whatever they are doing: they write nothing, so nothing is left half done.

        Waiting for a helper still starting or judging a chunk would hold up the processor's exit (a
        Ctrl-C, the end of a one-shot run) for nothing.
        """
        pool, self._pool = self._pool, None
        self._pending.clear()
        if pool is None:
            return
        processes = list((getattr(pool, "_processes", None) or {}).values())  # the executor's own, while it has them
        with contextlib.suppress(Exception):
            pool.shutdown(wait=False, cancel_futures=True)
        for process in processes:
            with contextlib.suppress(Exception):
                process.terminate()
        for process in processes:
            with contextlib.suppress(Exception):
                process.join(CLOSE_WAIT)
                if process.is_alive():
                    process.kill()
                    process.join(CLOSE_WAIT)
