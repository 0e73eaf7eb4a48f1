"""Turn local files and arXiv metadata dumps into Documents: a Source plus normalised page texts.

The offline backend researches only what it can read here, so ingestion never raises for a bad
input: unreadable files and lines are reported in ``skipped`` with a reason instead. Page texts
are normalised before hashing (see ``text.normalize_pages``) so that the stored text, the
``content_sha256`` and every snippet cut from it agree. The file formats are read in
``readers`` (the PDF bibliographic heuristics live in ``pdfmeta``); arXiv metadata dumps in
``library``.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from agents.offline import doccache
from agents.offline.documents import (
    CannotIngest,
    Document,
    IngestResult,
    SkippedFile,
    make_document,
    source_id_for,
)
from agents.offline.library import load_library, read_library
from agents.offline.readers import TEXT_READERS, decode_text, read_pdf_file
from agents.offline.text import normalize_pages

__all__ = [
    "Document",
    "IngestResult",
    "SkippedFile",
    "ingest_dirs",
    "ingest_file",
    "load_library",
    "read_library",
    "source_id_for",
]


def ingest_file(path: Path) -> Document:
    """Read one file into a Document; raises ``ValueError`` (the skip reason) when it cannot."""
    try:
        return _ingest_file(path)
    except CannotIngest as exc:
        raise ValueError(str(exc)) from None


#: The modules whose code decides what a file reads as (a change to any of them is a new cache entry).
_READER_CODE = ("ingest", "readers", "pdfmeta", "pdf_authorship", "citemeta", "documents", "text")


def _cached(data: bytes, name: str) -> tuple[str, dict[str, Any] | None]:
    """The cache key of a file's bytes (with its name: a title may fall back to it) and its entry."""
    key = hashlib.sha256(data + f"\0{name}\0{doccache.code_key(*_READER_CODE)}".encode()).hexdigest()
    entry = doccache.load_entry("files", key, lambda v: isinstance(v, dict) and isinstance(v.get("pages"), list))
    return key, entry


def _ingest_file(path: Path) -> Document:
    """Read one file; a file whose bytes were read before (by the same code) comes from the user cache."""
    suffix = path.suffix.lower()
    if suffix != ".pdf" and suffix not in TEXT_READERS:
        raise CannotIngest(f"unsupported file type '{suffix or path.name}'")
    try:
        if path.stat().st_size == 0:
            raise CannotIngest("empty file")
        data = path.read_bytes()
        key, entry = _cached(data, path.name)
        if entry is not None:
            fields, pages = dict(entry["fields"]), list(entry["pages"])
        elif suffix == ".pdf":
            fields, pages = read_pdf_file(path)
        else:
            fields, pages = TEXT_READERS[suffix](path, decode_text(data))
            pages = list(normalize_pages(pages, dehyphenate=suffix == ".txt"))
    except OSError as exc:
        raise CannotIngest(f"cannot read file ({exc.strerror or exc})") from exc
    if not any(p.strip() for p in pages):
        raise CannotIngest("no text")
    if entry is None:
        doccache.save_entry("files", key, {"fields": fields, "pages": pages})
    fields["local_path"] = str(path.resolve())
    return make_document(fields, pages)


#: A dataset's own notes (what it is, its licence, where it came from) describe the documents; they are
#: not research sources unless the user asks for them (--include-notes).
NOTE_NAMES = re.compile(r"^(readme|license|licence|copying|sources|changelog|notice|authors)([._-].*)?$", re.I)


def is_note(path: Path) -> bool:
    return bool(NOTE_NAMES.match(path.name))


def is_candidate(path: Path, include_notes: bool = False) -> bool:
    """Could this file be a research source? (Its type is readable and it is not a dataset note.)"""
    suffix = path.suffix.lower()
    return (suffix == ".pdf" or suffix in TEXT_READERS) and not path.name.startswith(".") and (
        include_notes or not is_note(path))


def _walk(root: Path, result: IngestResult, include_notes: bool = False) -> Iterator[Path]:
    """Files under ``root`` in sorted order; hidden entries and dataset notes are reported, never read."""
    if root.is_file():
        yield root
        return
    if not root.is_dir():
        result.skipped.append(SkippedFile(root, "not found"))
        return
    for dirpath, dirnames, filenames in os.walk(root):
        here = Path(dirpath)
        for d in sorted(dirnames):
            if d.startswith("."):
                result.skipped.append(SkippedFile(here / d, "hidden folder"))
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for name in sorted(filenames):
            if name.startswith("."):
                result.skipped.append(SkippedFile(here / name, "hidden file"))
            elif not include_notes and is_note(here / name):
                result.skipped.append(SkippedFile(here / name, "dataset notes, not a research source "
                                                               "(pass --include-notes to use them)"))
            else:
                yield here / name


def ingest_dirs(dirs: Sequence[Path], include_notes: bool = False) -> IngestResult:
    """Ingest every supported file under ``dirs`` (recursively, sorted, duplicates dropped)."""
    result = IngestResult()
    seen: dict[str, Path] = {}
    for root in dirs:
        files = sorted(_walk(Path(root), result, include_notes), key=lambda p: p.parts)
        for path in files:
            try:
                doc = _ingest_file(path)
            except CannotIngest as exc:
                result.skipped.append(SkippedFile(path, str(exc)))
                continue
            if doc.id in seen:
                result.skipped.append(SkippedFile(path, f"duplicate of {seen[doc.id]}"))
                continue
            seen[doc.id] = path
            result.documents.append(doc)
    result.skipped.sort(key=lambda s: (s.path.parts, s.line or 0))
    return result
