"""Cross-provider search: the configured providers, and duplicates folded into one record.

:func:`search_all` asks several providers and folds duplicates (same DOI, same arXiv id, or same
title and year) into one record that keeps the peer-reviewed metadata, the arXiv id and the most
fetchable PDF.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from agents.providers.arxiv import ArxivProvider
from agents.providers.crossref import CrossrefProvider
from agents.providers.http import HttpClient, shared_client
from agents.providers.http_config import HttpConfig
from agents.providers.openalex import OpenAlexProvider
from agents.providers.records import PROVIDER_NAMES, Provider, Source, finish_source, hard_dois, title_key
from agents.providers.semanticscholar import SemanticScholarProvider
from orchestrator.model.scholarly_ids import DisjointSets


def default_providers(config: Mapping[str, Any] | None = None, *, client: HttpClient | None = None,
                      env: Mapping[str, str] | None = None) -> list[Provider]:
    """Providers named by ``config['providers']`` or ``CCONDUCTOR_PROVIDERS`` (comma list; default all).

    Keys come from ``config`` (``semantic_scholar_api_key``, ``openalex_api_key``) or the
    environment (``SEMANTIC_SCHOLAR_API_KEY``, ``OPENALEX_API_KEY``); one client is shared so
    rate limits and offline skipping apply across providers. ``config['http']`` feeds HttpConfig.
    """
    env = os.environ if env is None else env
    cfg = dict(config or {})
    names = cfg.get("providers") or [n for n in env.get("CCONDUCTOR_PROVIDERS", "").split(",") if n.strip()]
    names = [str(n).strip().lower().replace("_", "").replace("-", "") for n in names] or list(PROVIDER_NAMES)
    unknown = [n for n in names if n not in PROVIDER_NAMES]
    if unknown:
        raise ValueError(f"unknown provider(s) {', '.join(unknown)}; choose from {', '.join(PROVIDER_NAMES)}")
    if client is None:
        http_cfg = {**({"contact_email": cfg["contact_email"]} if cfg.get("contact_email") else {}),
                    **dict(cfg.get("http") or {})}
        client = HttpClient(HttpConfig.from_config(http_cfg, env)) if http_cfg else shared_client()
    s2_key = cfg.get("semantic_scholar_api_key") or env.get("SEMANTIC_SCHOLAR_API_KEY") or None
    openalex_key = cfg.get("openalex_api_key") or env.get("OPENALEX_API_KEY") or None
    made: dict[str, Callable[[], Provider]] = {
        "openalex": lambda: OpenAlexProvider(client, api_key=openalex_key),
        "crossref": lambda: CrossrefProvider(client),
        "semanticscholar": lambda: SemanticScholarProvider(client, api_key=s2_key),
        "arxiv": lambda: ArxivProvider(client),
    }
    return [made[n]() for n in names]


# --- de-duplication --------------------------------------------------------------------------


def _keys(source: Source) -> list[tuple[Any, ...]]:
    keys: list[tuple[Any, ...]] = []
    if source.get("doi"):
        keys.append(("doi", source["doi"]))
    if source.get("arxiv_id"):
        keys.append(("arxiv", source["arxiv_id"]))
    tkey, year = title_key(source.get("title")), source.get("year")
    if len(tkey) >= 12 and " " in tkey:
        keys.append(("title", tkey, year))
        if year is not None and tkey.count(" ") >= 4:  # long titles also match a year apart (preprint, print)
            keys.append(("title", tkey, year + 1))
    return keys


def _pdf_rank(source: Source) -> tuple[int, int]:
    """arXiv PDFs first (fetchable without bot walls, stable per version), then versions of record."""
    url = source.get("pdf_url") or ""
    return (0 if "arxiv.org/" in url else 1, 0 if source.get("peer_reviewed") else 1)


def _merge(records: list[Source]) -> Source:
    if len(records) == 1:
        return records[0]
    order = {id(r): i for i, r in enumerate(records)}
    best = min(records, key=lambda r: (not r.get("peer_reviewed"), not hard_dois([r]),
                                       r.get("type") == "preprint", order[id(r)]))
    out: Source = {k: v for k, v in best.items() if k not in ("id", "extra")}
    for record in records:
        for key, value in record.items():
            if key not in ("id", "extra"):
                out.setdefault(key, value)
    hard = [r["doi"] for r in [best, *records] if hard_dois([r])]
    if hard:
        out["doi"] = hard[0]
    pdfs = sorted((r for r in records if r.get("pdf_url")), key=lambda r: (_pdf_rank(r), order[id(r)]))
    if pdfs:
        out["pdf_url"] = pdfs[0]["pdf_url"]
    abstracts = [r["abstract"] for r in records if r.get("abstract")]
    if abstracts:
        out["abstract"] = max(abstracts, key=len)
    counts = [r["citation_count"] for r in records if isinstance(r.get("citation_count"), int)]
    if counts:
        out["citation_count"] = max(counts)
    out["peer_reviewed"] = True if any(r.get("peer_reviewed") for r in records) else best.get("peer_reviewed")
    extra: dict[str, Any] = {}
    for record in [best, *records]:
        for key, value in (record.get("extra") or {}).items():
            extra.setdefault(key, value)
    names = (str((r.get("extra") or {}).get("provider", "?")) for r in records)
    extra["providers"] = list(dict.fromkeys(names))
    alternatives = list(dict.fromkeys(r["pdf_url"] for r in pdfs[1:] if r["pdf_url"] != out.get("pdf_url")))
    if alternatives:
        extra["pdf_urls"] = alternatives
    out["extra"] = extra
    merged = finish_source(out)
    assert merged is not None
    return merged


def merge_sources(lists: Sequence[Sequence[Source]], limit: int | None = None) -> list[Source]:
    """Fold duplicates across providers' result lists (given in priority order).

    Results are interleaved by rank (every provider's first hit, then every second hit...), so
    truncating to ``limit`` keeps each provider's best; the order is a pure function of the input.
    """
    flat = sorted(((rank, p, s) for p, lst in enumerate(lists) for rank, s in enumerate(lst)),
                  key=lambda t: (t[0], t[1]))
    sets = DisjointSets(len(flat))
    members: dict[int, list[int]] = {i: [i] for i in range(len(flat))}
    owner: dict[tuple[Any, ...], int] = {}
    for i, (_, _, source) in enumerate(flat):
        for key in _keys(source):
            if key not in owner:
                owner[key] = i
                continue
            a, b = sorted((sets.find(i), sets.find(owner[key])))
            if a == b:
                continue
            if key[0] == "title":  # never fold two different journal DOIs on a title match
                da = hard_dois(flat[k][2] for k in members[a])
                db = hard_dois(flat[k][2] for k in members[b])
                if da and db and not da & db:
                    continue
            sets.union(a, b)
            members[a].extend(members.pop(b))
    groups = sorted(members.values(), key=min)
    merged = [_merge([flat[k][2] for k in sorted(group, key=lambda k: (flat[k][1], flat[k][0]))])
              for group in groups]
    return merged[:limit] if limit is not None else merged


class SearchResults(list[Source]):
    """A list of merged Sources that also carries the providers' notices (offline, rate limits...)."""

    def __init__(self, sources: Iterable[Source] = (), notices: Iterable[str] = ()) -> None:
        super().__init__(sources)
        self.notices = list(notices)


def search_all(query: str, limit: int = 10, providers: Sequence[Provider] | None = None, *,
               parallel: bool = True) -> SearchResults:
    """Search every provider (concurrently: each host has its own rate limit), then de-duplicate."""
    providers = list(default_providers() if providers is None else providers)
    before = [len(p.notices) for p in providers]

    def run(p: Provider) -> list[Source]:
        return p.search(query, limit)

    if parallel and len(providers) > 1:
        with ThreadPoolExecutor(max_workers=len(providers), thread_name_prefix="cconductor-search") as pool:
            lists = list(pool.map(run, providers))
    else:
        lists = [run(p) for p in providers]
    notices = [n for p, k in zip(providers, before, strict=True) for n in p.notices[k:]]
    return SearchResults(merge_sources(lists, limit), notices)


def resolve(*, doi: str | None = None, arxiv_id: str | None = None,
            providers: Sequence[Provider] | None = None) -> Source | None:
    """Look one work up by DOI or arXiv id in every provider that can, merged (citation checking)."""
    providers = list(default_providers() if providers is None else providers)
    found: list[list[Source]] = []
    for p in providers:
        hit = None
        if doi and hasattr(p, "lookup_doi"):
            hit = p.lookup_doi(doi)
        if hit is None and arxiv_id and hasattr(p, "lookup_arxiv"):
            hit = p.lookup_arxiv(arxiv_id)
        if hit is not None:
            found.append([hit])
    merged = merge_sources(found)
    return merged[0] if merged else None
