"""The paper tools' view of the scholarly providers, behind a small protocol.

``search_papers``, ``fetch_paper_metadata`` and ``fetch_open_access_pdf`` need three things:
search, resolve an identifier, fetch a PDF's pages. :class:`ScholarlyBackend` names exactly those,
so tests hand the toolbox a fake and the real :class:`ProvidersBackend` imports
``agents.providers`` only when a paper tool is first used.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

from orchestrator.model.scholarly_ids import clean_arxiv_id, clean_doi

__all__ = ["ProvidersBackend", "ScholarlyBackend"]


class ScholarlyBackend(Protocol):
    """What the paper tools need from the scholarly providers (records are Source-shaped dicts)."""

    def search(self, query: str, limit: int) -> list[dict[str, Any]]: ...

    def resolve(self, identifier: str) -> dict[str, Any] | None: ...

    def fetch_pdf(self, source: Mapping[str, Any]) -> list[str] | None: ...


class ProvidersBackend:
    """:class:`ScholarlyBackend` over ``agents.providers`` (imported on first use).

    ``providers`` defaults to the configured scholarly APIs; ``fetch`` to ``pdf_fetch.fetch_pdf``
    (which refuses unsafe URLs and non-PDFs). PDF links come from provider metadata only, never
    from the model, so a prompt injection cannot point the fetcher at an arbitrary URL.
    """

    def __init__(self, providers: Sequence[Any] | None = None, fetch: Callable[[str], Any] | None = None):
        self.providers = providers
        self.fetch = fetch

    def search(self, query: str, limit: int) -> list[dict[str, Any]]:
        from agents.providers import registry

        return registry.search_all(query, limit, self.providers)  # a list that also carries .notices

    def resolve(self, identifier: str) -> dict[str, Any] | None:
        from agents.providers import registry

        doi, arxiv_id = clean_doi(identifier), clean_arxiv_id(identifier)
        if not doi and not arxiv_id:
            return None
        found = registry.resolve(doi=doi, arxiv_id=arxiv_id, providers=self.providers)
        return dict(found) if found else None

    def fetch_pdf(self, source: Mapping[str, Any]) -> list[str] | None:
        """Try the record's PDF links in turn; every failure reason is reported if none works."""
        from agents.providers.pdf_fetch import PdfFetchError, fetch_pdf

        fetch = self.fetch or fetch_pdf
        urls = [source.get("pdf_url"), *((source.get("extra") or {}).get("pdf_urls") or [])]
        if source.get("arxiv_id"):
            urls.append(f"https://arxiv.org/pdf/{source['arxiv_id']}")
        errors = []
        for url in dict.fromkeys(u for u in urls if isinstance(u, str) and u):
            try:
                return list(fetch(url).pages)
            except PdfFetchError as exc:
                errors.append(str(exc))
        if errors:
            raise PdfFetchError("; ".join(errors))
        return None
