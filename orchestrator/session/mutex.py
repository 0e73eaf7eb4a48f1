"""A cross-process mutex kept in a session's state folder, which it never creates.

filelock creates a lock file's missing folders when it acquires it: a session folder deleted (or
renamed) while a command runs would come back as soon as the command next took a lock, and what
it wrote after would land in a folder the user thought gone. Checking the folder first leaves a
moment for it to go before the lock is taken, so :class:`SessionMutex` opens the lock file itself
(``O_CREAT`` makes a file, never a folder) and locks it with ``flock``, the same lock filelock
takes on POSIX, so the two exclude each other. A missing folder is
:class:`~orchestrator.model.errors.SessionGone`. Where ``fcntl`` is missing (Windows), filelock does
the locking, after the same check.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from types import TracebackType

from orchestrator.model.errors import SessionGone

try:
    import fcntl
except ImportError:  # pragma: no cover - not POSIX
    fcntl = None  # type: ignore[assignment]

__all__ = ["SessionMutex"]


class SessionMutex:
    """``with SessionMutex(path):`` holds ``path`` locked across processes; reentrant and thread-safe, like a
    FileLock shared by threads. Raises SessionGone when the lock file's folder no longer exists."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._thread_lock = threading.RLock()
        self._depth = 0
        self._fd: int | None = None
        self._fallback: object | None = None

    def __enter__(self) -> SessionMutex:
        self._thread_lock.acquire()
        try:
            if self._depth == 0:
                self._lock()
            self._depth += 1
        except BaseException:
            self._thread_lock.release()
            raise
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 traceback: TracebackType | None) -> None:
        try:
            self._depth -= 1
            if self._depth == 0:
                self._unlock()
        finally:
            self._thread_lock.release()

    def _lock(self) -> None:
        if fcntl is None:  # pragma: no cover - not POSIX
            from filelock import FileLock

            if not self.path.parent.is_dir():
                raise SessionGone(self.path.parent.parent)
            lock = FileLock(self.path)
            lock.acquire()
            self._fallback = lock
            return
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        except (FileNotFoundError, NotADirectoryError) as exc:
            raise SessionGone(self.path.parent.parent) from exc
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
        except BaseException:
            os.close(fd)
            raise
        self._fd = fd

    def _unlock(self) -> None:
        if self._fallback is not None:  # pragma: no cover - not POSIX
            self._fallback.release()  # type: ignore[attr-defined]
            self._fallback = None
            return
        fd, self._fd = self._fd, None
        if fd is not None:
            try:
                fcntl.flock(fd, fcntl.LOCK_UN)
            finally:
                os.close(fd)
