"""The one reader for files an agent controls (artifacts, source texts, retry files).

An agent may leave anything at a path the orchestrator reads: a symbolic link to a file
outside the session (whose content must never verify evidence), a FIFO (which would block
the processor under the merge mutex), a folder, a device such as ``/dev/zero``, or a huge
file. Only regular files inside the session are read, never through a symbolic link, and
never more than the stated limit.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from orchestrator.model.errors import CconductorError


class UnsafeFile(CconductorError):
    """A path an agent controls that may not be read; ``rule`` names the check for a Problem."""

    def __init__(self, rule: str, message: str, hint: str):
        super().__init__(message)
        self.rule = rule
        self.hint = hint


def _inside(root: Path, path: Path) -> bool:
    try:
        return Path(os.path.realpath(path.parent)).is_relative_to(os.path.realpath(root))
    except OSError:
        return False


def open_regular(path: Path, name: str) -> int:
    """A read-only descriptor of ``path``, which must be a regular file reached without a symbolic link, or
    :class:`UnsafeFile`. Opened non-blocking, so a FIFO in its place never blocks the reader."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise UnsafeFile("path.missing", f"{name} does not exist", "write the file, then signal again") from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise UnsafeFile("path.symlink", f"{name} is a symbolic link; links are not followed",
                             "replace the link with a regular file holding the content") from None
        if exc.errno == errno.EISDIR:
            raise UnsafeFile("path.not_file", f"{name} is a folder, not a file",
                             "remove the folder and write a regular file in its place") from None
        raise UnsafeFile("path.unreadable", f"cannot read {name}: {exc.strerror or exc}",
                         "make it a readable regular file") from None
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise UnsafeFile("path.not_file", f"{name} is a folder, not a file",
                             "remove the folder and write a regular file in its place")
        if not stat.S_ISREG(mode):
            raise UnsafeFile("path.not_regular", f"{name} is not a regular file (a FIFO, socket or device)",
                             "replace it with a regular file holding the content")
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_agent_file(root: Path, path: Path, limit: int, *, shown: str | None = None) -> bytes:
    """Return at most ``limit + 1`` bytes of ``path`` (so the caller can tell "too large"), or raise UnsafeFile."""
    name = shown or str(path)
    if not _inside(root, path):
        raise UnsafeFile("path.outside_session", f"{name} resolves outside the session folder",
                         "keep the file inside the session folder (no symbolic links to folders outside it)")
    fd = open_regular(path, name)
    try:
        chunks, remaining = [], limit + 1
        while remaining > 0:
            chunk = os.read(fd, min(remaining, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            remaining -= len(chunk)
        return b"".join(chunks)
    except OSError as exc:
        raise UnsafeFile("path.unreadable", f"cannot read {name}: {exc.strerror or exc}",
                         "make it a readable regular file") from None
    finally:
        os.close(fd)
