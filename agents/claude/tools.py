"""The tools of the Claude researchers and fact-checker: one dispatcher per agent.

Client tools run here: ``search_passages`` (BM25 over stored texts, from agents.offline),
``read_source_page``, ``search_papers``, ``fetch_paper_metadata`` and ``fetch_open_access_pdf``
(scholarly providers). ``web_search`` and ``web_fetch`` are Anthropic server tools; the page
text of every ``web_fetch`` result is stored in ``sources/`` through the runtime, so snippets
quoted from web pages are verified like any other. Search results carry only encrypted
content, so nothing is stored from them. The tool set is fixed by the agent definition; tool
output is data (wrapped as untrusted by :func:`agents.claude.conversation.untrusted`).
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TextIO

from agents.claude.config import ClaudeConfig
from agents.claude.document_pages import document_pages
from agents.claude.scholarly import ProvidersBackend, ScholarlyBackend
from agents.claude.source_library import SourceLibrary
from agents.claude.tool_specs import CLIENT_TOOLS, MAX_HITS, PAGE_WINDOW, SERVER_TOOLS, TOOL_GROUPS
from agents.offline.ingest import Document
from agents.offline.text import normalize_ws
from orchestrator.model.redact import redact

__all__ = ["ToolInputError", "Toolbox"]


class ToolInputError(Exception):
    """The model asked for something that does not exist; returned to it as a tool error."""


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
            pages = document_pages(source)
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
