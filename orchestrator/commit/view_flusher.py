"""Background views flushes for ``watch``: after a commit, at most every ``interval`` seconds."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from orchestrator.commit.views import flush_views
from orchestrator.model.errors import SessionGone

if TYPE_CHECKING:
    from orchestrator.commit.processor import Processor

__all__ = ["MAX_LAG", "ViewFlusher"]

#: Seconds a views flush waits, at most, for a burst of locks to be judged (ViewFlusher).
MAX_LAG = 5.0


class ViewFlusher:
    """Background thread: after a commit, refresh the views at most every ``interval`` seconds.

    ``busy()``: the processor has more locks in hand (a burst). A flush then waits until it is not,
    for at most :data:`MAX_LAG` seconds: a flush competes with judging for the interpreter and
    the processor's lock, and a burst is over sooner if its views are written once, at its end.
    """

    def __init__(self, processor: Processor, interval: float = 0.5, busy: Callable[[], bool] | None = None):
        self.processor = processor
        self.interval = interval
        self.busy = busy or (lambda: False)
        self._dirty = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="cconductor-views", daemon=True)
        self.error: BaseException | None = None

    def start(self) -> None:
        self._thread.start()

    def mark_dirty(self) -> None:
        self._dirty.set()

    def _run(self) -> None:
        while not self._stop.is_set():
            if not self._dirty.wait(timeout=0.2):
                continue
            lagging_since = time.monotonic()
            while self.busy() and time.monotonic() - lagging_since < MAX_LAG and not self._stop.wait(0.05):
                pass
            self._dirty.clear()
            started = time.monotonic()
            if not self.processor.paths.root.is_dir():
                continue  # the session folder is gone: never re-create it
            try:
                flush_views(self.processor)
            except SessionGone:
                continue  # the watcher stops (it checks the folder itself): nothing to write, nowhere to say it
            except Exception as exc:  # the watcher must keep running; the event log says why
                self.error = exc
                with contextlib.suppress(SessionGone):
                    self.processor.events.emit("views.failed", f"could not write graph views: {exc}",
                                               error=repr(exc))
            # Rate limit, but never delay stop(). A flush competes with merges for the interpreter,
            # so on a big graph wait at least as long as the flush took: merges keep >= half the time.
            self._stop.wait(max(self.interval, time.monotonic() - started))

    def abandon(self) -> None:
        """Stop without writing anything (the session folder is gone)."""
        self._stop.set()
        self._thread.join(timeout=30)

    def stop(self) -> None:
        """Stop the thread and write the final views synchronously."""
        self._stop.set()
        self._thread.join(timeout=30)
        flush_views(self.processor)
