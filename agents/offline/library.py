"""arXiv metadata libraries: JSON-lines dumps (OAI-PMH ``oai_dc`` pairs or snapshot objects) into Documents.

A record becomes a one-page Document (title and abstract). Snapshots are gigabytes, so the
file is streamed, and a bad line is skipped with its line number, never fatal.
"""

from __future__ import annotations

import json
import re
from email.utils import parsedate_to_datetime
from pathlib import Path
from typing import Any

from agents.offline.documents import CannotIngest, Document, IngestResult, SkippedFile, make_document
from agents.offline.pdfmeta import clean_doi, doi_fields
from agents.offline.text import normalize_page, normalize_ws

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
        raise CannotIngest(f"not an arXiv id: {arxiv_id!r}")
    if not fields.get("title"):
        raise CannotIngest("record has no title")
    fields["url"] = f"https://arxiv.org/abs/{arxiv_id}"
    doi = fields.get("doi")
    journal = (doi and doi_fields(doi).get("peer_reviewed")) or fields.get("extra", {}).get("journal_ref")
    fields["type"], fields["peer_reviewed"] = ("journal-article", True) if journal else ("preprint", False)
    fields["year"] = fields.get("year") or _year_from_id(arxiv_id)
    fields["abstract"] = abstract or None
    page = fields["title"] + ("\n\n" + abstract if abstract else "")
    return make_document(fields, [normalize_page(page)])


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
        raise CannotIngest(f"invalid JSON ({exc.msg} at column {exc.colno})") from exc
    if isinstance(rec, list) and len(rec) == 2 and isinstance(rec[0], str) and isinstance(rec[1], dict):
        return _from_oai(rec[0], rec[1])
    if isinstance(rec, dict) and isinstance(rec.get("id"), str) and "title" in rec:
        return _from_snapshot(rec)
    raise CannotIngest("unrecognised record (expected [id, oai_dc] or an arXiv snapshot object)")


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
                except CannotIngest as exc:
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
