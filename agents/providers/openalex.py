"""OpenAlex ``/works``: search, DOI look-up, references and citations (CC0 metadata).

OpenAlex ships abstracts as an inverted index (word -> positions) for licensing reasons; we
rebuild the text. Requests name a ``mailto`` (the polite pool) when a contact is configured and
carry ``api_key`` only as a secret parameter, so it never reaches the cache or the logs.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

from agents.providers.http import HttpClient
from agents.providers.records import Provider, Source, clean_arxiv_id, clean_doi, clean_text

API_URL = "https://api.openalex.org"
#: Only what normalization reads: full Work objects are ~16 KB each (reference lists, concepts...).
SELECT = ("id,doi,title,display_name,publication_year,publication_date,language,type,type_crossref,ids,"
          "authorships,primary_location,best_oa_location,locations,open_access,cited_by_count,"
          "abstract_inverted_index,referenced_works_count")
_TYPES = {"journal-article": "journal-article", "proceedings-article": "conference-paper",
          "posted-content": "preprint", "preprint": "preprint", "book": "book", "monograph": "book",
          "edited-book": "book", "book-chapter": "book-chapter", "book-section": "book-chapter",
          "dissertation": "thesis", "report": "report", "dataset": "dataset", "standard": "documentation"}
_VENUE_TYPES = {"journal": "journal-article", "conference": "conference-paper", "repository": "preprint"}


def abstract_from_index(index: Mapping[str, list[int]] | None) -> str | None:
    """Rebuild an abstract from OpenAlex's ``abstract_inverted_index``."""
    if not index:
        return None
    positions = {pos: word for word, places in index.items() for pos in places}
    return clean_text(" ".join(positions[i] for i in sorted(positions)))


def short_id(value: Any) -> str | None:
    """``https://openalex.org/W123`` -> ``W123``."""
    match = re.search(r"\b([WASIPCT]\d+)$", str(value or ""))
    return match.group(1) if match else None


def _work_type(work: Mapping[str, Any], source_type: str | None) -> str:
    kind = str(work.get("type") or "")
    if kind in ("article", "review", "letter", "editorial", "erratum", "paratext", "other", ""):
        crossref = str(work.get("type_crossref") or "")
        if kind in ("article", "review") and crossref in _TYPES:
            return _TYPES[crossref]
        if kind in ("article", "review") and source_type in _VENUE_TYPES:
            return _VENUE_TYPES[source_type]
        return "other"
    if kind == "peer-review":
        return "other"
    return _TYPES.get(kind, "other")


def _arxiv_id(work: Mapping[str, Any]) -> str | None:
    doi = clean_doi(work.get("doi"))
    if doi and doi.startswith("10.48550/arxiv."):
        return clean_arxiv_id(doi)
    for location in work.get("locations") or []:
        for key in ("landing_page_url", "pdf_url"):
            url = str((location or {}).get(key) or "")
            if "arxiv.org/" in url:
                found = clean_arxiv_id(url)
                if found:
                    return found
    return None


def _pdf_url(work: Mapping[str, Any]) -> str | None:
    candidates = [work.get("best_oa_location"), work.get("primary_location"), *(work.get("locations") or [])]
    for location in candidates:
        if location and location.get("is_oa") and location.get("pdf_url"):
            return str(location["pdf_url"])
    return None


def normalize_work(work: Mapping[str, Any]) -> dict[str, Any]:
    primary = work.get("primary_location") or {}
    venue = primary.get("source") or {}
    authors = [clean_text((a.get("author") or {}).get("display_name")) or clean_text(a.get("raw_author_name"))
               for a in work.get("authorships") or []]
    ids = work.get("ids") or {}
    open_access = work.get("open_access") or {}
    return {
        "title": work.get("title") or work.get("display_name"),
        "authors": [a for a in authors if a],
        "year": work.get("publication_year"),
        "published": work.get("publication_date"),
        "venue": venue.get("display_name"),
        "publisher": venue.get("host_organization_name"),
        "doi": clean_doi(work.get("doi")),
        "arxiv_id": _arxiv_id(work),
        "url": primary.get("landing_page_url") or work.get("doi") or work.get("id"),
        "pdf_url": _pdf_url(work),
        "type": _work_type(work, venue.get("type")),
        "citation_count": work.get("cited_by_count"),
        "abstract": abstract_from_index(work.get("abstract_inverted_index")),
        "language": work.get("language"),
        "extra": {
            "openalex_id": short_id(work.get("id")),
            "openalex_type": work.get("type"),
            "pmid": str(ids.get("pmid") or "").rsplit("/", 1)[-1] or None,
            "oa_status": open_access.get("oa_status"),
            "referenced_works_count": work.get("referenced_works_count"),
        },
    }


class OpenAlexProvider(Provider):
    name = "openalex"
    label = "OpenAlex"

    def __init__(self, client: HttpClient | None = None, *, api_key: str | None = None,
                 raise_errors: bool = False, select: str | None = SELECT) -> None:
        super().__init__(client, raise_errors=raise_errors)
        self._api_key = api_key
        self.select = select

    def _get(self, path: str, params: Mapping[str, Any] | None = None, accept: tuple[int, ...] = ()) -> Any:
        query = dict(params or {})
        if self.select:
            query["select"] = self.select
        if self.client.config.contact_email:
            query["mailto"] = self.client.config.contact_email
        secret = {"api_key": self._api_key} if self._api_key else None
        response = self.client.get(f"{API_URL}{path}", params=query, secret_params=secret,
                                   provider=self.label, accept=accept,
                                   rate_limit_hint="set OPENALEX_API_KEY for a higher limit")
        return None if response.status == 404 else response.json()

    def _works(self, params: Mapping[str, Any], limit: int) -> list[Source]:
        data = self._get("/works", {**params, "per_page": min(max(limit, 1), 200)})
        return self._finish_all(normalize_work(w) for w in (data or {}).get("results") or [])[:limit]

    def _search(self, query: str, limit: int) -> list[Source]:
        return self._works({"search": query}, limit)

    def lookup_doi(self, doi: str) -> Source | None:
        bare = clean_doi(doi) or doi.strip()
        work = self._guard(lambda: self._get(f"/works/doi:{quote(bare, safe='/:')}", accept=(404,)), None)
        return self._finish(normalize_work(work)) if work else None

    def lookup_arxiv(self, arxiv_id: str) -> Source | None:
        bare = clean_arxiv_id(arxiv_id) or arxiv_id.strip()
        return self.lookup_doi(f"10.48550/arxiv.{bare}")

    def _work_id(self, work: str) -> str | None:
        found = short_id(work)
        if found:
            return found
        hit = self.lookup_doi(work)
        return str(hit["extra"]["openalex_id"]) if hit and hit.get("extra", {}).get("openalex_id") else None

    def references(self, work: str, limit: int = 50) -> list[Source]:
        """Works that ``work`` (an OpenAlex id or a DOI) cites."""
        return self._guard(lambda: self._linked("cited_by", work, limit), [])

    def citations(self, work: str, limit: int = 50) -> list[Source]:
        """Works citing ``work`` (an OpenAlex id or a DOI), most cited first."""
        return self._guard(lambda: self._linked("cites", work, limit), [])

    def _linked(self, relation: str, work: str, limit: int) -> list[Source]:
        work_id = self._work_id(work)
        if not work_id:
            return []
        return self._works({"filter": f"{relation}:{work_id}", "sort": "cited_by_count:desc"}, limit)
