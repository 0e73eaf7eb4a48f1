"""The Source record every provider produces, its normalisation helpers, and the Provider base class.

Every provider turns its API's records into the same Source dicts (``schemas/common.schema.json``
``$defs/source``) with :func:`finish_source`, so agents can cite them directly.
"""

from __future__ import annotations

import hashlib
import html
import re
import unicodedata
from collections.abc import Callable, Iterable, Mapping
from datetime import date
from typing import Any, ClassVar, TypeVar
from urllib.parse import urlsplit

from agents.providers.errors import ProviderError
from agents.providers.http import HttpClient, shared_client
from orchestrator.model.scholarly_ids import clean_arxiv_id, clean_doi
from orchestrator.model.terms import search_words

Source = dict[str, Any]
T = TypeVar("T")

SOURCE_KEYS = ("id", "type", "title", "authors", "year", "venue", "publisher", "peer_reviewed", "doi", "url",
               "pdf_url", "arxiv_id", "abstract", "published", "accessed_at", "citation_count", "language",
               "extra")
SOURCE_TYPES = frozenset({"journal-article", "conference-paper", "preprint", "book", "book-chapter", "thesis",
                          "report", "dataset", "web-page", "news-article", "documentation", "local-document",
                          "other"})
PROVIDER_NAMES = ("openalex", "crossref", "semanticscholar", "arxiv")
_LOCAL_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
#: arXiv, OSF, Research Square, Preprints.org, ChemRxiv, PsyArXiv..., SSRN, bioRxiv/medRxiv (dated DOIs only:
#: 10.1101 is also Cold Spring Harbor's journals)
_PREPRINT_DOI = re.compile(
    r"^10\.(48550|31219|21203|20944|26434|31234|31235)/|^10\.2139/ssrn|^10\.1101/\d{4}\.\d\d\.\d\d")


# --- normalization helpers ----------------------------------------------------------------------


def clean_text(value: Any) -> str | None:
    """Collapse whitespace; ``None`` for empty values."""
    if value is None:
        return None
    text = " ".join(str(value).split())
    return text or None


def strip_markup(value: Any) -> str | None:
    """Plain text from JATS/HTML abstracts: drop a leading 'Abstract' heading, tags and entities."""
    if not value:
        return None
    text = re.sub(r"^\s*<(?:jats:)?title[^>]*>\s*(?:abstract|summary)\s*</(?:jats:)?title>", " ", str(value),
                  flags=re.IGNORECASE)
    text = re.sub(r"</?[A-Za-z][\w:.-]*(?:\s[^<>]*)?/?>", " ", text)
    cleaned = clean_text(html.unescape(text))
    if cleaned and re.match(r"(?i)abstract\b[:.]?\s", cleaned) and len(cleaned) > 40:
        cleaned = re.sub(r"(?i)^abstract\b[:.]?\s+", "", cleaned)
    return cleaned


_VERSION_SUFFIX = re.compile(r"[(\[](preprint|pre-print|accepted manuscript|author'?s? version)[)\]]$")
_PREPRINT_VENUE = re.compile(
    r"(?i)\b(arxiv|biorxiv|medrxiv|ssrn|research square|preprints|chemrxiv|psyarxiv|osf)\b")


def is_preprint_doi(doi: str | None) -> bool:
    return bool(doi and _PREPRINT_DOI.search(doi.lower()))


def is_preprint_venue(venue: str | None) -> bool:
    return bool(venue and _PREPRINT_VENUE.search(venue))


def person(given: Any, family: Any) -> str | None:
    """'Given Family', or whichever part exists."""
    return clean_text(" ".join(p for p in (clean_text(given), clean_text(family)) if p))


def valid_date(value: Any) -> str | None:
    text = str(value or "")[:10]
    try:
        return date.fromisoformat(text).isoformat() if len(text) == 10 else None
    except ValueError:
        return None


def http_url(value: Any) -> str | None:
    """Absolute http(s) URL or ``None`` (the schema wants URIs; we only ever want web links)."""
    text = str(value or "").strip()
    parts = urlsplit(text)
    return text if parts.scheme in ("http", "https") and parts.netloc and " " not in text else None


def safe_id(prefix: str, value: str) -> str:
    """A local id matching ``^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$``: ``doi-10.1000-xyz``."""
    body = re.sub(r"[^A-Za-z0-9._-]+", "-", value).strip("-._")
    ident = f"{prefix}-{body}" if body else prefix
    if len(ident) > 128:
        ident = f"{ident[:117]}-{hashlib.sha256(value.encode()).hexdigest()[:10]}"
    return ident


def title_key(title: str | None) -> str:
    """Title reduced to lowercase ASCII words, for matching the same work across providers."""
    text = unicodedata.normalize("NFKD", title or "").encode("ascii", "ignore").decode().casefold()
    text = _VERSION_SUFFIX.sub("", text.strip())  # "Title (Preprint)" is the same work as "Title"
    return " ".join(search_words(text, sqlite=True))


def source_id(source: Mapping[str, Any]) -> str:
    """Deterministic id: a journal DOI first, then the arXiv id, then provider ids, then the title."""
    doi, arxiv_id, extra = source.get("doi"), source.get("arxiv_id"), source.get("extra") or {}
    if doi and not is_preprint_doi(doi):
        return safe_id("doi", doi)
    if arxiv_id:
        return safe_id("arxiv", arxiv_id)
    if doi:
        return safe_id("doi", doi)
    for key, prefix in (("openalex_id", "openalex"), ("s2_paper_id", "s2")):
        if extra.get(key):
            return safe_id(prefix, str(extra[key]))
    digest = hashlib.sha256(title_key(source.get("title")).encode()).hexdigest()[:12]
    return f"title-{digest}"


def finish_source(fields: Mapping[str, Any]) -> Source | None:
    """Clean, complete and order a Source; ``None`` when there is no title to cite."""
    raw = dict(fields)
    title = clean_text(raw.get("title"))
    if not title:
        return None
    out: Source = {"title": title}
    out["authors"] = [a for a in (clean_text(x) for x in raw.get("authors") or []) if a]
    year = raw.get("year")
    out["year"] = int(year) if isinstance(year, int | str) and str(year).isdigit() else None
    for key in ("venue", "publisher", "language"):
        out[key] = clean_text(raw.get(key))
    out["abstract"] = clean_text(raw.get("abstract"))
    out["doi"] = clean_doi(raw.get("doi"))
    out["arxiv_id"] = clean_arxiv_id(raw.get("arxiv_id"))
    out["url"] = http_url(raw.get("url"))
    out["pdf_url"] = http_url(raw.get("pdf_url"))
    if out["arxiv_id"] and not out["pdf_url"]:  # every arXiv paper has an open PDF
        out["pdf_url"] = f"https://arxiv.org/pdf/{out['arxiv_id']}"
    out["published"] = valid_date(raw.get("published"))
    if out["published"] and out["year"] is None:
        out["year"] = int(out["published"][:4])
    count = raw.get("citation_count")
    valid_count = isinstance(count, int) and not isinstance(count, bool) and count >= 0
    out["citation_count"] = count if valid_count else None
    kind = raw.get("type") if raw.get("type") in SOURCE_TYPES else "other"
    out["type"] = kind
    reviewed = raw.get("peer_reviewed")
    if reviewed is None:  # a journal DOI vouches for review; a preprint DOI alone leaves it unknown
        if kind == "preprint":
            reviewed = False
        elif kind in ("journal-article", "conference-paper") and hard_dois([out]):
            reviewed = True
    out["peer_reviewed"] = reviewed
    out["accessed_at"] = raw.get("accessed_at")
    out["extra"] = {k: v for k, v in dict(raw.get("extra") or {}).items() if v not in (None, "", [], {})}
    out["id"] = raw["id"] if _LOCAL_ID.match(str(raw.get("id") or "")) else source_id(out)
    return {k: out[k] for k in SOURCE_KEYS if out.get(k) not in (None, "", [], {})}


# --- providers -------------------------------------------------------------------------------


def hard_dois(sources: Iterable[Source]) -> set[str]:
    """DOIs of versions of record (a preprint's DOI, e.g. JMIR's 10.2196/preprints.X, does not count)."""
    return {s["doi"] for s in sources
            if s.get("doi") and not is_preprint_doi(s["doi"]) and s.get("type") != "preprint"}


class Provider:
    """Base class: public methods never raise :class:`ProviderError`; they record a notice instead.

    An agent's search must degrade (fewer sources, a notice saying why) rather than crash the
    run when one API is offline, rate limited or returns garbage. ``raise_errors=True`` restores
    the exceptions for callers that want them.
    """

    name: ClassVar[str] = ""
    label: ClassVar[str] = ""

    def __init__(self, client: HttpClient | None = None, *, raise_errors: bool = False) -> None:
        self.client = client or shared_client()
        self.raise_errors = raise_errors
        self.notices: list[str] = []

    def search(self, query: str, limit: int = 10) -> list[Source]:
        """Up to ``limit`` Sources for a free-text query, best first."""
        return self._guard(lambda: self._search(query, max(1, int(limit))), [])

    def _search(self, query: str, limit: int) -> list[Source]:
        raise NotImplementedError

    def _guard(self, call: Callable[[], T], default: T) -> T:
        try:
            return call()
        except ProviderError as exc:
            if self.raise_errors:
                raise
            if str(exc) not in self.notices:
                self.notices.append(str(exc))
            return default

    def _finish(self, fields: Mapping[str, Any]) -> Source | None:
        extra = {"provider": self.name, **dict(fields.get("extra") or {})}
        return finish_source({**fields, "extra": extra})

    def _finish_all(self, records: Iterable[Mapping[str, Any] | None]) -> list[Source]:
        return [s for s in (self._finish(r) for r in records if r) if s]

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"
