"""What the graph holds about a question: BM25 over claims and their verified passages, then SPARQL.

1. BM25 (``bm25s``, terms of :mod:`orchestrator.model.terms`) ranks every claim (statement and verified passages),
   entity (names, description) and relationship (its ends and predicate). An item counts only when
   it matches enough of the question's content terms (:data:`MIN_COVERAGE`), so a question the
   session never researched finds nothing rather than the least bad match.
2. SPARQL over the RDF view adds what the graph links to the question's entities: their verified
   claims and their relationships (entities found by name, then by the BM25 hits).
Only claims with a verified passage are offered for citation.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any

from orchestrator.answers import sparql
from orchestrator.answers.data import ContextItem, Retrieved
from orchestrator.answers.graph import NodeIndex
from orchestrator.model.layout import SessionPaths
from orchestrator.model.terms import QUESTION_WORDS, STOPWORDS, content_terms, words
from orchestrator.model.textnorm import normalize

#: Share of the question's content terms an item must contain to be relevant.
MIN_COVERAGE = 0.4
MAX_CLAIMS, MAX_ENTITIES, MAX_RELATIONSHIPS = 8, 4, 4
#: Entities whose graph neighbourhood SPARQL expands (the best BM25 hits first).
MAX_SEEDS = 12


@dataclass
class _Doc:
    id: str
    kind: str
    text: str


def _documents(index: NodeIndex) -> list[_Doc]:
    docs = []
    for claim_id, claim in index.claims.items():
        passages = index.passages(claim_id)
        if passages:
            docs.append(_Doc(claim_id, "claim", " ".join([str(claim.get("statement") or "")]
                                                         + [p.text for p in passages])))
    for entity_id, entity in index.entities.items():
        names = " ".join([*index.names(entity_id), str(entity.get("description") or "")])
        docs.append(_Doc(entity_id, "entity", names))
    for rel_id, rel in index.relationships.items():
        text = f"{index.name(str(rel.get('subject')))} {rel.get('predicate')} {index.name(str(rel.get('object')))}"
        docs.append(_Doc(rel_id, "relationship", text))
    return docs


class GraphRetriever:
    """Retrieval over one session; the BM25 index and the RDF store are built on first use."""

    def __init__(self, paths: SessionPaths, index: NodeIndex, engine: sparql.Engine = sparql.DEFAULT_ENGINE,
                 trig: bytes | None = None):
        """``trig``: the committed TriG view as read and vouched for (orchestrator/commit/committed.py)."""
        self.paths = paths
        self.trig = trig
        self.index = index
        self.engine = engine
        self._bm25: Any = None
        self._docs: list[_Doc] = []
        self._doc_terms: list[set[str]] = []
        self._store: sparql.SparqlStore | None = None

    def _build(self) -> None:
        import bm25s

        self._docs = _documents(self.index)
        tokenized = [content_terms(d.text) for d in self._docs]
        self._doc_terms = [set(t) for t in tokenized]
        self._bm25 = bm25s.BM25()
        if self._docs:
            self._bm25.index(tokenized, show_progress=False)

    def _ranked(self, question_terms: list[str]) -> list[tuple[_Doc, float]]:
        if self._bm25 is None:
            self._build()
        wanted = set(question_terms)
        if not self._docs or not wanted:
            return []
        need = max(1, math.ceil(MIN_COVERAGE * len(wanted)))
        ids, scores = self._bm25.retrieve([question_terms], k=len(self._docs), show_progress=False)
        ranked = []
        for position, score in zip(ids[0], scores[0], strict=True):
            doc_terms = self._doc_terms[int(position)]
            if score > 0 and len(wanted & doc_terms) >= need:
                ranked.append((self._docs[int(position)], float(score)))
        return ranked

    def store(self) -> sparql.SparqlStore:
        if self._store is None:
            self._store = sparql.SparqlStore(self.paths.kg_trig, self.engine, self.trig)
        return self._store

    def retrieve(self, question: str) -> Retrieved:
        timings: dict[str, float] = {}
        started = time.perf_counter()
        question_terms = content_terms(question)
        ranked = self._ranked(question_terms)
        timings["bm25_ms"] = round((time.perf_counter() - started) * 1000, 2)
        started = time.perf_counter()
        picked: dict[str, tuple[str, float]] = {d.id: (d.kind, s) for d, s in ranked}
        seeds = [d.id for d, _ in ranked if d.kind == "entity"]
        if ranked:  # expand through the graph only from a question the session is about
            seeds += self._canonical(self.store().select(sparql.entities_named(_raw_words(question))))
            seeds = list(dict.fromkeys(seeds))[:MAX_SEEDS]
            floor = min(s for _, s in picked.values()) * 0.5
            queries = ((sparql.claims_about(seeds), "claim"), (sparql.relationships_of(seeds), "relationship"))
            for query, kind in queries:
                for node_id in self._canonical(self.store().select(query)) if seeds else []:
                    if node_id not in picked and (kind != "claim" or self.index.passages(node_id)):
                        picked[node_id] = (kind, floor)
        timings["sparql_ms"] = round((time.perf_counter() - started) * 1000, 2)
        return Retrieved(question, tuple(self._items(picked)), timings, self.engine)

    def claims(self, question: str, claim_ids: list[str], score: float = 1.0) -> Retrieved:
        """The given claims as the context of ``question`` (those with a verified passage): the claims a
        researching backend quoted for exactly this question (see ``service._researched``)."""
        ids = [i for i in claim_ids if i in self.index.claims and self.index.passages(i)][:MAX_CLAIMS]
        return Retrieved(question, tuple(self._item(i, "claim", score) for i in ids), {}, self.engine)

    def _canonical(self, rows: list[dict[str, str]]) -> list[str]:
        found = (self.index.canonical.get(row.get("id", "")) for row in rows)
        return list(dict.fromkeys(node_id for node_id in found if node_id))

    def _items(self, picked: dict[str, tuple[str, float]]) -> list[ContextItem]:
        limits = {"claim": MAX_CLAIMS, "entity": MAX_ENTITIES, "relationship": MAX_RELATIONSHIPS}
        items: list[ContextItem] = []
        for node_id, (kind, score) in sorted(picked.items(), key=lambda kv: (-kv[1][1], kv[0])):
            if limits[kind] <= 0:
                continue
            limits[kind] -= 1
            items.append(self._item(node_id, kind, score))
        return items

    def _item(self, node_id: str, kind: str, score: float) -> ContextItem:
        index = self.index
        if kind == "claim":
            claim = index.claims[node_id]
            return ContextItem(node_id, "claim", str(claim.get("statement") or ""), round(score, 3),
                               tuple(index.passages(node_id)))
        if kind == "entity":
            claims = index.verified_claims(index.claims_of_entity.get(node_id, ()))
            passages = tuple(p for c in claims[:2] for p in index.passages(c)[:1])
            return ContextItem(node_id, "entity", index.name(node_id), round(score, 3), passages)
        rel = index.relationships[node_id]
        text = f"{index.name(str(rel.get('subject')))} {rel.get('predicate')} {index.name(str(rel.get('object')))}"
        claims = index.verified_claims(rel.get("claim_ids"))
        passages = tuple(p for c in claims[:2] for p in index.passages(c)[:1])
        return ContextItem(node_id, "relationship", text, round(score, 3), passages)


def _raw_words(question: str) -> list[str]:
    """Lower-case words of the question for the SPARQL name match (at least 4 letters, not question words)."""
    found = (w.removesuffix("'s") for w in words(normalize(question.replace("-", " "))))
    return list(dict.fromkeys(w for w in found if len(w) >= 4 and w not in STOPWORDS and w not in QUESTION_WORDS))
