"""What the offline researcher and fact-checker share: the graph's texts as a searchable corpus.

Agents see other agents' sources only through the committed graph, so the corpus is rebuilt from
``knowledge-graph.json`` plus the content-addressed texts, with the sources' GLOBAL ids (the ids
claims must cite). The BM25 index is cached under ``sources/.index/`` keyed by the exact set of
texts, so several researcher instances in one session build it once. What may be quoted is
decided in sentences.py.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agents.offline import textindex
from agents.offline.ingest import Document
from agents.offline.sentences import (
    AFTER_REF_RE,
    REF_HEADING_RE,
    Sentence,
    informative,
    line_key,
    reference_like,
    terms,
)
from agents.offline.text import normalize_ws, sentence_spans
from agents.offline.textindex import Hit, PassageIndex
from agents.runtime import AgentContext

__all__ = ["Corpus", "load_corpus", "plan_questions"]

_INDEX_VERSION = 1


@dataclass
class _DocInfo:
    boilerplate: set[str]
    references: tuple[tuple[int, int], tuple[int, int]] | None  # [(page, offset), (page, offset))


def _doc_info(doc: Document) -> _DocInfo:
    """Running headers/footers (lines on many pages) and where the reference list is."""
    seen: Counter[str] = Counter()
    for page in doc.pages:
        seen.update({line_key(line) for line in page.split("\n") if len(line.strip()) >= 8})
    need = max(3, int(0.3 * len(doc.pages)))
    boilerplate = {key for key, n in seen.items() if n >= need}
    start: tuple[int, int] | None = None
    end = (len(doc.pages) + 1, 0)
    for number, page in enumerate(doc.pages, start=1):
        offset = 0
        for line in page.split("\n"):
            if start is None and number * 2 > len(doc.pages) and REF_HEADING_RE.match(line.strip()):
                start = (number, offset)
            elif start is not None and AFTER_REF_RE.match(line.strip()) and len(line) < 80:
                end = (number, offset)
                return _DocInfo(boilerplate, (start, end))
            offset += len(line) + 1
    return _DocInfo(boilerplate, (start, end) if start else None)


@dataclass
class Corpus:
    """The graph's sources with stored texts, their passage index and per-document filters."""

    documents: dict[str, Document]
    index: PassageIndex
    _info: dict[str, _DocInfo] = field(default_factory=dict)
    _df: Counter[str] | None = None
    retriever_cache: Any = None  # the answer retriever, built by agents.offline.retrieval.retriever_for
    cache_dir: Path | None = None

    def idf(self, term: str) -> float:
        """How rare a (stemmed) term is among the documents: 'S2ORC' says more than 'paper'."""
        if self._df is None:
            self._df = Counter(t for doc in self.documents.values() for t in terms(doc.text))
        return math.log((len(self.documents) + 1) / (self._df[term] + 0.5))

    def title(self, source_id: str) -> str:
        return str(self.documents[source_id].source.get("title") or source_id)

    def close(self) -> None:
        self.index.close()

    def info(self, source_id: str) -> _DocInfo:
        if source_id not in self._info:
            self._info[source_id] = _doc_info(self.documents[source_id])
        return self._info[source_id]

    def sentences(self, hit: Hit, strict: bool = True) -> list[Sentence]:
        """The informative sentences of a hit passage (``strict=False``: any prose sentence)."""
        info = self.info(hit.source_id)
        out = []
        for a, b in sentence_spans(hit.text):
            start, end = hit.char_start + a, hit.char_start + b
            if info.references and info.references[0] <= (hit.page, start) < info.references[1]:
                continue
            text = hit.text[a:b]
            if any(line_key(line) in info.boilerplate for line in text.split("\n")):
                continue
            if informative(text) if strict else len(text) >= 30 and not reference_like(normalize_ws(text)):
                out.append(Sentence(hit.source_id, hit.page, start, end, text))
        return out

    def search(self, query: str, limit: int, exclude: set[str] | None = None,
               only: list[str] | None = None) -> list[Hit]:
        """BM25 hits, optionally within some sources or outside others (over-fetching so the limit holds)."""
        if only is not None:
            return [h for h in self.index.search(query, limit=limit, source_ids=only)
                    if not exclude or h.source_id not in exclude]
        if not exclude:
            return self.index.search(query, limit=limit)
        hits = self.index.search(query, limit=limit * 3 + 20)
        return [h for h in hits if h.source_id not in exclude][:limit]


def graph_documents(context: AgentContext, graph: dict[str, Any] | None = None) -> list[Document]:
    """One Document per unified graph source whose text is stored, with its global id."""
    graph = context.graph() if graph is None else graph
    docs = []
    for source in graph.get("sources") or ():
        sha = source.get("content_sha256") if isinstance(source, dict) else None
        text = context.source_text(sha) if isinstance(sha, str) else None
        if text is not None and hashlib.sha256(text.encode("utf-8")).hexdigest() == sha:
            docs.append(Document(source=dict(source), pages=tuple(text.split("\f"))))
    return sorted(docs, key=lambda d: d.id)


def load_corpus(context: AgentContext, graph: dict[str, Any] | None = None) -> Corpus:
    """Documents plus a passage index, reusing the session's cached index for the same texts."""
    docs = graph_documents(context, graph)
    key_data = [_INDEX_VERSION, textindex.MAX_SENTENCES, textindex.MAX_CHARS,
                [(d.id, d.source.get("content_sha256")) for d in docs]]
    key = hashlib.sha256(json.dumps(key_data).encode()).hexdigest()[:20]
    path = context.paths.sources / ".index" / f"passages-{key}.sqlite3"
    index = None
    if path.is_file():
        try:
            index = PassageIndex.open(path)
            len(index)  # a damaged cache file fails here; rebuild it then
        except Exception:
            index = None
    if index is None:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        PassageIndex.build(docs, tmp).close()
        os.replace(tmp, path)  # concurrent builders write identical files; the last rename wins
        for stale in path.parent.glob("passages-*.sqlite3"):  # indexes of earlier graph states
            if stale != path:
                stale.unlink(missing_ok=True)
        index = PassageIndex.open(path)
    return Corpus({d.id: d for d in docs}, index, cache_dir=path.parent)


def plan_questions(graph: dict[str, Any]) -> list[dict[str, Any]]:
    """Every planner's sub-questions with global ids (plans live in their agents' namespaces)."""
    out = []
    for agent in sorted(graph):
        space = graph[agent]
        if isinstance(space, dict) and isinstance(space.get("sub_questions"), list) and "query" in space:
            out += [{**q, "id": f"{agent}:{q['id']}"} for q in space["sub_questions"] if isinstance(q, dict)]
    return out
