"""Finding sessions and reading their files for the viewer, never outside the sessions folder.

A URL names a session by its folder name only; the name is looked up in a listing of the
sessions folder (no path is ever joined from URL text), symbolic links are not followed, and
every file is read with the one safe reader (regular files inside the session, size-capped).
JSON files are parsed whole or not at all: a file caught mid-write is read again, and while it
stays unreadable the last complete version is shown.
"""

from __future__ import annotations

import hashlib
import os
import stat
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import orjson

from orchestrator.contract.safe_read import UnsafeFile, open_regular, read_agent_file
from orchestrator.model.errors import CconductorError, SessionNotFound
from orchestrator.model.layout import SessionPaths

#: Views and records of a large session are tens of MB; anything past this is not a session file.
JSON_LIMIT = 1 << 30
RETRIES = 3
#: Past this size a file is hashed on a second thread while it is parsed (hashlib lets go of the GIL).
HASH_ASIDE = 1 << 20


class Unreadable(CconductorError):
    """A session file that exists but cannot be shown (damaged, not a regular file, too large)."""


def session_folder(sessions_dir: Path, name: str) -> SessionPaths:
    """The session folder called ``name`` directly inside ``sessions_dir``; never a link or a deeper path."""
    base = sessions_dir.resolve()
    try:
        entries = {entry.name: entry for entry in os.scandir(base)}
    except OSError:
        entries = {}
    entry = entries.get(name) if not name.startswith(".") else None
    if entry is None or entry.is_symlink() or not entry.is_dir(follow_symlinks=False):
        raise SessionNotFound(f"no session folder named {name!r} in {base}; the session list shows those there are")
    problem = marker_problem(Path(entry.path))
    if problem == "":
        raise SessionNotFound(f"{name!r} in {base} is not a session (no session.json)")
    if problem:
        raise Unreadable(problem)
    return SessionPaths(Path(entry.path))


def marker_problem(folder: Path) -> str | None:
    """None when ``folder/session.json`` is a regular file; "" when there is none (not a session); else
    what is wrong with it (a link is never followed, a FIFO never opened) and what to do."""
    try:
        mode = os.lstat(folder / "session.json").st_mode
    except OSError:
        return ""
    if stat.S_ISREG(mode):
        return None
    kind = ("a symbolic link (links are not followed)" if stat.S_ISLNK(mode) else
            "a folder" if stat.S_ISDIR(mode) else "not a regular file (a FIFO, socket or device)")
    return (f"{folder.name}/session.json is {kind}: the viewer shows only a session whose session.json is a "
            "regular file; replace it with the file itself (a copy of the session record)")


def list_session_folders(sessions_dir: Path) -> list[SessionPaths]:
    """Session folders directly inside ``sessions_dir`` (no links), oldest first."""
    try:
        entries = sorted(os.scandir(sessions_dir.resolve()), key=lambda e: e.name)
    except OSError:
        return []
    found = []
    for entry in entries:
        if entry.is_symlink() or not entry.is_dir(follow_symlinks=False) or entry.name.startswith("."):
            continue
        if marker_problem(Path(entry.path)) != "":  # a damaged marker is listed, and said to be damaged
            found.append(SessionPaths(Path(entry.path)))
    return found


def read_bytes(paths: SessionPaths, path: Path, limit: int) -> bytes:
    """At most ``limit`` bytes of a regular file inside the session; :class:`Unreadable` otherwise."""
    try:
        data = read_agent_file(paths.root, path, limit, shown=paths.rel(path))
    except UnsafeFile as exc:
        raise Unreadable(f"{exc} ({exc.hint})") from None
    return data[:limit]


def open_file(paths: SessionPaths, path: Path) -> int | None:
    """A read-only descriptor of a regular file of the session (the caller closes it), None when there is
    none; :class:`Unreadable` (what is wrong, what to do) for a link, a folder, a FIFO or a device."""
    try:
        return open_regular(path, paths.rel(path))
    except UnsafeFile as exc:
        if exc.rule == "path.missing":
            return None
        raise Unreadable(f"{exc} ({exc.hint})") from None


#: Sessions whose parsed files and derived data are kept at once (a viewer left open on many stays small).
KEEP = 8
K = TypeVar("K")
V = TypeVar("V")


def remember(cache: dict[K, V], key: K, value: V, limit: int = KEEP) -> None:
    """``cache[key] = value``, dropping the oldest entries past ``limit`` (dicts keep insertion order)."""
    cache.pop(key, None)
    cache[key] = value
    while len(cache) > limit:
        cache.pop(next(iter(cache)))


def as_dict(value: object) -> dict[str, Any]:
    """``value`` when it is a JSON object, else an empty one (session files are read defensively)."""
    return value if isinstance(value, dict) else {}


def signature(path: Path) -> tuple[int, int, int] | None:
    """(inode, mtime ns, size): changes whenever an atomic replace or an append happened."""
    try:
        info = os.stat(path, follow_symlinks=False)
    except OSError:
        return None
    return info.st_ino, info.st_mtime_ns, info.st_size


@dataclass
class _Cached:
    signature: tuple[int, int, int]
    value: Any
    sha256: str | None  # of the bytes ``value`` was parsed from
    #: Why the file with this signature cannot be shown (``value``: the last complete version, or _NONE):
    #: a damaged file is judged once per change, not re-read on every request.
    error: str | None = None


_NONE = object()


def _parse_and_hash(data: bytes) -> tuple[Any, str]:
    if len(data) < HASH_ASIDE:
        return orjson.loads(data), hashlib.sha256(data).hexdigest()
    with ThreadPoolExecutor(max_workers=1) as aside:
        digest = aside.submit(lambda: hashlib.sha256(data).hexdigest())
        value = orjson.loads(data)
        return value, digest.result()


class JsonCache:
    """Parsed JSON files, kept until the file changes (a 50 MB graph is parsed once per change)."""

    def __init__(self) -> None:
        self._items: dict[Path, _Cached] = {}
        self._lock = threading.Lock()
        self._loading: dict[Path, threading.Lock] = {}

    def load(self, paths: SessionPaths, path: Path, default: Any = None) -> Any:
        """The file's content; ``default`` when it does not exist. Never a partly written file.

        Requests arriving together (the page asks for its header and its summary at once) wait
        for one parse of a changed file instead of each parsing it.
        """
        return self.load_with_sha256(paths, path, default)[0]

    def load_with_sha256(self, paths: SessionPaths, path: Path, default: Any = None) -> tuple[Any, str | None]:
        """The content as :meth:`load` gives it and the sha256 of the bytes it was parsed from (None
        for ``default``): what is shown can be compared with a recorded digest without reading it twice."""
        with self._lock:
            loading = self._loading.setdefault(path, threading.Lock())
        with loading:
            return self._load(paths, path, default)

    def _load(self, paths: SessionPaths, path: Path, default: Any) -> tuple[Any, str | None]:
        for attempt in range(RETRIES):
            before = signature(path)
            if before is None:
                return default, None
            with self._lock:
                cached = self._items.get(path)
            if cached is not None and cached.signature == before:
                if cached.value is _NONE:
                    raise Unreadable(str(cached.error))
                return cached.value, cached.sha256
            try:
                value, sha256 = _parse_and_hash(read_bytes(paths, path, JSON_LIMIT))
            except (Unreadable, orjson.JSONDecodeError) as exc:
                if attempt + 1 < RETRIES:
                    time.sleep(0.05)
                    continue
                error = f"{paths.rel(path)} cannot be shown: {exc}"
                last = cached if cached is not None and cached.value is not _NONE else None
                if signature(path) == before:
                    with self._lock:
                        remember(self._items, path, _Cached(before, last.value if last else _NONE,
                                                            last.sha256 if last else None, error), 4 * KEEP)
                if last is not None:  # mid-write or damaged: keep showing the last complete version
                    return last.value, last.sha256
                raise Unreadable(error) from None
            if signature(path) == before:  # else replaced while read: complete, but do not keep it
                with self._lock:
                    remember(self._items, path, _Cached(before, value, sha256), 4 * KEEP)
            return value, sha256
        return default, None

    def problem(self, path: Path) -> str | None:
        """Why ``path`` as it is now cannot be shown (its last complete version shown instead), if it cannot."""
        with self._lock:
            cached = self._items.get(path)
        return cached.error if cached is not None and cached.signature == signature(path) else None
