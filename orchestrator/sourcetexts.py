"""Stored source texts (``sources/<sha256>.txt``): reading them, and checking the sources that name them.

The name of a stored text is the SHA-256 of its content; a text that does not match its name
is refused, because evidence snippets are checked against it and a citation must stay
checkable long after the run.
"""

from __future__ import annotations

import hashlib

from orchestrator.artifacts import ArtifactSet
from orchestrator.paths import SessionPaths
from orchestrator.problems import Problem, pointer_join


class TextStore:
    """Reads ``sources/<sha256>.txt`` and checks the name is the content's hash (cached)."""

    def __init__(self, paths: SessionPaths):
        self.paths = paths
        self._texts: dict[str, tuple[tuple[int, int], str | None]] = {}

    def check(self, sha: str) -> tuple[str | None, str | None]:
        """Return (text, None) or (None, reason)."""
        path = self.paths.source_text(sha)
        try:
            info = path.stat()
        except FileNotFoundError:
            return None, f"sources/{sha}.txt does not exist"
        key = (info.st_size, info.st_mtime_ns)
        cached = self._texts.get(sha)
        if cached and cached[0] == key:
            text = cached[1]
        else:
            data = path.read_bytes()
            text = data.decode("utf-8", "replace") if hashlib.sha256(data).hexdigest() == sha else None
            self._texts[sha] = (key, text)
        if text is None:
            return None, f"sources/{sha}.txt does not match its name: its content's sha256 differs"
        return text, None

    def text(self, sha: str) -> str | None:
        return self.check(sha)[0]


def source_text_problems(artifact_set: ArtifactSet, texts: TextStore) -> list[Problem]:
    """A problem for each source in ``sources.json`` whose ``content_sha256`` names no usable text."""
    problems = []
    for art in artifact_set.files:
        for position, source in enumerate(art.data.get("sources", []) if art.name == "sources.json" else []):
            sha = source.get("content_sha256") if isinstance(source, dict) else None
            if not isinstance(sha, str):
                continue
            _, reason = texts.check(sha)
            if reason:
                problems.append(Problem(
                    art.rel, pointer_join("sources", position, "content_sha256"), "source_text.invalid",
                    f"content_sha256 of source {source.get('id')!r} is unusable: {reason}",
                    "write the source's text to sources/<sha256 of the UTF-8 bytes>.txt and put that "
                    "sha256 in content_sha256 (or drop content_sha256 if there is no text)",
                ))
    return problems
