"""Scholarly sources on the network: arXiv, OpenAlex, Crossref and Semantic Scholar, plus PDFs.

Each provider returns Source dicts that validate against our ``sources.json`` schema.
``search_all`` queries several providers and de-duplicates; ``fetch_pdf`` downloads an
open-access PDF safely and extracts its pages. All traffic goes through ``http.HttpClient``.

    results = search_all("heat-bath random walks", limit=5, providers=default_providers())
    results.notices   # e.g. "arXiv (export.arxiv.org) cannot be reached: ..." when offline
"""

from agents.providers.arxiv import ArxivProvider
from agents.providers.crossref import CrossrefProvider
from agents.providers.errors import ProviderError, ProviderRateLimited, ProviderResponseError, ProviderUnavailable
from agents.providers.http import HttpClient, shared_client
from agents.providers.http_cache import HttpCache, HttpResponse
from agents.providers.http_config import HttpConfig
from agents.providers.openalex import OpenAlexProvider
from agents.providers.pdf_fetch import (
    FetchedPdf,
    NotPdfError,
    PdfFetcher,
    PdfFetchError,
    PdfHostUnavailable,
    PdfTooLargeError,
    UnsafeUrlError,
    check_url,
    fetch_pdf,
)
from agents.providers.rate_limit import RateLimiter
from agents.providers.records import (
    PROVIDER_NAMES,
    Provider,
    Source,
    clean_arxiv_id,
    clean_doi,
    finish_source,
    source_id,
)
from agents.providers.registry import SearchResults, default_providers, merge_sources, resolve, search_all
from agents.providers.semanticscholar import SemanticScholarProvider

__all__ = [
    "PROVIDER_NAMES",
    "ArxivProvider",
    "CrossrefProvider",
    "FetchedPdf",
    "HttpCache",
    "HttpClient",
    "HttpConfig",
    "HttpResponse",
    "NotPdfError",
    "OpenAlexProvider",
    "PdfFetchError",
    "PdfFetcher",
    "PdfHostUnavailable",
    "PdfTooLargeError",
    "Provider",
    "ProviderError",
    "ProviderRateLimited",
    "ProviderResponseError",
    "ProviderUnavailable",
    "RateLimiter",
    "SearchResults",
    "SemanticScholarProvider",
    "Source",
    "UnsafeUrlError",
    "check_url",
    "clean_arxiv_id",
    "clean_doi",
    "default_providers",
    "fetch_pdf",
    "finish_source",
    "merge_sources",
    "resolve",
    "search_all",
    "shared_client",
    "source_id",
]
