"""The live timeline: ``events.jsonl`` read by byte offset, complete lines only.

Writers append whole lines under their own mutex; the viewer takes no lock. It reads up to the
last newline it sees, so a line being written is never shown half, and it remembers the byte
offset after the last complete line: that offset is each event's id in the stream, so a page
that reconnects continues exactly where it stopped. The newest events of a long log are found
by reading the file backwards in blocks, never the whole file. (Secrets are removed from
every response as it leaves the server: :mod:`orchestrator.viewer.app`.)
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

import orjson

from orchestrator.model.layout import SessionPaths
from orchestrator.viewer.files import open_file

BLOCK = 1 << 16
#: One read of the live stream never takes more than this (a burst of thousands of events).
MAX_CHUNK = 4 << 20


@dataclass(frozen=True)
class Batch:
    events: list[dict[str, Any]]
    #: Offset after the last complete line read: where the next read starts.
    end: int
    #: Offset of the first event returned (for "load earlier").
    start: int




def _parse(chunk: bytes, base: int) -> list[dict[str, Any]]:
    events = []
    offset = base
    for line in chunk.split(b"\n")[:-1]:
        start = offset
        offset += len(line) + 1
        try:
            event = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue  # a damaged line is skipped, as read_events does
        if isinstance(event, dict):
            event["offset"] = start
            event["next"] = offset
            events.append(event)
    return events


def read_after(paths: SessionPaths, offset: int, limit: int = MAX_CHUNK) -> Batch:
    """Complete events starting at byte ``offset`` (0: the beginning); :class:`Unreadable` when events.jsonl is
    not a regular file (a FIFO, a folder, a link): said at once, never waited on."""
    fd = open_file(paths, paths.events)
    if fd is None:
        return Batch([], offset, offset)
    try:
        size = os.fstat(fd).st_size
        if offset > size:  # the log was replaced by a shorter one: start again
            offset = 0
        chunk = os.pread(fd, min(size - offset, limit), offset)
    finally:
        os.close(fd)
    complete = chunk[: chunk.rfind(b"\n") + 1]
    return Batch(_parse(complete, offset), offset + len(complete), offset)


def read_last(paths: SessionPaths, count: int, before: int | None = None) -> Batch:
    """The last ``count`` complete events ending before byte ``before`` (default: the end)."""
    fd = open_file(paths, paths.events)
    if fd is None:
        return Batch([], 0, 0)
    try:
        size = os.fstat(fd).st_size
        end = size if before is None else min(before, size)
        data = os.pread(fd, end, 0) if end <= BLOCK else b""
        if end > BLOCK:  # backwards in blocks until enough lines are held
            start = end
            while start > 0 and data.count(b"\n") <= count:
                step = min(BLOCK, start)
                start -= step
                data = os.pread(fd, step, start) + data
        else:
            start = 0
    finally:
        os.close(fd)
    data = data[: data.rfind(b"\n") + 1]
    lines = data.split(b"\n")[:-1]
    if start > 0:  # the first line may be cut: it is not one of ours
        start += len(lines[0]) + 1
        lines = lines[1:]
    keep = lines[len(lines) - count:] if count else []
    first = start + sum(len(line) + 1 for line in lines[: len(lines) - len(keep)])
    tail_end = start + sum(len(line) + 1 for line in lines)
    return Batch(_parse(b"".join(line + b"\n" for line in keep), first), tail_end, first)
