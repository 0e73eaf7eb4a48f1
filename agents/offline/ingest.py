"""Turn local files and arXiv metadata dumps into Documents: a Source plus normalised page texts.

The offline backend researches only what it can read here, so ingestion never raises for a bad
input: unreadable files and lines are reported in ``skipped`` with a reason instead. Page texts
are normalised before hashing (see ``text.normalize_pages``) so that the stored text, the
``content_sha256`` and every snippet cut from it agree. The PDF bibliographic heuristics live in
``pdfmeta``.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

from agents.offline.pdfmeta import UnreadablePdf, clean_doi, doi_fields, read_pdf
from agents.offline.text import normalize_page, normalize_pages, normalize_ws, wordlist

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


class _Skip(Exception):
    """A file (or library line) that cannot become a Document; the message is the reason."""


def source_id_for(content_sha256: str) -> str:
    """Short, readable and deterministic: the same text always gets the same id."""
    return f"src-{content_sha256[:12]}"


def _make_document(fields: dict[str, Any], pages: Sequence[str]) -> Document:
    pages = tuple(p.replace("\f", "\n") for p in pages)
    sha = hashlib.sha256("\f".join(pages).encode("utf-8")).hexdigest()
    merged = {**fields, "id": source_id_for(sha), "content_sha256": sha}
    source = {k: merged[k] for k in _SOURCE_KEYS if merged.get(k) not in (None, "", [], {})}
    return Document(source=source, pages=pages)


# --- files ---------------------------------------------------------------------------------


def _decode(data: bytes) -> str:
    if b"\x00" in data[:8192]:
        raise _Skip("binary content in a text file")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return data.decode("cp1252", errors="replace")


def _read_pdf(path: Path) -> tuple[dict[str, Any], list[str]]:
    try:
        return read_pdf(path)
    except UnreadablePdf as exc:
        raise _Skip(str(exc)) from None


# Markdown ----------------------------------------------------------------------------------

_MD_INLINE = [
    (re.compile(r"!\[([^\]]*)\]\([^)]*\)"), r"\1"),  # images -> alt text
    (re.compile(r"\[([^\]]+)\]\([^)]*\)"), r"\1"),  # links -> text
    (re.compile(r"\[([^\]]+)\]\[[^\]]*\]"), r"\1"),  # reference links
    (re.compile(r"<(https?://[^>\s]+)>"), r"\1"),  # autolinks
    (re.compile(r"</?[A-Za-z][A-Za-z0-9-]*(?:\s[^<>]*)?/?>"), ""),  # inline HTML tags
    (re.compile(r"`([^`]*)`"), r"\1"),
    (re.compile(r"(\*\*|__)(?=\S)(.+?)(?<=\S)\1"), r"\2"),
    (re.compile(r"(?<![\w*])\*(?=\S)([^*\n]+?)(?<=\S)\*(?![\w*])"), r"\1"),
    (re.compile(r"(?<![\w_])_(?=\S)([^_\n]+?)(?<=\S)_(?![\w_])"), r"\1"),
    (re.compile(r"~~(?=\S)(.+?)(?<=\S)~~"), r"\1"),
]
_MD_DROP_LINE = re.compile(
    r"^\s*(?:```.*|~~~.*|[-*_](?:\s*[-*_]){2,}|=+|\|?[\s:|-]*-{3,}[\s:|-]*\|?|\[[^\]]+\]:\s+\S.*)$"
)
_MD_ATX = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)(?:\s+#+)?\s*$")


def _md_inline(text: str) -> str:
    for pattern, repl in _MD_INLINE:
        text = pattern.sub(repl, text)
    return text


def _front_matter(text: str) -> tuple[dict[str, str], str]:
    """Simple ``key: value`` YAML front matter (title, author, date); the rest is the body."""
    m = re.match(r"---[ \t]*\n(.*?)\n(?:---|\.\.\.)[ \t]*(?:\n|$)", text, re.S)
    if not m:
        return {}, text
    meta = {}
    for line in m.group(1).splitlines():
        key, sep, value = line.partition(":")
        if sep and key.strip() and not key.startswith((" ", "\t", "-")):
            meta[key.strip().lower()] = value.strip().strip("'\"")
    return meta, text[m.end() :]


def _read_markdown(path: Path, raw: str) -> tuple[dict[str, Any], list[str]]:
    meta, body = _front_matter(raw.replace("\r\n", "\n"))
    lines = body.split("\n")
    title = meta.get("title", "")
    out: list[str] = []
    for i, line in enumerate(lines):
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        atx = _MD_ATX.match(line)
        setext = (
            line.strip() and re.fullmatch(r"\s*(=+|-+)\s*", nxt) and not line.lstrip().startswith(("-", "*"))
        )
        if atx or setext:
            heading = _md_inline(atx.group(2) if atx else line.strip())
            title = title or heading
            out.append(heading)
            continue
        if _MD_DROP_LINE.match(line):
            continue
        line = re.sub(r"^\s{0,3}>\s?", "", line)  # blockquotes
        line = re.sub(r"^(\s*)[*+]\s+", r"\1- ", line)  # one bullet style
        out.append(_md_inline(line))
    fields = _text_fields(path, "\n".join(out), title)
    if meta.get("author") or meta.get("authors"):
        names = re.split(
            r"\s*(?:;|,|\band\b)\s*", (meta.get("author") or meta.get("authors", "")).strip("[]")
        )
        fields["authors"] = [n.strip().strip("'\"") for n in names if n.strip().strip("'\"")]
    year = re.search(r"\b\d{4}\b", meta.get("date", ""))
    if year:
        fields["year"] = int(year.group())
    return fields, ["\n".join(out)]


# HTML --------------------------------------------------------------------------------------

_HTML_SKIP = frozenset({"script", "style", "nav", "noscript", "template", "svg"})
_HTML_BLOCK = frozenset(
    wordlist(
        """
    address article aside blockquote br dd details div dl dt figcaption figure footer form h1 h2 h3
    h4 h5 h6 header hr li main ol p pre section summary table td th tr ul
        """
    )
)


class _HTMLText(HTMLParser):
    """Visible text with block structure; ``<title>``, first ``<h1>`` and citation meta tags."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.skip_depth = 0
        self.pre_depth = 0
        self.title = ""
        self.h1 = ""
        self.in_title = False
        self.in_h1 = False
        self.meta: dict[str, list[str]] = {}

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k.lower(): (v or "") for k, v in attrs}
        if tag == "meta":
            name = (a.get("name") or a.get("property") or "").lower()
            if name and a.get("content"):
                self.meta.setdefault(name, []).append(a["content"].strip())
            return
        if tag == "title":
            self.in_title = True
        if tag in _HTML_SKIP:
            self.skip_depth += 1
        if tag == "pre":
            self.pre_depth += 1
        if tag == "h1" and not self.h1:
            self.in_h1 = True
        if tag in _HTML_BLOCK:
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self.in_title = False
        if tag in _HTML_SKIP and self.skip_depth:
            self.skip_depth -= 1
        if tag == "pre" and self.pre_depth:
            self.pre_depth -= 1
        if tag == "h1":
            self.in_h1 = False
        if tag in _HTML_BLOCK:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if self.in_title:
            self.title += data
            return
        if self.skip_depth:
            return
        if self.in_h1:
            self.h1 += data
        self.parts.append(data if self.pre_depth else re.sub(r"\s+", " ", data))


def _read_html(path: Path, raw: str) -> tuple[dict[str, Any], list[str]]:
    parser = _HTMLText()
    parser.feed(raw)
    parser.close()
    body = "".join(parser.parts)
    meta = parser.meta
    title = normalize_ws((meta.get("citation_title") or [""])[0] or parser.title or parser.h1)
    fields = _text_fields(path, body, title)
    authors = meta.get("citation_author") or meta.get("dc.creator") or meta.get("author") or []
    if authors:
        fields["authors"] = [normalize_ws(a) for a in authors if a.strip()]
    for key in ("citation_publication_date", "citation_date", "dc.date", "article:published_time"):
        year = re.search(r"\b(19|20)\d{2}\b", (meta.get(key) or [""])[0])
        if year:
            fields["year"] = int(year.group())
            break
    doi = clean_doi((meta.get("citation_doi") or [""])[0].removeprefix("doi:"))
    if doi:
        fields.update(doi_fields(doi))
    if meta.get("citation_journal_title") or meta.get("citation_conference_title"):
        fields["venue"] = normalize_ws(
            (meta.get("citation_journal_title") or meta["citation_conference_title"])[0]
        )
    return fields, [body]


# Plain text --------------------------------------------------------------------------------


def _text_fields(path: Path, body: str, title: str) -> dict[str, Any]:
    """Fields shared by text-like files; the title falls back to a short first line, then the name."""
    if not title:
        first = next((normalize_ws(x) for x in body.splitlines() if x.strip()), "")
        title = first if 0 < len(first) <= 150 else path.stem.replace("_", " ").replace("-", " ")
    return {"type": "local-document", "title": normalize_ws(title)}


def _read_txt(path: Path, raw: str) -> tuple[dict[str, Any], list[str]]:
    pages = raw.split("\f")  # a form feed already means "new page"
    return _text_fields(path, pages[0], ""), pages


_READERS = {
    ".md": _read_markdown,
    ".markdown": _read_markdown,
    ".txt": _read_txt,
    ".html": _read_html,
    ".htm": _read_html,
}


def ingest_file(path: Path) -> Document:
    """Read one file into a Document; raises ``ValueError`` (the skip reason) when it cannot."""
    try:
        return _ingest_file(path)
    except _Skip as exc:
        raise ValueError(str(exc)) from None


def _ingest_file(path: Path) -> Document:
    suffix = path.suffix.lower()
    if suffix != ".pdf" and suffix not in _READERS:
        raise _Skip(f"unsupported file type '{suffix or path.name}'")
    try:
        if path.stat().st_size == 0:
            raise _Skip("empty file")
        if suffix == ".pdf":
            fields, pages = _read_pdf(path)
        else:
            fields, pages = _READERS[suffix](path, _decode(path.read_bytes()))
            pages = list(normalize_pages(pages, dehyphenate=suffix == ".txt"))
    except OSError as exc:
        raise _Skip(f"cannot read file ({exc.strerror or exc})") from exc
    if not any(p.strip() for p in pages):
        raise _Skip("no text")
    fields["local_path"] = str(path.resolve())
    return _make_document(fields, pages)


def _walk(root: Path, result: IngestResult) -> Iterator[Path]:
    """Files under ``root`` in sorted order; hidden entries are reported, never read."""
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
            else:
                yield here / name


def ingest_dirs(dirs: Sequence[Path]) -> IngestResult:
    """Ingest every supported file under ``dirs`` (recursively, sorted, duplicates dropped)."""
    result = IngestResult()
    seen: dict[str, Path] = {}
    for root in dirs:
        files = sorted(_walk(Path(root), result), key=lambda p: p.parts)
        for path in files:
            try:
                doc = _ingest_file(path)
            except _Skip as exc:
                result.skipped.append(SkippedFile(path, str(exc)))
                continue
            if doc.id in seen:
                result.skipped.append(SkippedFile(path, f"duplicate of {seen[doc.id]}"))
                continue
            seen[doc.id] = path
            result.documents.append(doc)
    result.skipped.sort(key=lambda s: (s.path.parts, s.line or 0))
    return result


# --- arXiv metadata libraries ----------------------------------------------------------------

_ARXIV_ID = re.compile(r"^(?:\d{4}\.\d{4,5}|[a-z-]+(?:\.[A-Z]{2})?/\d{7})(?:v\d+)?$")


def _person(name: str) -> str:
    """'Last, First' -> 'First Last' (the form PDFs print), whitespace normalised."""
    name = normalize_ws(name)
    last, sep, first = name.partition(", ")
    return f"{first} {last}" if sep and first and "," not in first else name


def _split_author_string(authors: str) -> list[str]:
    """The snapshot's 'A, B and C' (with newlines and 'et al') into names."""
    authors = re.sub(r"\s*\([^()]*\)", "", normalize_ws(authors))  # affiliations in parentheses
    parts = re.split(r",\s*|\s+and\s+", authors)
    return [p for p in (x.strip() for x in parts) if p and p.lower() not in {"et al", "et al."}]


def _year_from_id(arxiv_id: str) -> int | None:
    m = re.search(r"(?:^|/)(\d{2})(\d{2})", arxiv_id)
    if not m:
        return None
    yy = int(m.group(1))
    return (1900 if yy >= 91 else 2000) + yy


def _finish_arxiv(fields: dict[str, Any], abstract: str) -> Document:
    arxiv_id = fields["arxiv_id"]
    if not _ARXIV_ID.match(arxiv_id):
        raise _Skip(f"not an arXiv id: {arxiv_id!r}")
    if not fields.get("title"):
        raise _Skip("record has no title")
    fields["url"] = f"https://arxiv.org/abs/{arxiv_id}"
    doi = fields.get("doi")
    journal = (doi and doi_fields(doi).get("peer_reviewed")) or fields.get("extra", {}).get("journal_ref")
    fields["type"], fields["peer_reviewed"] = ("journal-article", True) if journal else ("preprint", False)
    fields["year"] = fields.get("year") or _year_from_id(arxiv_id)
    fields["abstract"] = abstract or None
    page = fields["title"] + ("\n\n" + abstract if abstract else "")
    return _make_document(fields, [normalize_page(page)])


def _from_oai(arxiv_id: str, rec: dict[str, Any]) -> Document:
    def values(key: str) -> list[str]:
        v = rec.get(key) or []
        return [str(x) for x in (v if isinstance(v, list) else [v])]

    descriptions = [d for d in values("description") if not d.strip().startswith("Comment:")]
    dates = [d for d in values("date") if re.match(r"\d{4}-\d{2}-\d{2}$", d)]
    extra: dict[str, Any] = {"categories": values("subject")}
    doi = None
    for ident in values("identifier"):
        if ident.startswith("doi:"):
            doi = doi or clean_doi(ident[4:])
        elif not ident.startswith("http"):
            extra["journal_ref"] = normalize_ws(ident)
    comments = [normalize_ws(d[8:]) for d in values("description") if d.strip().startswith("Comment:")]
    if comments:
        extra["comments"] = comments[0]
    fields: dict[str, Any] = {
        "arxiv_id": arxiv_id.strip(),
        "title": normalize_ws(" ".join(values("title"))),
        "authors": [_person(a) for a in values("creator") if a.strip()],
        "doi": doi,
        "year": int(dates[0][:4]) if dates else None,
        "published": dates[0] if dates else None,
        "extra": extra,
    }
    return _finish_arxiv(fields, normalize_ws(descriptions[0]) if descriptions else "")


def _from_snapshot(rec: dict[str, Any]) -> Document:
    parsed = rec.get("authors_parsed")
    if isinstance(parsed, list) and parsed:
        authors = [
            normalize_ws(" ".join([*p[1:2], p[0], *p[2:3]])) for p in parsed if isinstance(p, list) and p
        ]
    else:
        authors = _split_author_string(str(rec.get("authors") or ""))
    published = None
    versions = rec.get("versions")
    if isinstance(versions, list) and versions and isinstance(versions[0], dict):
        try:
            published = parsedate_to_datetime(str(versions[0].get("created"))).date().isoformat()
        except (TypeError, ValueError):
            published = None
    update = str(rec.get("update_date") or "")
    extra: dict[str, Any] = {"categories": str(rec.get("categories") or "").split()}
    for key, name in (("journal-ref", "journal_ref"), ("comments", "comments")):
        if rec.get(key):
            extra[name] = normalize_ws(str(rec[key]))
    doi_text = str(rec.get("doi") or "").split()
    year = int(published[:4]) if published else None
    if year is None and re.match(r"\d{4}-\d{2}-\d{2}$", update) and not _year_from_id(str(rec["id"])):
        year = int(update[:4])
    fields: dict[str, Any] = {
        "arxiv_id": str(rec["id"]).strip(),
        "title": normalize_ws(str(rec.get("title") or "")),
        "authors": [a for a in authors if a],
        "doi": clean_doi(doi_text[0]) if doi_text else None,
        "year": year,
        "published": published,
        "extra": extra,
    }
    return _finish_arxiv(fields, normalize_ws(str(rec.get("abstract") or "")))


def _library_line(line: str) -> Document:
    try:
        rec = json.loads(line)
    except json.JSONDecodeError as exc:
        raise _Skip(f"invalid JSON ({exc.msg} at column {exc.colno})") from exc
    if isinstance(rec, list) and len(rec) == 2 and isinstance(rec[0], str) and isinstance(rec[1], dict):
        return _from_oai(rec[0], rec[1])
    if isinstance(rec, dict) and isinstance(rec.get("id"), str) and "title" in rec:
        return _from_snapshot(rec)
    raise _Skip("unrecognised record (expected [id, oai_dc] or an arXiv snapshot object)")


def read_library(path: Path) -> IngestResult:
    """Load a JSON-lines arXiv metadata file (OAI-PMH oai_dc pairs or snapshot objects, mixed).

    Streams the file (snapshots are gigabytes); a bad line is skipped with its number, never fatal.
    """
    path = Path(path)
    result = IngestResult()
    seen: dict[str, int] = {}
    try:
        with path.open(encoding="utf-8", errors="replace") as handle:
            for number, line in enumerate(handle, start=1):
                if not line.strip():
                    continue
                try:
                    doc = _library_line(line)
                except _Skip as exc:
                    result.skipped.append(SkippedFile(path, str(exc), number))
                    continue
                except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
                    result.skipped.append(SkippedFile(path, f"malformed record ({exc!r})", number))
                    continue
                if doc.id in seen:
                    result.skipped.append(SkippedFile(path, f"duplicate of line {seen[doc.id]}", number))
                    continue
                seen[doc.id] = number
                result.documents.append(doc)
    except OSError as exc:
        result.skipped.append(SkippedFile(path, f"cannot read file ({exc.strerror or exc})"))
    return result


def load_library(path: Path) -> list[Document]:
    """Documents of :func:`read_library`; use that to see the skipped lines."""
    return read_library(path).documents
