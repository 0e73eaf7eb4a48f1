"""The corpus index's parts, made once per document: candidate units as rows, index terms, embeddings.

A document's units (:mod:`agents.offline.units`), their Snowball terms and their embeddings
(:mod:`agents.offline.semantic`) depend only on its text and on the code that made them, so they
are stored in the user cache folder under the text's content hash (:mod:`agents.offline.doccache`)
and a second run, ``ask`` or ``batch`` reads them back. The BM25 postings are built per corpus.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

import numpy as np

from agents.offline.corpus import Corpus
from agents.offline.doccache import code_key, load_entry, load_matrix, save_entry, save_matrix
from agents.offline.semantic import embedder, normalise_rows
from agents.offline.sentences import Sentence
from agents.offline.units import document_units
from orchestrator.model.terms import search_terms

__all__ = ["ANALYSIS_CODE", "IndexedUnit", "bm25_postings", "document_analysis", "indexed_text", "window_vectors"]


def bm25_postings(windows: list[list[str]]) -> tuple[dict[str, int], np.ndarray, np.ndarray, np.ndarray]:
    """Index the windows with bm25s and keep its score matrix (term -> window scores, CSC arrays).

    Only the arrays are kept, so the cached index loads in researcher processes without
    importing bm25s and scipy (half a second each).
    """
    import bm25s

    bm25 = bm25s.BM25()
    bm25.index(windows or [[""]], show_progress=False)
    scores = bm25.scores
    return (dict(bm25.vocab_dict), np.asarray(scores["data"], dtype=float), np.asarray(scores["indices"]),
            np.asarray(scores["indptr"]))


@dataclass(frozen=True)
class IndexedUnit:
    sentence: Sentence
    section: str
    quotable: bool
    doc: int
    kind: str = "sentence"


#: What decides a document's analysis: a change to any of these modules is a new cache entry.
ANALYSIS_CODE = ("index", "units", "sentences", "sections", "text", "expansion", "semantic", "corpus",
                 "orchestrator.model.terms", "orchestrator.model.textnorm")


def document_analysis(corpus: Corpus, sid: str) -> tuple[list[list[Any]], list[list[str]], np.ndarray | None]:
    """A document's units (as rows), their index terms and embeddings: from the user cache when its
    text was analysed before, else computed and stored there."""
    doc = corpus.documents[sid]
    model = embedder()
    key = hashlib.sha256(f"{doc.content_sha256}:{code_key(*ANALYSIS_CODE)}".encode()).hexdigest()
    entry = load_entry("units", key, lambda v: isinstance(v, dict) and isinstance(v.get("units"), list))
    if entry is None:
        info = corpus.info(sid)
        units = document_units(doc, info.boilerplate, info.references)
        rows = [[u.page, u.start, u.end, u.section, u.quotable, u.kind, u.context] for u in units]
        texts = [indexed_text(doc, row) for row in rows]
        entry = {"units": rows, "terms": [search_terms(t) for t in texts]}
        save_entry("units", key, entry)
    else:
        texts = []
    vectors = None
    if model is not None:
        vectors = load_matrix("units", f"{key}-{model.name}", len(entry["units"]))
        if vectors is None:
            vectors = model.embed(texts or [indexed_text(doc, row) for row in entry["units"]])
            save_matrix("units", f"{key}-{model.name}", vectors)
    return entry["units"], entry["terms"], vectors


def indexed_text(doc: Any, row: list[Any]) -> str:
    """What is indexed for a unit: its context (lead-in, table header) and its own words."""
    page, start, end, *_, context = row
    return f"{context} {doc.pages[page - 1][start:end]}".strip()


def window_vectors(vectors: np.ndarray | None, docs: list[int]) -> np.ndarray | None:
    """A unit's vector with its neighbours' at half weight: the sentence that answers often leaves its
    subject to the previous one."""
    if vectors is None or not len(vectors):
        return None
    mixed = vectors.copy()
    same_prev = np.array([i > 0 and docs[i - 1] == d for i, d in enumerate(docs)])
    same_next = np.array([i + 1 < len(docs) and docs[i + 1] == d for i, d in enumerate(docs)])
    mixed[1:] += 0.5 * vectors[:-1] * same_prev[1:, None]
    mixed[:-1] += 0.5 * vectors[1:] * same_next[:-1, None]
    return normalise_rows(mixed)
