"""The session's audit trail: ``events.jsonl``, one JSON object per line.

One serializer writes every event (``json.dumps``, never string interpolation), each
line (or a sweep's lines, :meth:`EventLog.deferred`) appended in one ``write`` under a
cross-process file lock, with secrets redacted.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from orchestrator.model.clock import iso_timestamp
from orchestrator.model.redact import redact
from orchestrator.session.mutex import SessionMutex

EventListener = Callable[[dict[str, Any]], None]
#: Encoded lines and their events, held back from the log.
Held = tuple[list[bytes], list[dict[str, Any]]]


class EventLog:
    def __init__(self, path: Path, mutex: Path):
        self.path = path
        mutex.parent.mkdir(exist_ok=True)
        self._mutex = SessionMutex(mutex)
        self._thread_lock = threading.Lock()
        self._listeners: list[EventListener] = []
        self._warned = False
        self._tail_offset: int | None = None
        #: Events held back per thread inside :meth:`deferred` (thread id -> encoded lines, events).
        self._held: dict[int, Held] = {}

    def subscribe(self, listener: EventListener) -> None:
        """Live views (progress display, ``--json`` output) get each event as it is written."""
        self._listeners.append(listener)

    def emit(self, type: str, message: str, **data: Any) -> dict[str, Any]:
        event = {"timestamp": iso_timestamp(), "type": type, "message": message, "data": data}
        line = redact(json.dumps(event, ensure_ascii=False, default=str, allow_nan=False)) + "\n"
        published = json.loads(line)
        held = self._held.get(threading.get_ident())
        if held is not None:
            held[0].append(line.encode("utf-8"))
            held[1].append(published)
            return published
        self._append(line.encode("utf-8"))
        self._publish([published])
        return published

    @contextlib.contextmanager
    def deferred(self) -> Iterator[None]:
        """Hold this thread's events and append them in one write when the block ends.

        A sweep of a thousand locks emits thousands of events; one cross-process lock and one
        ``write`` for all of them instead of one each. Order and content are unchanged; live
        listeners get them when they are written. Other threads' events are not held; nested
        blocks write when the outermost one ends (also when it raises).
        """
        me = threading.get_ident()
        if me in self._held:
            yield
            return
        self._held[me] = ([], [])
        try:
            yield
        finally:
            lines, events = self._held.pop(me)
            if lines:
                self._append(b"".join(lines))
                self._publish(events)

    @contextlib.contextmanager
    def captured(self) -> Iterator[Held]:
        """Hold this thread's events in a list of their own, written only if :meth:`release` gets it.

        A burst checks some agents ahead and may discard that work: their events must then never
        appear, and the kept ones must appear in the order the agents were judged.
        """
        me = threading.get_ident()
        outer = self._held.get(me)
        held: Held = ([], [])
        self._held[me] = held
        try:
            yield held
        finally:
            if outer is None:
                del self._held[me]
            else:
                self._held[me] = outer

    def release(self, held: Held) -> None:
        """Emit captured events now (held again if inside :meth:`deferred`), in their order."""
        outer = self._held.get(threading.get_ident())
        if outer is not None:
            outer[0].extend(held[0])
            outer[1].extend(held[1])
        elif held[0]:
            self._append(b"".join(held[0]))
            self._publish(held[1])

    def _append(self, encoded: bytes) -> None:
        try:  # never creates the session folder: a deleted session stays deleted
            with self._thread_lock, self._mutex:
                fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o644)
                try:
                    view = memoryview(encoded)
                    while view:  # a regular file takes it in one write; a short write must not tear a line
                        view = view[os.write(fd, view):]
                finally:
                    os.close(fd)
        except OSError as exc:  # the audit trail is damaged: say so once, keep working
            if not self._warned:
                self._warned = True
                sys.stderr.write(
                    f"cconductor: cannot write {self.path} ({exc.strerror or exc}); events are not being recorded. "
                    "Move the damaged path aside so that events.jsonl can be written again.\n"
                )

    def _publish(self, events: list[dict[str, Any]]) -> None:
        for published in events:
            for listener in list(self._listeners):
                listener(published)

    def forward_from_agents(self, types: frozenset[str]) -> int:
        """Show the live views the events of ``types`` that agent processes appended since the last call.

        Agents write to the same events.jsonl (the audit trail); their events reach this process's
        listeners (progress display, --json) only through the file. Returns how many were forwarded.
        """
        try:
            size = self.path.stat().st_size
        except OSError:
            return 0
        if self._tail_offset is None or size < self._tail_offset:
            self._tail_offset = size  # start at the end: only what happens from now on
            return 0
        if size == self._tail_offset:
            return 0
        try:
            with open(self.path, "rb") as handle:
                handle.seek(self._tail_offset)
                chunk = handle.read(size - self._tail_offset)
        except OSError:
            return 0
        complete = chunk[: chunk.rfind(b"\n") + 1]
        self._tail_offset += len(complete)
        forwarded = 0
        for line in complete.splitlines():
            try:
                event = json.loads(line)
            except ValueError:
                continue
            if isinstance(event, dict) and event.get("type") in types:
                forwarded += 1
                for listener in list(self._listeners):
                    listener(event)
        return forwarded


def read_events(path: Path) -> Iterator[dict[str, Any]]:
    """Every complete event; a torn last line (crash mid-write) is skipped."""
    try:
        handle = path.open("r", encoding="utf-8")
    except FileNotFoundError:
        return
    with handle:
        for line in handle:
            if not line.endswith("\n"):
                break
            try:
                yield json.loads(line)
            except json.JSONDecodeError:
                continue
