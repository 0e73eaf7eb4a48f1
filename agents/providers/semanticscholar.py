"""Semantic Scholar Graph API: search, paper look-up, references, citations and snippet search.

The key (``SEMANTIC_SCHOLAR_API_KEY``) is optional: without one, requests share a public pool
that often answers 429, which the HTTP layer retries politely. It is sent as the ``x-api-key``
secret header only. Snippet search returns full-text passages, useful as evidence leads.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import quote

from agents.providers.http import HttpClient
from agents.providers.records import (
    Provider,
    Source,
    clean_arxiv_id,
    clean_doi,
    clean_text,
    is_preprint_doi,
    is_preprint_venue,
)

API_URL = "https://api.semanticscholar.org/graph/v1"
FIELDS = ("title", "externalIds", "url", "abstract", "venue", "publicationVenue", "year", "publicationDate",
          "journal", "authors", "citationCount", "influentialCitationCount", "isOpenAccess", "openAccessPdf",
          "publicationTypes", "fieldsOfStudy", "tldr")
_LINK_FIELDS = tuple(f for f in FIELDS if f != "tldr")  # tldr is not offered on references/citations
#: S2 publication types in order of precedence (a "JournalArticle, Conference" is a conference paper)
_TYPES = {"Conference": "conference-paper", "Book": "book", "BookSection": "book-chapter",
          "Dataset": "dataset",
          "JournalArticle": "journal-article", "Review": "journal-article", "Study": "journal-article",
          "ClinicalTrial": "journal-article", "MetaAnalysis": "journal-article",
          "CaseReport": "journal-article", "News": "news-article", "Editorial": "other",
          "LettersAndComments": "other"}


def _paper_type(paper: Mapping[str, Any], venue: str | None, doi: str | None, arxiv_id: str | None) -> str:
    kinds = set(paper.get("publicationTypes") or [])
    preprint_only = (arxiv_id or doi) and (not doi or is_preprint_doi(doi))
    if preprint_only and (not venue or is_preprint_venue(venue)):  # "JournalArticle" in venue "ArXiv"
        return "preprint"
    return next((kind for name, kind in _TYPES.items() if name in kinds), "other")


def normalize_paper(paper: Mapping[str, Any]) -> dict[str, Any]:
    ids = paper.get("externalIds") or {}
    journal = paper.get("journal") or {}
    pub_venue = paper.get("publicationVenue") or {}
    venue = (clean_text(journal.get("name")) or clean_text(paper.get("venue"))
             or clean_text(pub_venue.get("name")))
    doi = clean_doi(ids.get("DOI"))
    arxiv_id = clean_arxiv_id(ids.get("ArXiv"))
    pdf = paper.get("openAccessPdf") or {}
    tldr = paper.get("tldr") or {}
    return {
        "title": paper.get("title"),
        "authors": [a.get("name") for a in paper.get("authors") or [] if a.get("name")],
        "year": paper.get("year"),
        "published": paper.get("publicationDate"),
        "venue": venue,
        "doi": doi,
        "arxiv_id": arxiv_id,
        "url": paper.get("url") or (f"https://www.semanticscholar.org/paper/{paper['paperId']}"
                                    if paper.get("paperId") else None),
        "pdf_url": pdf.get("url") or None,
        "type": _paper_type(paper, venue, doi, arxiv_id),
        "citation_count": paper.get("citationCount"),
        "abstract": paper.get("abstract"),
        "extra": {
            "s2_paper_id": paper.get("paperId"),
            "corpus_id": ids.get("CorpusId") or paper.get("corpusId"),
            "pmid": ids.get("PubMed"),
            "influential_citation_count": paper.get("influentialCitationCount"),
            "fields_of_study": paper.get("fieldsOfStudy"),
            "tldr": tldr.get("text"),
            "publication_types": paper.get("publicationTypes"),
        },
    }


class SemanticScholarProvider(Provider):
    name = "semanticscholar"
    label = "Semantic Scholar"

    def __init__(self, client: HttpClient | None = None, *, api_key: str | None = None,
                 raise_errors: bool = False) -> None:
        super().__init__(client, raise_errors=raise_errors)
        self._api_key = api_key

    def _get(self, path: str, params: Mapping[str, Any] | None = None, accept: tuple[int, ...] = ()) -> Any:
        secret = {"x-api-key": self._api_key} if self._api_key else None
        response = self.client.get(f"{API_URL}{path}", params=params, secret_headers=secret,
                                   provider=self.label, accept=accept,
                                   rate_limit_hint="set SEMANTIC_SCHOLAR_API_KEY for a higher limit")
        return None if response.status == 404 else response.json()

    def _search(self, query: str, limit: int, offset: int = 0,
                fields: Sequence[str] = FIELDS) -> list[Source]:
        params = {"query": query, "fields": ",".join(fields), "offset": offset, "limit": min(limit, 100)}
        data = self._get("/paper/search", params)
        return self._finish_all(normalize_paper(p) for p in (data or {}).get("data") or [])[:limit]

    def search(self, query: str, limit: int = 10, *, offset: int = 0,
               fields: Sequence[str] = FIELDS) -> list[Source]:
        return self._guard(lambda: self._search(query, max(1, int(limit)), offset, fields), [])

    def paper(self, paper_id: str, fields: Sequence[str] = FIELDS) -> Source | None:
        """One paper by any S2 id form: sha, ``CorpusId:``, ``DOI:``, ``ARXIV:``, ``PMID:``, ``URL:``..."""

        def run() -> Source | None:
            data = self._get(f"/paper/{quote(paper_id.strip(), safe='/:')}", {"fields": ",".join(fields)},
                             accept=(404,))
            return self._finish(normalize_paper(data)) if isinstance(data, dict) else None

        return self._guard(run, None)

    def lookup_doi(self, doi: str) -> Source | None:
        return self.paper(f"DOI:{clean_doi(doi) or doi.strip()}")

    def lookup_arxiv(self, arxiv_id: str) -> Source | None:
        return self.paper(f"ARXIV:{clean_arxiv_id(arxiv_id) or arxiv_id.strip()}")

    def _linked(self, paper_id: str, relation: str, key: str, limit: int, fields: Sequence[str],
                page_size: int) -> list[Source]:
        out: list[Source] = []
        offset: int | None = 0
        while offset is not None and len(out) < limit:
            params = {"fields": ",".join(fields), "offset": offset, "limit": min(page_size, limit - len(out))}
            data = self._get(f"/paper/{quote(paper_id.strip(), safe='/:')}/{relation}", params) or {}
            rows = data.get("data") or []
            out += self._finish_all(normalize_paper(row.get(key) or {}) for row in rows)
            offset = data.get("next") if rows else None
        return out[:limit]

    def references(self, paper_id: str, limit: int = 100, *, fields: Sequence[str] = _LINK_FIELDS,
                   page_size: int = 100) -> list[Source]:
        """Papers that ``paper_id`` cites (paged until ``limit`` or the end of the list)."""
        return self._guard(
            lambda: self._linked(paper_id, "references", "citedPaper", limit, fields, page_size), [])

    def citations(self, paper_id: str, limit: int = 100, *, fields: Sequence[str] = _LINK_FIELDS,
                  page_size: int = 100) -> list[Source]:
        """Papers citing ``paper_id``."""
        return self._guard(
            lambda: self._linked(paper_id, "citations", "citingPaper", limit, fields, page_size), [])

    def snippets(self, query: str, limit: int = 10) -> list[dict[str, Any]]:
        """Full-text passages matching ``query``: text, kind, section, score and the paper's title/authors."""

        def run() -> list[dict[str, Any]]:
            data = self._get("/snippet/search", {"query": query, "limit": limit}) or {}
            out = []
            for row in data.get("data") or []:
                snippet, paper = row.get("snippet") or {}, row.get("paper") or {}
                text = clean_text(snippet.get("text"))
                if text:
                    out.append({"text": text, "kind": snippet.get("snippetKind"),
                                "section": snippet.get("section"), "score": row.get("score"),
                                "title": clean_text(paper.get("title")),
                                "authors": list(paper.get("authors") or []),
                                "corpus_id": paper.get("corpusId")})
            return out

        return self._guard(run, [])
