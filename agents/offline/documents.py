"""What ingestion produces: a Document (a Source record plus normalised page texts) and what it skipped.

A Document's id and ``content_sha256`` are derived from its page texts, so the same text always
gets the same id and the stored text, its hash and every snippet cut from it agree.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

_SOURCE_KEYS = (
    "id",
    "type",
    "title",
    "authors",
    "year",
    "venue",
    "publisher",
    "peer_reviewed",
    "doi",
    "arxiv_id",
    "url",
    "local_path",
    "abstract",
    "published",
    "content_sha256",
    "page_labels",
    "extra",
)


@dataclass(frozen=True)
class Document:
    """One ingested source: its Source record and its pages (page n is ``pages[n - 1]``)."""

    source: dict[str, Any]
    pages: tuple[str, ...]

    @property
    def text(self) -> str:
        """The stored text: pages joined by form feeds, the source-text store convention."""
        return "\f".join(self.pages)

    @property
    def content_sha256(self) -> str:
        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()

    @property
    def id(self) -> str:
        return str(self.source["id"])

    def __hash__(self) -> int:  # the source dict is unhashable; the pages identify a document
        return hash(self.pages)


@dataclass(frozen=True)
class SkippedFile:
    """A file, or a line of a library file, that was not ingested, and why."""

    path: Path
    reason: str
    line: int | None = None


@dataclass
class IngestResult:
    """Documents in deterministic order, plus everything skipped (ingestion never raises)."""

    documents: list[Document] = field(default_factory=list)
    skipped: list[SkippedFile] = field(default_factory=list)


class CannotIngest(Exception):
    """A file (or library line) that cannot become a Document; the message is the reason."""


def source_id_for(content_sha256: str) -> str:
    """Short, readable and deterministic: the same text always gets the same id."""
    return f"src-{content_sha256[:12]}"


def make_document(fields: dict[str, Any], pages: Sequence[str]) -> Document:
    """A Document from Source fields and page texts; its id and content_sha256 come from the pages."""
    pages = tuple(p.replace("\f", "\n") for p in pages)
    sha = hashlib.sha256("\f".join(pages).encode("utf-8")).hexdigest()
    merged = {**fields, "id": source_id_for(sha), "content_sha256": sha}
    source = {k: merged[k] for k in _SOURCE_KEYS if merged.get(k) not in (None, "", [], {})}
    return Document(source=source, pages=pages)
