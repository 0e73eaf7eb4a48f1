"""Watch a session folder and feed pending locks to the processor.

watchdog events are hints, not truth: the handler only enqueues a wake-up (a handler
that raises would kill watchdog's thread), and the single consumer rescans the folder
for ``*.kg.lock`` on every wake-up, at start, after an inotify overflow and
periodically, so a lost event delays a lock but never loses it.
"""

from __future__ import annotations

import contextlib
import logging
import os
import queue
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

from watchdog.events import FileCreatedEvent, FileMovedEvent, FileSystemEvent, FileSystemEventHandler
from watchdog.observers import Observer
from watchdog.observers.api import BaseObserver
from watchdog.observers.polling import PollingObserver

from orchestrator.commit.fs_detect import polling_reason
from orchestrator.commit.internal_errors import log_internal_error
from orchestrator.commit.processor import Outcome, Processor
from orchestrator.commit.view_flusher import ViewFlusher
from orchestrator.model.errors import SessionGone
from orchestrator.model.layout import LOCK_SUFFIX

RESCAN = "<rescan>"
#: After a failed sweep the watcher waits this long, doubling up to the maximum, before trying again.
BACKOFF_START_S = 0.2
BACKOFF_MAX_S = 30.0
#: Longest one wait lasts before the interpreter runs a pending signal handler (:meth:`Watcher._wait_for_hint`).
WAIT_SLICE = 0.25


class _LockHandler(FileSystemEventHandler):
    def __init__(self, wake: queue.Queue[str]):
        self._wake = wake

    def _hint(self, path: str | bytes) -> None:
        name = path.decode() if isinstance(path, bytes) else path
        if name.endswith(LOCK_SUFFIX):
            self._wake.put(name)

    def on_created(self, event: FileSystemEvent) -> None:
        try:
            self._hint(event.src_path)
        except Exception:
            self._wake.put(RESCAN)

    def on_moved(self, event: FileSystemEvent) -> None:
        try:
            self._hint(event.dest_path)
        except Exception:
            self._wake.put(RESCAN)


class _OverflowSignal(logging.Handler):
    """watchdog only logs an inotify queue overflow; turn that log line into a rescan."""

    def __init__(self, wake: queue.Queue[str]):
        super().__init__(logging.WARNING)
        self._wake = wake

    def emit(self, record: logging.LogRecord) -> None:
        if "overflow" in record.getMessage().lower():
            self._wake.put(RESCAN)


class Watcher:
    def __init__(
        self,
        processor: Processor,
        *,
        polling: bool = False,
        rescan_interval: float = 2.0,
        flush_interval: float = 0.5,
        on_outcome: Callable[[Outcome], None] | None = None,
        report: Callable[[str], None] | None = None,
    ):
        self.processor = processor
        self.polling = polling
        self.rescan_interval = rescan_interval
        self.flusher = ViewFlusher(processor, flush_interval, busy=self._busy)
        self.on_outcome = on_outcome
        #: One line per problem the person at the terminal must know about (stderr by default).
        self.report = report or _stderr
        self.gone = False
        self._identity: tuple[int, int] | None = None
        self._failures = 0
        self._retry_at = 0.0
        self._wake: queue.Queue[str] = queue.Queue()
        self._stop = threading.Event()
        self._idle = False
        self.ready = threading.Event()

    def _busy(self) -> bool:
        """Judging a sweep, or more lock hints are waiting: a burst is on (the views flush waits)."""
        return not self._idle or not self._wake.empty()

    def stop(self) -> None:
        self._stop.set()
        self._wake.put(RESCAN)

    def interrupt(self, signum: int | None = None, frame: object = None) -> None:
        """Signal handler for the thread running :meth:`run` (Ctrl-C, SIGTERM).

        A sweep in progress is finished (it is not torn between its commit and consuming its
        locks); only an idle wait is interrupted.
        """
        self._stop.set()
        if self._idle:
            raise KeyboardInterrupt

    def _observer(self) -> BaseObserver:
        observer: BaseObserver = PollingObserver(timeout=0.25) if self.polling else Observer()
        observer.schedule(
            _LockHandler(self._wake),
            str(self.processor.paths.root),
            recursive=False,
            event_filter=[FileCreatedEvent, FileMovedEvent],
        )
        observer.start()
        return observer

    def _poll_if_remote(self, root: Path) -> None:
        """On NFS, SMB, FUSE ... inotify misses other machines' writes: poll there, and say so."""
        fstype = None if self.polling else polling_reason(root)
        if fstype:
            self.polling = True
            message = f"{root} is on {fstype}, where inotify misses other machines' writes: polling instead"
            self.report(f"cconductor: {message}")
            self.processor.events.emit("watch.polling", message, fstype=fstype)

    def run(self) -> None:
        """Process until :meth:`stop` (or KeyboardInterrupt); views are flushed on exit.

        Raises SessionGone, after stopping cleanly and writing nothing, when the session folder
        is deleted or renamed under it.
        """
        events = self.processor.events
        root = self.processor.paths.root
        self._identity = _identity(root)
        overflow = _OverflowSignal(self._wake)
        logging.getLogger("watchdog").addHandler(overflow)
        self._poll_if_remote(root)
        observer = self._observer()
        self.flusher.start()
        events.emit("watch.started", f"watching {root}", polling=self.polling)
        try:
            self._wake.put(RESCAN)
            self.ready.set()
            while not self._stop.is_set():
                self._idle = True  # from here a signal raises KeyboardInterrupt (:meth:`interrupt`) ...
                try:
                    if self._stop.is_set():  # ... and one that came just before is seen here, not slept through
                        break
                    self._wait_for_hint()
                finally:
                    self._idle = False
                while True:  # coalesce a burst of hints into one sweep
                    try:
                        self._wake.get_nowait()
                    except queue.Empty:
                        break
                if self._stop.is_set():
                    break
                self._check_session()
                if not observer.is_alive():
                    events.emit("watch.restarted", "the file observer stopped; restarting it")
                    observer = self._observer()
                if time.monotonic() >= self._retry_at:
                    self._process_once()
        finally:
            with contextlib.suppress(Exception):
                observer.stop()
                observer.join()
            logging.getLogger("watchdog").removeHandler(overflow)
            if self.gone:
                self.flusher.abandon()
            else:
                try:
                    self._process_once()
                finally:
                    if self.gone:
                        self.flusher.abandon()
                    else:
                        self.flusher.stop()
                        events.emit("watch.stopped", "watcher stopped; views flushed")

    def _wait_for_hint(self) -> None:
        """Until a hint arrives or the rescan interval passes, in short slices.

        Linux delivers Ctrl-C to any thread of the process; one that lands on the observer's or the
        flusher's thread only marks it pending, and a main thread blocked in one long wait would not
        run its handler until the wait ended (an hour with ``--rescan-interval 3600``). Returning to
        the interpreter every slice runs it at once.
        """
        deadline = time.monotonic() + self.rescan_interval
        while not self._stop.is_set():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return
            try:
                self._wake.get(timeout=min(remaining, WAIT_SLICE))
                return
            except queue.Empty:
                continue

    def _check_session(self) -> None:
        if _identity(self.processor.paths.root) != self._identity:
            self.gone = True
            raise SessionGone(self.processor.paths.root, "the watcher", "start `cconductor watch` again")

    def _process_once(self) -> None:
        try:
            outcomes = self.processor.process_pending()
        except Exception as exc:
            self._check_session()  # the session vanished mid-sweep: stop now
            self._failures += 1
            delay = min(BACKOFF_START_S * 2 ** (self._failures - 1), BACKOFF_MAX_S)
            self._retry_at = time.monotonic() + delay
            log = log_internal_error(self.processor.paths, "processing a sweep", exc)
            self.processor.events.emit("processor.error", f"processing failed: {exc!r}; retrying in {delay:.1f} s",
                                       error=repr(exc), retry_in_s=delay, log=log)
            self.report(f"watch: processing failed ({type(exc).__name__}: {exc}); retrying in {delay:.1f} s "
                        f"(attempt {self._failures}; details in {log})")
            threading.Timer(delay, self._wake.put, args=(RESCAN,)).start()
            return
        if self._failures:
            self.report(f"watch: processing works again after {self._failures} failed attempt(s)")
        self._failures, self._retry_at = 0, 0.0
        for failure in self.processor.failures:
            self.report(f"watch: internal error while recording an outcome: {failure} (it is retried)")
        for notice in self.processor.notices:
            self.report(f"watch: {notice}")
        self.processor.notices.clear()
        if self.processor.failures:
            self.processor.failures.clear()
            threading.Timer(BACKOFF_START_S, self._wake.put, args=(RESCAN,)).start()
        if any(o.status in ("merged",) for o in outcomes):
            self.flusher.mark_dirty()
        if any(o.status == "deferred" for o in outcomes):
            threading.Timer(0.05, self._wake.put, args=(RESCAN,)).start()
        for outcome in outcomes:
            if self.on_outcome:
                self.on_outcome(outcome)


def _identity(root: Path) -> tuple[int, int] | None:
    try:
        info = os.stat(root)
    except OSError:
        return None
    return (info.st_dev, info.st_ino)


def _stderr(line: str) -> None:
    sys.stderr.write(line + "\n")
    sys.stderr.flush()
