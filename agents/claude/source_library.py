"""The texts a Claude agent may quote, whether the graph already held them or the agent fetched them.

Evidence is verified against stored texts only, so every text a tool shows the model must be one
the orchestrator can check: the session's stored sources (by their global ids) plus the papers and
pages this agent stored through the runtime (local ids ``P<n>``/``W<n>``, re-used across retries).
:class:`SourceLibrary` is that set, searchable as one BM25 index.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from agents.offline.ingest import Document
from agents.offline.text import normalize_page
from agents.offline.textindex import Hit, PassageIndex
from orchestrator.model.clock import iso_timestamp

if TYPE_CHECKING:
    from agents.offline.corpus import Corpus
    from agents.runtime import AgentContext

__all__ = ["SourceLibrary"]

_SOURCE_FIELDS = ("type", "title", "authors", "year", "venue", "publisher", "peer_reviewed", "doi", "url",
                  "pdf_url", "arxiv_id", "abstract", "published", "citation_count", "language")


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
