"""arXiv API (Atom 1.0): search and id look-up of preprints, with their PDF links.

Parsed with the standard library's ElementTree: with expat >= 2.4.1 it refuses entity
expansion bombs and it never fetches external entities, so defusedxml adds nothing here.
arXiv asks for at most one request every three seconds (set in ``http_config.DEFAULT_INTERVALS``).
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from typing import Any

from agents.providers.errors import ProviderResponseError
from agents.providers.records import Provider, Source, clean_arxiv_id, clean_doi, clean_text

API_URL = "https://export.arxiv.org/api/query"
_NS = {"atom": "http://www.w3.org/2005/Atom", "arxiv": "http://arxiv.org/schemas/atom",
       "opensearch": "http://a9.com/-/spec/opensearch/1.1/"}
_PAGE = 100  # ids are looked up in pages of this size (the API's own default page)
_CONFERENCE = re.compile(r"(?i)\b(conference|proceedings|proc\.|workshop|symposium|congress)\b")


def _text(node: ET.Element, path: str) -> str | None:
    found = node.find(path, _NS)
    return clean_text(found.text) if found is not None else None


def parse_feed(body: bytes | str, *, url: str = "") -> list[dict[str, Any]]:
    """Atom feed -> raw field dicts; an arXiv error entry becomes :class:`ProviderResponseError`."""
    try:
        root = ET.fromstring(body)
    except ET.ParseError as exc:
        raise ProviderResponseError(f"arXiv sent a feed that is not valid XML ({exc}); retry later",
                                    provider="arXiv", url=url) from None
    records = []
    for entry in root.findall("atom:entry", _NS):
        entry_id = _text(entry, "atom:id") or ""
        if "/api/errors" in entry_id:
            reason = _text(entry, "atom:summary") or "unspecified error"
            raise ProviderResponseError(f"arXiv rejected the request: {reason}. Use a valid arXiv id such as "
                                        "2401.01234 or hep-th/9901001", provider="arXiv", url=url, status=400)
        records.append(_entry(entry, entry_id))
    return records


def _entry(entry: ET.Element, entry_id: str) -> dict[str, Any]:
    links = {(ln.get("title") or ln.get("rel") or ""): ln.get("href")
             for ln in entry.findall("atom:link", _NS)}
    version = re.search(r"(v\d+)$", entry_id)
    authors, affiliations = [], {}
    for author in entry.findall("atom:author", _NS):
        name = _text(author, "atom:name")
        if name:
            authors.append(name)
            affs = [t for a in author.findall("arxiv:affiliation", _NS) if (t := clean_text(a.text))]
            if affs:
                affiliations[name] = affs
    doi = clean_doi(_text(entry, "arxiv:doi"))
    journal_ref = _text(entry, "arxiv:journal_ref")
    primary = entry.find("arxiv:primary_category", _NS)
    fields: dict[str, Any] = {
        "title": _text(entry, "atom:title"),
        "authors": authors,
        "abstract": _text(entry, "atom:summary"),
        "published": (_text(entry, "atom:published") or "")[:10],
        "arxiv_id": clean_arxiv_id(entry_id),
        "url": links.get("alternate") or entry_id,
        "pdf_url": links.get("pdf"),
        "type": "preprint",
        "peer_reviewed": False,
        "extra": {
            "arxiv_version": version.group(1) if version else None,
            "updated": _text(entry, "atom:updated"),
            "primary_category": primary.get("term") if primary is not None else None,
            "categories": [c.get("term") for c in entry.findall("atom:category", _NS) if c.get("term")],
            "comment": _text(entry, "arxiv:comment"),
            "journal_ref": journal_ref,
            "affiliations": affiliations,
        },
    }
    if doi:  # the authors declare a published version: describe that, keep the arXiv links
        conference = bool(journal_ref and _CONFERENCE.search(journal_ref))
        fields.update(doi=doi, venue=journal_ref, peer_reviewed=True,
                      type="conference-paper" if conference else "journal-article")
    return fields


class ArxivProvider(Provider):
    name = "arxiv"
    label = "arXiv"

    def _query(self, params: dict[str, Any]) -> list[dict[str, Any]]:
        base = {"search_query": "", "id_list": "", "sortBy": "relevance", "sortOrder": "descending",
                "start": 0}
        response = self.client.get(API_URL, params={**base, **params}, provider=self.label, accept=(400,))
        records = parse_feed(response.content, url=response.url)
        if response.status == 400:  # arXiv explains a 400 in an Atom error entry, raised above
            raise ProviderResponseError(f"arXiv answered HTTP 400 for {response.url}; check the query",
                                        provider=self.label, url=response.url, status=400)
        return records

    def _search(self, query: str, limit: int, start: int = 0, sort_by: str = "relevance") -> list[Source]:
        """``query`` uses arXiv's syntax (``ti:``, ``au:``, ``abs:``, ``cat:``, AND/OR); plain words work."""
        records = self._query({"search_query": query, "sortBy": sort_by, "start": start,
                               "max_results": limit})
        return self._finish_all(records)[:limit]

    def search(self, query: str, limit: int = 10, *, start: int = 0,
               sort_by: str = "relevance") -> list[Source]:
        """Up to ``limit`` preprints; ``sort_by`` is relevance, lastUpdatedDate or submittedDate."""
        return self._guard(lambda: self._search(query, min(max(1, int(limit)), 2000), start, sort_by), [])

    def lookup_many(self, arxiv_ids: Sequence[str]) -> list[Source]:
        """Look ids up (versions and URL prefixes are accepted); unknown ids are simply absent."""
        ids = [clean_arxiv_id(i) or str(i).strip() for i in arxiv_ids if str(i).strip()]

        def run() -> list[Source]:
            out: list[Source] = []
            for i in range(0, len(ids), _PAGE):
                page = ids[i : i + _PAGE]
                out += self._finish_all(self._query({"id_list": ",".join(page), "max_results": _PAGE}))
            return out

        return self._guard(run, []) if ids else []

    def lookup_arxiv(self, arxiv_id: str) -> Source | None:
        wanted = clean_arxiv_id(arxiv_id)
        hits = self.lookup_many([arxiv_id])
        return next((h for h in hits if wanted is None or h.get("arxiv_id") == wanted), None)
