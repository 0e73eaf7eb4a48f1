"""Watch a session folder and feed pending locks to the processor.

watchdog events are hints, not truth: the handler only enqueues a wake-up (a handler
that raises would kill watchdog's thread), and the single consumer rescans the folder
for ``*.kg.lock`` on every wake-up, at start, after an inotify overflow and
periodically, so a lost event delays a lock but never loses it.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable

from watchdog.events import FileCreatedEvent, FileMovedEvent, FileSystemEvent, FileSystemEventHandler
from watchdog.observers import Observer
from watchdog.observers.api import BaseObserver
from watchdog.observers.polling import PollingObserver

from orchestrator.paths import LOCK_SUFFIX
from orchestrator.pipeline import Outcome, Processor
from orchestrator.views import ViewFlusher

RESCAN = "<rescan>"


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
    ):
        self.processor = processor
        self.polling = polling
        self.rescan_interval = rescan_interval
        self.flusher = ViewFlusher(processor, flush_interval)
        self.on_outcome = on_outcome
        self._wake: queue.Queue[str] = queue.Queue()
        self._stop = threading.Event()
        self._idle = False
        self.ready = threading.Event()

    def stop(self) -> None:
        self._stop.set()
        self._wake.put(RESCAN)

    def interrupt(self, signum: int | None = None, frame: object = None) -> None:
        """Signal handler for the thread running :meth:`run` (Ctrl-C, SIGTERM).

        A batch in progress is finished (it is not torn between its commit and consuming its
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

    def run(self) -> None:
        """Process until :meth:`stop` (or KeyboardInterrupt); views are flushed on exit."""
        events = self.processor.events
        overflow = _OverflowSignal(self._wake)
        logging.getLogger("watchdog").addHandler(overflow)
        observer = self._observer()
        self.flusher.start()
        events.emit("watch.started", f"watching {self.processor.paths.root}", polling=self.polling)
        try:
            self._wake.put(RESCAN)
            self.ready.set()
            while not self._stop.is_set():
                self._idle = True
                try:
                    self._wake.get(timeout=self.rescan_interval)
                except queue.Empty:
                    pass
                finally:
                    self._idle = False
                while True:  # coalesce a burst of hints into one batch
                    try:
                        self._wake.get_nowait()
                    except queue.Empty:
                        break
                if self._stop.is_set():
                    break
                if not observer.is_alive():
                    events.emit("watch.restarted", "the file observer stopped; restarting it")
                    observer = self._observer()
                self._process_once()
        finally:
            observer.stop()
            observer.join()
            logging.getLogger("watchdog").removeHandler(overflow)
            try:
                self._process_once()
            finally:
                self.flusher.stop()
                events.emit("watch.stopped", "watcher stopped; views flushed")

    def _process_once(self) -> None:
        try:
            outcomes = self.processor.process_pending()
        except Exception as exc:
            self.processor.events.emit("processor.error", f"processing failed: {exc!r}; will retry", error=repr(exc))
            time.sleep(0.2)
            self._wake.put(RESCAN)
            return
        if any(o.status in ("merged",) for o in outcomes):
            self.flusher.mark_dirty()
        if any(o.status == "deferred" for o in outcomes):
            threading.Timer(0.05, self._wake.put, args=(RESCAN,)).start()
        for outcome in outcomes:
            if self.on_outcome:
                self.on_outcome(outcome)
