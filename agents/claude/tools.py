"""The tools of the Claude researchers and fact-checker, and the texts they may quote.

Client tools run here: ``search_passages`` (BM25 over stored texts, from agents.offline),
``read_source_page``, ``search_papers``, ``fetch_paper_metadata`` and ``fetch_open_access_pdf``
(scholarly providers). ``web_search`` and ``web_fetch`` are Anthropic server tools; the page
text of every ``web_fetch`` result is stored in ``sources/`` through the runtime, so snippets
quoted from web pages are verified like any other. Search results carry only encrypted
content, so nothing is stored from them. The tool set is fixed by the agent definition; tool
output is data (wrapped as untrusted by :func:`agents.claude.structured.untrusted`).
"""

from __future__ import annotations

import base64
import hashlib
import sys
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TextIO

from agents.claude.config import ClaudeConfig
from agents.offline.ingest import Document
from agents.offline.text import normalize_page, normalize_ws
from agents.offline.textindex import Hit, PassageIndex
from orchestrator.model.clock import iso_timestamp
from orchestrator.model.redact import redact
from orchestrator.model.scholarly_ids import clean_arxiv_id, clean_doi

if TYPE_CHECKING:
    from agents.offline.corpus import Corpus
    from agents.runtime import AgentContext

__all__ = ["CLIENT_TOOLS", "ProvidersBackend", "ScholarlyBackend", "SourceLibrary", "Toolbox"]

PAGE_WINDOW = 8_000
MAX_HITS = 15
_SOURCE_FIELDS = ("type", "title", "authors", "year", "venue", "publisher", "peer_reviewed", "doi", "url",
                  "pdf_url", "arxiv_id", "abstract", "published", "citation_count", "language")


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


class SourceLibrary:
    """The texts an agent may quote: the graph's stored sources (global ids) and those it fetched."""

    def __init__(self, context: AgentContext, graph: Mapping[str, Any] | None = None) -> None:
        self.context = context
        self._graph = dict(graph) if graph is not None else None
        self._corpus: Corpus | None = None
        self.own: dict[str, Document] = {}
        self.own_sources: dict[str, dict[str, Any]] = {}
        self._keys: dict[str, str] = {}
        self._own_index: PassageIndex | None = None

    @property
    def corpus(self) -> Corpus:
        if self._corpus is None:
            from agents.offline.corpus import load_corpus

            self._corpus = load_corpus(self.context, self._graph)
        return self._corpus

    def graph_sources(self) -> list[dict[str, Any]]:
        return [d.source for d in self.corpus.documents.values()]

    def add(self, prefix: str, pages: Sequence[str], fields: Mapping[str, Any], keys: Sequence[str]) -> str:
        """Store a text (through the runtime) and register it as an own source; returns its local id."""
        pages = tuple(normalize_page(p.replace("\f", "\n")) for p in pages) or ("",)
        existing = next((self._keys[k] for k in keys if k and k in self._keys), None)
        sid = existing or f"{prefix}{sum(1 for s in self.own_sources if s.startswith(prefix)) + 1}"
        sha = self.context.store_source_text("\f".join(pages))
        record = {k: fields[k] for k in _SOURCE_FIELDS if fields.get(k) not in (None, "", [], {})}
        record = {"id": sid, **record, "content_sha256": sha, "accessed_at": iso_timestamp()}
        record.setdefault("type", "other")
        record.setdefault("title", sid)
        self.own_sources[sid] = record
        self.own[sid] = Document(source=record, pages=pages)
        self._keys.update({k: sid for k in keys if k})
        self._own_index = None
        return sid

    def adopt(self, record: Mapping[str, Any]) -> bool:
        """Take over a source of the rejected attempt whose text is stored (a retry keeps its ids)."""
        sha, sid = record.get("content_sha256"), record.get("id")
        text = self.context.source_text(sha) if isinstance(sha, str) and isinstance(sid, str) else None
        if text is None or sid in self.own_sources or hashlib.sha256(text.encode()).hexdigest() != sha:
            return False
        self.own_sources[str(sid)] = dict(record)
        self.own[str(sid)] = Document(source=dict(record), pages=tuple(text.split("\f")))
        keys = [str(record[k]).lower() for k in ("doi", "arxiv_id", "url") if record.get(k)]
        self._keys.update(dict.fromkeys(keys, str(sid)))
        self._own_index = None
        return True

    def key_id(self, key: str) -> str | None:
        return self._keys.get(key)

    def document(self, ref: str) -> Document | None:
        return self.own.get(ref) or self.corpus.documents.get(ref)

    def search(self, query: str, limit: int, source_id: str | None = None) -> list[Hit]:
        if self.own and self._own_index is None:
            self._own_index = PassageIndex.build(self.own.values())
        wanted = [source_id] if source_id else None
        hits = (
            self.corpus.index.search(query, limit, wanted)
            if not source_id or source_id not in self.own
            else []
        )
        if self._own_index is not None:
            hits += self._own_index.search(query, limit, wanted)
        return sorted(hits, key=lambda h: -h.score)[:limit]


def _tool(name: str, description: str, properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    schema = {"type": "object", "additionalProperties": False, "properties": properties, "required": required}
    return {"name": name, "description": description, "input_schema": schema}


class ToolInputError(Exception):
    """The model asked for something that does not exist; returned to it as a tool error."""


_ID = {"type": "string", "description": "A DOI (10.xxxx/...), an arXiv id (2401.01234) or a paper_id."}
CLIENT_TOOLS: dict[str, dict[str, Any]] = {
    "search_passages": _tool(
        "search_passages",
        "Full-text search (BM25) over every stored source text: the session's documents and the papers and "
        "pages you fetched. Returns verbatim passages with source_id and page. Quote evidence only from text "
        "returned by this tool or read_source_page.",
        {"query": {"type": "string", "description": "Keywords."},
         "source_id": {"type": "string", "description": "Search only this source (optional)."},
         "limit": {"type": "integer", "minimum": 1, "maximum": MAX_HITS, "description": "Default 8."}},
        ["query"],
    ),
    "read_source_page": _tool(
        "read_source_page",
        "Read one page of a stored source text verbatim (pages are counted from 1). Long pages come in "
        f"windows of {PAGE_WINDOW} characters; pass offset to read on.",
        {"source_id": {"type": "string"}, "page": {"type": "integer", "minimum": 1},
         "offset": {"type": "integer", "minimum": 0, "description": "Offset in the page (default 0)."}},
        ["source_id", "page"],
    ),
    "search_papers": _tool(
        "search_papers",
        "Search scholarly indexes (OpenAlex, Crossref, Semantic Scholar, arXiv) for papers. Returns metadata "
        "only; fetch a paper before citing it.",
        {"query": {"type": "string"}, "limit": {"type": "integer", "minimum": 1, "maximum": 10}},
        ["query"],
    ),
    "fetch_paper_metadata": _tool(
        "fetch_paper_metadata",
        "Look a paper up by DOI or arXiv id and store its title and abstract as a citable source (one page).",
        {"identifier": _ID}, ["identifier"]),
    "fetch_open_access_pdf": _tool(
        "fetch_open_access_pdf",
        "Download the open-access PDF of a paper, store its text page by page as a citable source and return "
        "its source_id, content_sha256 and page count. Then read it with read_source_page.",
        {"identifier": _ID}, ["identifier"]),
}
TOOL_GROUPS = {"fetch_paper": ("fetch_paper_metadata", "fetch_open_access_pdf")}
SERVER_TOOLS = ("web_search", "web_fetch")


@dataclass
class Toolbox:
    """One agent's fixed tool set (from its definition) over a :class:`SourceLibrary`."""

    names: Sequence[str]
    library: SourceLibrary
    config: ClaudeConfig
    backend: ScholarlyBackend | None = None
    log: TextIO | None = None
    notes: list[str] = field(default_factory=list)
    papers: dict[str, dict[str, Any]] = field(default_factory=dict)  # search results by identifier

    def __post_init__(self) -> None:
        expanded: list[str] = []
        for name in self.names:
            for tool in TOOL_GROUPS.get(name, (name,)):
                if (tool in CLIENT_TOOLS or tool in SERVER_TOOLS) and tool not in expanded:
                    expanded.append(tool)
        self.enabled = tuple(expanded)
        needs_backend = {"search_papers", "fetch_paper_metadata", "fetch_open_access_pdf"} & set(expanded)
        if needs_backend and self.backend is None:
            self.backend = ProvidersBackend()

    def _say(self, message: str) -> None:
        print(redact(f"[tool] {message}"), file=self.log or sys.stdout, flush=True)

    def tool_params(self) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for name in self.enabled:
            config = self.config
            if name == "web_search":
                out.append({"type": config.web_search_type, "name": "web_search", **config.web_search})
            elif name == "web_fetch":
                out.append({"type": config.web_fetch_type, "name": "web_fetch", **config.web_fetch})
            else:
                out.append(CLIENT_TOOLS[name])
        return out

    def take_notes(self) -> list[str]:
        notes, self.notes = self.notes, []
        return notes

    def execute(self, name: str, tool_input: Mapping[str, Any]) -> tuple[str, bool]:
        """Run a client tool; failures come back as tool errors the model can act on, never raise."""
        if name not in self.enabled or name in SERVER_TOOLS:
            return f"unknown tool {name!r}; available: {', '.join(self.enabled)}", True
        self._say(f"{name} {dict(tool_input)}"[:300])
        try:
            return getattr(self, f"_{name}")(**dict(tool_input)), False
        except ToolInputError as exc:
            return str(exc), True
        except TypeError as exc:
            return f"bad arguments for {name}: {exc}", True
        except Exception as exc:  # a provider or PDF failure must not end the research
            return f"{name} failed: {type(exc).__name__}: {exc}", True

    def _document(self, source_id: str) -> Document:
        doc = self.library.document(str(source_id))
        if doc is None:
            raise ToolInputError(f"no stored text for source_id {source_id!r}; use an id that "
                                 "search_passages, read_source_page or a fetch tool returned")
        return doc

    def _title(self, doc: Document) -> str:
        return normalize_ws(str(doc.source.get("title", doc.id)))[:120]

    # -- client tools ----------------------------------------------------------------------
    def _search_passages(self, query: str, source_id: str | None = None, limit: int = 8) -> str:
        if source_id:
            self._document(source_id)
        hits = self.library.search(str(query), max(1, min(int(limit), MAX_HITS)), source_id)
        if not hits:
            return "no passages found; try other keywords"
        return "\n\n".join(
            f'[{n}] source_id={h.source_id} page={h.page} title="{self._title(self._document(h.source_id))}"'
            f"\n{h.text}" for n, h in enumerate(hits, 1))

    def _read_source_page(self, source_id: str, page: int, offset: int = 0) -> str:
        doc = self._document(source_id)
        if not 1 <= int(page) <= len(doc.pages):
            raise ToolInputError(f"{source_id} has {len(doc.pages)} page(s); page {page} does not exist")
        text = doc.pages[int(page) - 1]
        start = max(0, int(offset))
        window = text[start : start + PAGE_WINDOW]
        more = (f"\n[page continues: call read_source_page with offset={start + PAGE_WINDOW}]"
                if start + PAGE_WINDOW < len(text) else "")
        return (f'source_id={source_id} page={page} of {len(doc.pages)} title="{self._title(doc)}"'
                f" chars {start}-{start + len(window)} of {len(text)}\n{window}{more}")

    def _search_papers(self, query: str, limit: int = 5) -> str:
        assert self.backend is not None
        records = self.backend.search(str(query), max(1, min(int(limit), 10)))
        notices = [f"(notice: {n})" for n in getattr(records, "notices", [])]
        lines = [] if records else ["no papers found"]
        for rec in records:
            for key in (rec.get("doi"), rec.get("arxiv_id"), rec.get("id")):
                if key:
                    self.papers[str(key).lower()] = rec
            authors = ", ".join((rec.get("authors") or [])[:3])
            abstract = normalize_ws(str(rec.get("abstract") or ""))[:500]
            lines.append(
                f"- {rec.get('title')} ({rec.get('year', 'n.d.')}; {authors}) venue={rec.get('venue', '-')}"
                f" doi={rec.get('doi', '-')} arxiv_id={rec.get('arxiv_id', '-')}"
                f" paper_id={rec.get('id', '-')}"
                f" open_pdf={'maybe' if rec.get('pdf_url') or rec.get('arxiv_id') else 'no'}"
                + (f"\n  abstract: {abstract}" if abstract else ""))
        return "\n".join(lines + notices)

    def _paper(self, identifier: str) -> dict[str, Any]:
        key = str(identifier).strip().lower()
        key = key.removeprefix("https://doi.org/").removeprefix("doi:").removeprefix("arxiv:")
        assert self.backend is not None
        found = self.papers.get(key) or self.backend.resolve(str(identifier))
        if not found:
            raise ToolInputError(f"no paper found for {identifier!r}; give a DOI, an arXiv id or a paper_id "
                                 "from search_papers")
        self.papers[key] = found
        return found

    @staticmethod
    def _keys(rec: Mapping[str, Any]) -> list[str]:
        return [str(v).lower() for v in (rec.get("doi"), rec.get("arxiv_id"), rec.get("url")) if v]

    def _fetch_paper_metadata(self, identifier: str) -> str:
        rec = self._paper(identifier)
        existing = next((self.library.key_id(k) for k in self._keys(rec) if self.library.key_id(k)), None)
        if existing and len(self.library.own[existing].pages) > 1:
            return f"already stored with its full text as source_id={existing}"
        if not rec.get("abstract"):
            raise ToolInputError(f"{rec.get('title')!r} has no abstract; try fetch_open_access_pdf")
        sid = self.library.add("P", [f"{rec.get('title')}\n\n{rec['abstract']}"], rec, self._keys(rec))
        self._stored(sid)
        return f"stored as source_id={sid} (title and abstract, 1 page):\n{self.library.own[sid].pages[0]}"

    def _fetch_open_access_pdf(self, identifier: str) -> str:
        rec = self._paper(identifier)
        assert self.backend is not None
        pages = self.backend.fetch_pdf(rec)
        if not pages or not any(p.strip() for p in pages):
            raise ToolInputError(f"no open-access PDF for {rec.get('title')!r}; use fetch_paper_metadata")
        sid = self.library.add("P", pages, rec, self._keys(rec))
        doc = self.library.own[sid]
        self._stored(sid)
        return (f"stored as source_id={sid} content_sha256={doc.content_sha256} pages={len(doc.pages)}; "
                f"read it with read_source_page. First page begins:\n{doc.pages[0][:1500]}")

    def _stored(self, sid: str) -> None:
        rec = self.library.own_sources[sid]
        self._say(f"stored {sid} {rec.get('title')!r} sha256={rec['content_sha256'][:12]}")

    # -- server tools ------------------------------------------------------------------------
    def observe(self, content: Sequence[Mapping[str, Any]]) -> None:
        """Store the documents of ``web_fetch`` results (text or PDF) as own sources ``W<n>``."""
        for block in content:
            if block.get("type") != "web_fetch_tool_result":
                continue
            result = block.get("content") or {}
            if result.get("type") != "web_fetch_result":
                continue
            url = str(result.get("url") or "")
            document = result.get("content") or {}
            source = document.get("source") or {}
            pages = _document_pages(source)
            if not pages:
                self.notes.append(f"The page {url} could not be stored; do not cite it.")
                continue
            title = normalize_ws(str(document.get("title") or url))[:300] or url
            kind = "web-page" if source.get("type") == "text" else "other"
            fields = {"type": kind, "title": title, "url": url}
            sid = self.library.add("W", pages, fields, [url.lower()])
            self._stored(sid)
            self.notes.append(
                f"System note: the fetched page {url} is stored as source_id={sid} ({len(pages)} page(s)). "
                f"Cite it as {sid}; quote it verbatim (read_source_page shows the stored text)."
            )


def _document_pages(source: Mapping[str, Any]) -> list[str]:
    data = source.get("data")
    if not isinstance(data, str) or not data.strip():
        return []
    if source.get("type") == "text":
        return [data]
    if source.get("type") == "base64" and source.get("media_type") == "application/pdf":
        from agents.offline.pdfmeta import UnreadablePdf, read_pdf

        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "page.pdf"
            try:
                path.write_bytes(base64.b64decode(data))
                return read_pdf(path)[1]
            except (UnreadablePdf, ValueError):
                return []
    return []
