"""Crash-safe file replacement: temp file in the same folder, fsync, rename, fsync folder.

A reader sees either the old file or the new one, never a half-written one.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import orjson


def fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def atomic_write_bytes(path: Path, data: bytes | Sequence[bytes], *, durable: bool = True) -> None:
    """Replace ``path`` with ``data`` (or its pieces, written in order, never joined) atomically.

    The temp name starts with a dot and ends in ``.tmp`` so it can never be taken for
    an artifact or a ``*.kg.lock`` signal.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            if isinstance(data, bytes):
                handle.write(data)
            else:
                handle.writelines(data)
            handle.flush()
            if durable:
                os.fsync(handle.fileno())
        os.replace(tmp_name, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp_name)
        raise
    if durable:
        fsync_dir(path.parent)


def atomic_write_text(path: Path, text: str, *, durable: bool = True) -> None:
    atomic_write_bytes(path, text.encode("utf-8"), durable=durable)


def dumps_pretty(data: Any) -> str:
    """The one JSON layout for human-readable session files (2-space indent, UTF-8).

    orjson rather than json: with ``indent`` set, json falls back to its pure-Python encoder,
    which made rewriting session.json the cost that grew with the number of agents.
    (Non-finite floats, which orjson would write as null, cannot reach it: agents' input is
    parsed strictly and computed scores are finite.) Types orjson does not know fall back to json.
    """
    try:
        return orjson.dumps(data, option=orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS).decode() + "\n"
    except orjson.JSONEncodeError:
        return json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False, default=str) + "\n"


def atomic_write_json(path: Path, data: Any, *, durable: bool = True) -> None:
    atomic_write_text(path, dumps_pretty(data), durable=durable)
