"""Bibliographic fields of a PDF: title, authors, year, DOI, venue and abstract, by heuristics.

Kept apart from ``ingest`` because the heuristics are long and only PDFs need them. Metadata in
the document information dictionary is trusted only when it agrees with the first page, since
publishers often leave template titles and tool names there.
"""

from __future__ import annotations

import logging
import re
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import date
from pathlib import Path
from typing import Any

from agents.offline.citemeta import publication_fields
from agents.offline.pagelabels import printed_labels
from agents.offline.pdf_authorship import (
    ABSTRACT_RE,
    MARKERS,
    authors_from_metadata,
    authors_on_page,
    title_from_metadata,
    title_line_run,
)
from agents.offline.text import (
    join_wrapped_lines,
    normalize_chars,
    normalize_pages,
    normalize_ws,
)

__all__ = ["UnreadablePdf", "clean_doi", "doi_fields", "extract_sized_lines", "pdf_bibliography", "read_pdf"]


class UnreadablePdf(ValueError):
    """A PDF that yields no Document; the message is the reason reported as skipped."""


# --- PDF bibliographic fields ----------------------------------------------------------------
# Title, authors and year come from the document information dictionary only when they look
# sane; otherwise from the first page, where the title is the run of lines in the largest font
# that is not a journal header, URL or "Research article" label.

_DOI_RE = re.compile(r"\b10\.\d{4,9}/[^\s\"<>]+")
_PREPRINT_DOI = frozenset(
    {
        "10.48550",
        "10.1101",
        "10.31219",
        "10.20944",
        "10.21203",
        "10.31234",
        "10.26434",
        "10.2139",
        "10.31235",
        "10.32942",
    }
)
_REPOSITORY_DOI = frozenset({"10.5281", "10.6084", "10.13140", "10.17632", "10.7910"})
_ABSTRACT_END_RE = re.compile(
    r"(?i)^(?:(?:\d+\.?\s*)?(?:introduction|background)$|(?:keywords|key words|index terms|subjects|"
    r"citation|copyright|abbreviations|\*\s*correspondence)\b|©)"
)
_PUBLISHED_RE = re.compile(
    r"(?i)\bpublished(?:\s+online)?\s*:?\s*(?:on\s+)?(?:\d{1,2}(?:st|nd|rd|th)?\s+)?"
    r"(?:[a-z]{3,9}\.?\s+)?(?:\d{1,2},?\s+)?((?:19|20)\d{2})\b"
)
_COPYRIGHT_RE = re.compile(r"(?i)(?:©|\(c\)|\bcopyright\b:?)\s*(?:©\s*)?((?:19|20)\d{2})\b")
_HEADER_YEAR_RE = re.compile(r"(?i)(?:proceedings|journal|volume|vol\.)[^\n]*?\b((?:19|20)\d{2})\b")


def extract_sized_lines(page: Any) -> tuple[str, list[tuple[str, float | None]]]:
    """Page text plus each line's dominant font size (size x text and CTM scale), for the title."""
    pieces: list[tuple[str, float]] = []

    def visit(text: str, cm: Sequence[float], tm: Sequence[float], font: Any, size: Any) -> None:
        a, b = tm[0] * cm[0] + tm[1] * cm[2], tm[0] * cm[1] + tm[1] * cm[3]
        c, d = tm[2] * cm[0] + tm[3] * cm[2], tm[2] * cm[1] + tm[3] * cm[3]
        scale = abs(a * d - b * c) ** 0.5
        pieces.append((text, round(float(size or 0) * (scale or 1.0), 1)))

    text = page.extract_text(visitor_text=visit) or ""
    if "".join(t for t, _ in pieces) != text:  # sizes would be misaligned: keep text only
        return text, [(line, None) for line in text.split("\n")]
    lines: list[tuple[str, float | None]] = []
    buf: list[str] = []
    sizes: Counter[float] = Counter()
    for piece, size in pieces:
        for ch in piece:
            if ch == "\n":
                lines.append(("".join(buf), sizes.most_common(1)[0][0] if sizes else None))
                buf, sizes = [], Counter()
            else:
                buf.append(ch)
                if not ch.isspace():
                    sizes[size] += 1
    lines.append(("".join(buf), sizes.most_common(1)[0][0] if sizes else None))
    return text, lines


def clean_doi(value: str) -> str | None:
    m = _DOI_RE.search(value)
    if not m:
        return None
    doi = m.group().rstrip(".,;:'\"]}>")
    while doi.endswith(")") and doi.count("(") < doi.count(")"):
        doi = doi[:-1].rstrip(".,;:")
    return doi


def _dois(text: str) -> list[str]:
    out = []
    for m in _DOI_RE.finditer(text):
        doi = m.group()
        wrapped = re.match(r"\n(\S+)", text[m.end() :])
        if doi.endswith((".", "/", "-")) and wrapped:  # "10.1371/journal.\npone.0197919"
            doi += wrapped.group(1)
        cleaned = clean_doi(doi)
        if cleaned:
            out.append(cleaned)
    return out


def _pdf_doi(pages: Sequence[str], meta: dict[str, str]) -> str | None:
    """First page, then the information dictionary, then a 'Cite this article' line at the end."""
    first = _dois(pages[0])
    if first:
        return Counter(first).most_common(1)[0][0]
    for value in meta.values():
        found = _dois(value)
        if found:
            return found[0]
    last = pages[-1]
    for m in _DOI_RE.finditer(last):
        if re.search(
            r"(?i)cite this article|how to cite|please cite|cite as",
            last[max(0, m.start() - 150) : m.end() + 150],
        ):
            return clean_doi(m.group())
    return None


def doi_fields(doi: str) -> dict[str, Any]:
    """Type and peer review implied by a DOI: preprint servers and repositories are not journals."""
    prefix = doi.split("/", 1)[0]
    fields: dict[str, Any] = {"doi": doi, "url": f"https://doi.org/{doi}"}
    if prefix in _PREPRINT_DOI:
        fields.update(type="preprint", peer_reviewed=False)
    elif prefix not in _REPOSITORY_DOI:
        fields.update(type="journal-article", peer_reviewed=True)
    return fields


def _valid_year(text: str) -> int | None:
    year = int(text)
    return year if 1900 <= year <= date.today().year + 1 else None


def _pdf_year(first_page: str, meta: dict[str, str]) -> int | None:
    """'Published ...' or '(c) YYYY' on the first page, a journal header, then the file dates."""
    found = [m.group(1) for rx in (_PUBLISHED_RE, _COPYRIGHT_RE) for m in rx.finditer(first_page)]
    header = _HEADER_YEAR_RE.search(first_page[:400])
    found += [header.group(1)] if header else []
    for key in ("/CreationDate", "/ModDate"):
        date_match = re.match(r"(?:D:)?((?:19|20)\d{2})", meta.get(key, ""))
        found += [date_match.group(1)] if date_match else []
    return next((year for year in map(_valid_year, found) if year), None)


def _pdf_abstract(first_page: str) -> str | None:
    lines = first_page.split("\n")
    for i, line in enumerate(lines):
        m = ABSTRACT_RE.match(line)
        if not m:
            continue
        body = [m.group(1)] if m.group(1) else []
        for nxt in lines[i + 1 :]:
            if _ABSTRACT_END_RE.match(nxt):
                abstract = normalize_ws(" ".join(body))
                return abstract if 100 <= len(abstract) <= 4000 else None
            body.append(nxt)
        return None  # no clear end on the first page: better nothing than half a page
    return None


def pdf_bibliography(
    sized_lines: Sequence[tuple[str, float | None]], pages: Sequence[str], meta: dict[str, str]
) -> dict[str, Any]:
    first = pages[0]
    lines = [(normalize_chars(t).strip(), s) for t, s in sized_lines] or [
        (t, None) for t in first.split("\n")
    ]
    fields: dict[str, Any] = {"type": "local-document"}
    run = title_line_run(lines)
    page_title = re.sub(
        rf"[\s{re.escape(MARKERS)}]+$", "", join_wrapped_lines([lines[i][0] for i in run], pages)
    )
    fields["title"] = title_from_metadata(meta.get("/Title", ""), first) or page_title
    page_authors = authors_on_page(lines, run[-1] + 1) if run else []
    meta_authors = authors_from_metadata(meta.get("/Author", ""))
    if page_authors and (
        not meta_authors or meta_authors[0].split()[-1].casefold() in page_authors[0].casefold()
    ):
        fields["authors"] = page_authors
    elif meta_authors:
        fields["authors"] = meta_authors
    fields["year"] = _pdf_year(first, meta)
    doi = _pdf_doi(pages, meta)
    if doi:
        fields.update(doi_fields(doi))
    head = [t for t, _ in lines[:6]]
    for line in head[:4]:
        m = re.match(r"(Proceedings of .+?)(?:,\s*pages?\s.*)?$", line)
        if m:
            fields.update(type="conference-paper", peer_reviewed=True, venue=m.group(1))
            break
    subject = normalize_ws(meta.get("/Subject", ""))
    if "venue" not in fields and subject and subject in head:
        fields["venue"] = subject
    printed = publication_fields(pages)  # "Clinical Science (2014) 126, 305-313" and the like
    if printed.get("venue") and "venue" not in fields:
        fields["venue"] = printed["venue"]
    numbers = {k: printed[k] for k in ("volume", "issue", "pages") if k in printed}
    if numbers:
        fields["extra"] = {**fields.get("extra", {}), **numbers}
    fields["abstract"] = _pdf_abstract(first)
    return fields


@contextmanager
def _quiet_pypdf() -> Iterator[None]:
    """pypdf logs a warning per odd font; those are noise for a batch ingest."""
    logger = logging.getLogger("pypdf")
    old = logger.level
    logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        logger.setLevel(old)


def read_pdf(path: Path) -> tuple[dict[str, Any], list[str]]:
    from pypdf import PdfReader

    with _quiet_pypdf(), path.open("rb") as fh:
        try:
            reader = PdfReader(fh)
            if reader.is_encrypted and not reader.decrypt(""):
                raise UnreadablePdf("encrypted PDF (password required)")
            raw_pages: list[str] = []
            sized_lines: list[tuple[str, float | None]] = []
            for i, page in enumerate(reader.pages):
                try:
                    if i == 0:
                        text, sized_lines = extract_sized_lines(page)
                    else:
                        text = page.extract_text()
                except Exception:  # one broken page must not lose the others
                    text = ""
                raw_pages.append(text or "")
            try:
                meta = {str(k): str(v) for k, v in (reader.metadata or {}).items()}
            except Exception:
                meta = {}
            try:
                root: Any = reader.trailer["/Root"]
                pdf_labels = list(reader.page_labels) if "/PageLabels" in root else None
            except Exception:  # a damaged label tree costs the labels, never the document
                pdf_labels = None
        except UnreadablePdf:
            raise
        except Exception as exc:  # pypdf raises many types for damaged or encrypted files
            raise UnreadablePdf(f"unreadable PDF ({type(exc).__name__}: {exc})") from exc
    pages = normalize_pages(raw_pages)
    if not any(p.strip() for p in pages):
        raise UnreadablePdf("no extractable text (scanned PDF?)")
    fields = pdf_bibliography(sized_lines, pages, meta)
    fields["title"] = fields["title"] or path.stem.replace("_", " ")
    fields["page_labels"] = printed_labels(pages, pdf_labels)
    return fields, list(pages)
