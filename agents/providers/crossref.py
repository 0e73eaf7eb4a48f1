"""Crossref REST ``/works``: search and DOI look-up, the registry of record for DOIs.

Crossref's abstracts are JATS XML fragments (``<jats:p>``), stripped to plain text here. It
says nothing reliable about open access, so a PDF link is kept only when the work carries a
Creative Commons licence and the publisher labelled the link ``application/pdf``. The contact
address rides in the User-Agent, which is how Crossref's polite pool recognises callers.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import quote

from agents.providers.records import Provider, Source, clean_doi, clean_text, person, strip_markup

API_URL = "https://api.crossref.org"
_TYPES = {"journal-article": "journal-article", "proceedings-article": "conference-paper",
          "posted-content": "preprint", "book": "book", "monograph": "book", "edited-book": "book",
          "reference-book": "book", "book-set": "book", "book-chapter": "book-chapter",
          "book-section": "book-chapter", "book-part": "book-chapter", "reference-entry": "book-chapter",
          "dissertation": "thesis", "report": "report", "report-component": "report", "dataset": "dataset",
          "standard": "documentation"}
_DATE_FIELDS = ("published", "issued", "published-print", "published-online")


def _date(work: Mapping[str, Any]) -> tuple[int | None, str | None]:
    """Year and YYYY-MM-DD from the first publication date with a year (never the deposit date)."""
    for name in _DATE_FIELDS:
        parts = ((work.get(name) or {}).get("date-parts") or [[None]])[0] or [None]
        if isinstance(parts[0], int):
            full = f"{parts[0]:04d}-{parts[1]:02d}-{parts[2]:02d}" if len(parts) >= 3 and all(
                isinstance(p, int) for p in parts[:3]) else None
            return parts[0], full
    return None, None


def _first(values: Any) -> str | None:
    if isinstance(values, list):
        return next((clean_text(v) for v in values if clean_text(v)), None)
    return clean_text(values)


def _open_pdf(work: Mapping[str, Any]) -> str | None:
    licensed = any("creativecommons.org" in str(lic.get("URL", "")) for lic in work.get("license") or [])
    if not licensed:
        return None
    for link in work.get("link") or []:
        if link.get("content-type") == "application/pdf" and link.get("URL"):
            return str(link["URL"])
    return None


def _authors(people: Sequence[Mapping[str, Any]] | None) -> list[str]:
    names = [person(p.get("given"), p.get("family")) or clean_text(p.get("name")) for p in people or []]
    return [n for n in names if n]


def normalize_work(work: Mapping[str, Any]) -> dict[str, Any]:
    year, published = _date(work)
    title = _first(work.get("title"))
    subtitle = _first(work.get("subtitle"))
    if title and subtitle and subtitle.casefold() not in title.casefold():
        title = f"{title}: {subtitle}"
    kind = _TYPES.get(str(work.get("type") or ""), "other")
    doi = clean_doi(work.get("DOI"))
    return {
        "title": title,
        "authors": _authors(work.get("author")) or (_authors(work.get("editor")) if kind == "book" else []),
        "year": year,
        "published": published,
        "venue": _first(work.get("container-title")),
        "publisher": work.get("publisher"),
        "doi": doi,
        "url": work.get("URL") or (f"https://doi.org/{doi}" if doi else None),
        "pdf_url": _open_pdf(work),
        "type": kind,
        "citation_count": work.get("is-referenced-by-count"),
        "abstract": strip_markup(work.get("abstract")),
        "language": work.get("language"),
        "extra": {
            "crossref_type": work.get("type"),
            "issn": work.get("ISSN"),
            "isbn": work.get("ISBN"),
            "volume": work.get("volume"),
            "issue": work.get("issue"),
            "page": work.get("page"),
            "reference_count": work.get("references-count"),
            "license": list(dict.fromkeys(str(lic["URL"]) for lic in work.get("license") or []
                                          if lic.get("URL"))),
        },
    }


class CrossrefProvider(Provider):
    name = "crossref"
    label = "Crossref"

    def _get(self, path: str, params: Mapping[str, Any] | None = None, accept: tuple[int, ...] = ()) -> Any:
        hint = "set CCONDUCTOR_CONTACT_EMAIL to use Crossref's polite pool"
        response = self.client.get(f"{API_URL}{path}", params=params, provider=self.label, accept=accept,
                                   rate_limit_hint=hint)
        return None if response.status == 404 else response.json()

    def _search(self, query: str, limit: int) -> list[Source]:
        data = self._get("/works", {"query": query, "rows": min(limit, 1000)})
        items = ((data or {}).get("message") or {}).get("items") or []
        return self._finish_all(normalize_work(w) for w in items)[:limit]

    def lookup_doi(self, doi: str) -> Source | None:
        """The registered metadata of one DOI, or ``None`` if Crossref does not know it."""
        bare = clean_doi(doi) or doi.strip()

        def run() -> Source | None:
            data = self._get(f"/works/{quote(bare, safe='/:;()')}", accept=(404,))
            message = (data or {}).get("message")
            return self._finish(normalize_work(message)) if isinstance(message, dict) else None

        return self._guard(run, None)
