"""Stored source texts (``sources/<sha256>.txt``): reading them, and checking the sources that name them.

The name of a stored text is the SHA-256 of its content; a text that does not match its name
is refused, because evidence snippets are checked against it and a citation must stay
checkable long after the run. Texts are read with the one safe reader (regular files inside
the session, at most :data:`MAX_SOURCE_TEXT_BYTES`), and kept in a cache bounded in bytes.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import time
from collections import OrderedDict
from collections.abc import Iterator, Mapping
from typing import Any

from orchestrator.contract.artifacts import ArtifactSet
from orchestrator.contract.safe_read import UnsafeFile, read_agent_file
from orchestrator.model.inputs import InputFile
from orchestrator.model.layout import SessionPaths
from orchestrator.model.problems import Problem, pointer_join

#: Largest stored text accepted (documented in docs/agent-protocol.md).
MAX_SOURCE_TEXT_BYTES = 8 * 1024 * 1024
#: Texts kept decoded in memory at most (least recently used go first).
CACHE_BUDGET_BYTES = 128 * 1024 * 1024
#: A text being rewritten by another agent (``cp`` truncates, then writes) is read again while it is
#: younger than ``SETTLE_S`` or still changing, waiting these steps, for ``REREAD_LIMIT_S`` at most.
REREAD_WAITS_S = (0.05, 0.1, 0.2, 0.4, 0.8)
SETTLE_S = 2.0
REREAD_LIMIT_S = 6.0

#: (size, mtime_ns, inode, ctime_ns) of a stored text file: a text read under one key is the text under that key.
FileKey = tuple[int, int, int, int]


class TextStore:
    """Reads ``sources/<sha256>.txt`` and checks the name is the content's hash (bounded cache)."""

    def __init__(self, paths: SessionPaths, *, budget_bytes: int = CACHE_BUDGET_BYTES):
        self.paths = paths
        self.budget_bytes = budget_bytes
        self._cache: OrderedDict[str, tuple[FileKey, str]] = OrderedDict()
        self._cached_bytes = 0

    def check(self, sha: str) -> tuple[str | None, str | None]:
        """Return (text, None) or (None, reason)."""
        if not _is_sha256(sha):
            return None, f"{sha!r} is not a sha256 (64 lowercase hex digits)"
        deadline = time.monotonic() + REREAD_LIMIT_S
        attempt = 0
        while True:
            text, reason, settled, _ = self._read(sha)
            if text is not None or settled or time.monotonic() >= deadline:
                return text, reason
            time.sleep(REREAD_WAITS_S[min(attempt, len(REREAD_WAITS_S) - 1)])
            attempt += 1

    def problem_with(self, sha: str) -> str | None:
        """Why the stored text of ``sha`` is unusable, or None."""
        return self.check(sha)[1]

    def stored(self, sha: str, suffix: str) -> tuple[str | None, str | None]:
        """A stored UTF-8 object besides a source text (a table's cells: ``.json``): (text, None) or (None, reason)."""
        if not _is_sha256(sha):
            return None, f"{sha!r} is not a sha256 (64 lowercase hex digits)"
        text, reason, _, _ = self._read(sha, suffix)
        return text, reason

    def _read(self, sha: str, suffix: str = ".txt") -> tuple[str | None, str | None, bool, FileKey | None]:
        """(text, reason, settled, key): unsettled reasons may change when a writer finishes."""
        path = self.paths.stored_object(sha, suffix)
        shown = f"sources/{sha}{suffix}"
        try:
            info = os.lstat(path)
        except FileNotFoundError:
            return None, f"{shown} does not exist", True, None
        except OSError as exc:
            return None, f"cannot read {shown}: {exc.strerror or exc}", True, None
        key = _key_of(info)
        slot = sha if suffix == ".txt" else sha + suffix
        cached = self._cache.get(slot)
        if cached and cached[0] == key:
            self._cache.move_to_end(slot)
            return cached[1], None, True, key
        try:
            data = read_agent_file(self.paths.root, path, MAX_SOURCE_TEXT_BYTES, shown=shown)
        except UnsafeFile as exc:
            return None, f"{exc} ({exc.hint})", True, key
        if len(data) > MAX_SOURCE_TEXT_BYTES:
            return None, (f"{shown} is larger than {MAX_SOURCE_TEXT_BYTES // (1024 * 1024)} MiB; store the part "
                          "of the source that is cited, or split it into several texts"), True, key
        if hashlib.sha256(data).hexdigest() != sha:
            # A writer may still be at work: only a text that stopped changing a while ago is judged.
            with contextlib.suppress(OSError):
                now = os.lstat(path)
                stable = _key_of(now) == key and time.time() - now.st_mtime > SETTLE_S
                return None, f"{shown} does not match its name: its content's sha256 differs", stable, key
            return None, f"{shown} does not match its name: its content's sha256 differs", False, key
        if _file_key(path) != key:  # replaced while it was read: the bytes may belong to no single key
            return None, f"{shown} changed while it was read", False, key
        text = data.decode("utf-8", "replace")
        self._remember(slot, key, text)
        return text, None, True, key

    def _remember(self, sha: str, key: FileKey, text: str) -> None:
        size = len(text)
        if size > self.budget_bytes:
            return
        old = self._cache.pop(sha, None)
        if old:
            self._cached_bytes -= len(old[1])
        self._cache[sha] = (key, text)
        self._cached_bytes += size
        while self._cached_bytes > self.budget_bytes and self._cache:
            _, (_, dropped) = self._cache.popitem(last=False)
            self._cached_bytes -= len(dropped)

    def text(self, sha: str) -> str | None:
        return self.check(sha)[0]


def _key_of(info: os.stat_result) -> FileKey:
    """(size, mtime_ns, inode, ctime_ns): a rewrite that restores the size and modification time still moves
    the change time, which ``utime`` cannot set."""
    return info.st_size, info.st_mtime_ns, info.st_ino, info.st_ctime_ns


def _is_sha256(sha: object) -> bool:
    return isinstance(sha, str) and len(sha) == 64 and all(c in "0123456789abcdef" for c in sha)


def _file_key(path: os.PathLike[str] | str) -> FileKey | None:
    try:
        info = os.lstat(path)
    except OSError:
        return None
    return _key_of(info)


def named_texts(artifact_set: ArtifactSet) -> Iterator[tuple[InputFile, int, Mapping[str, Any], str]]:
    """(file, position, source, sha256) of each source of the set that names a stored text (``content_sha256``)."""
    for art in artifact_set.files:
        sources = art.data.get("sources")
        for position, source in enumerate(sources if isinstance(sources, list) else []):
            sha = source.get("content_sha256") if isinstance(source, Mapping) else None
            if isinstance(sha, str):
                yield art, position, source, sha


def source_text_problems(artifact_set: ArtifactSet, texts: TextStore) -> list[Problem]:
    """A problem for each source whose ``content_sha256`` names no usable text, in every file that holds sources."""
    problems = []
    for art, position, source, sha in named_texts(artifact_set):
        reason = texts.problem_with(sha)
        if reason:
            problems.append(Problem(
                art.rel, pointer_join("sources", position, "content_sha256"), "source_text.invalid",
                f"content_sha256 of source {source.get('id')!r} is unusable: {reason}",
                "write the source's text to sources/<sha256 of the UTF-8 bytes>.txt (write it beside, then "
                "rename it into place) and put that sha256 in content_sha256 (or drop content_sha256 if there "
                "is no text)",
            ))
    return problems
