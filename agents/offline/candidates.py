"""Which units may answer a question, and their base scores: the two retrieval stages before answer typing.

Stage one fuses the BM25 ranking of the expanded question with the embedding ranking by reciprocal
rank. Stage two scores the fused top :data:`RERANK_DEPTH` again with what a rank cannot see: the
question's terms in the unit and in its window, exactly and softly (a reader's word matched to the
paper's by word vectors, :mod:`agents.offline.softmatch`). A unit passes the gate when its window
covers most of the question's terms, or when it is close in meaning and shares some of them; a
unit of the fused top that passes neither competes with a handicap. Whether to answer at all is
decided per question from its best window's cosine and best soft coverage (:func:`answerable`),
calibrated per model, because a paraphrase covers a third of the question's words where an
off-corpus question may cover as much by coincidence.

Without the embedding model only the exact-coverage gate applies (:func:`lexical`).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from agents.offline.semantic import Embedder
from agents.offline.softmatch import Coverage

__all__ = ["MIN_COVERAGE", "Candidate", "answerable", "lexical", "reranked"]

MIN_COVERAGE = 0.5  # share of the question's (idf-weighted) terms a sentence's window must hold
MIN_OWN_COVERAGE = 0.2  # ... and the sentence itself some of them
POOL = 400  # candidates taken from the top of each ranking
RRF_K = 60  # reciprocal rank fusion: 1 / (RRF_K + rank), summed over the rankings
RRF_SEMANTIC = 1.0  # weight of the semantic ranking in the fusion (the lexical one weighs 1)
SEMANTIC_WEIGHT = 0.7  # of the fused rank in a unit's score
#: A window answers in other words at the model's calibrated cosine (semantic.Embedder), within SEMANTIC_BAND
#: of the question's best window, with SEMANTIC_MIN_COVERAGE of its terms.
SEMANTIC_BAND, SEMANTIC_MIN_COVERAGE = 0.1, 0.1
RERANK_DEPTH = 50  # fused candidates scored again
ANSWER_DEPTH = 10  # the best soft coverage among the first ANSWER_DEPTH of them decides whether to answer
RR_SOFT = 0.3  # weight of what soft term matching adds to the exact coverage of the unit and its window
UNGATED = 0.2  # score handicap of a reranked unit that neither its words nor its meaning put through ...
UNGATED_BAND = 0.25  # ... which must also be this close to the question's best window cosine


class Candidate(NamedTuple):
    unit: int
    base: float  # before the section prior, answer typing and currency
    coverage: float  # exact share of the question's weighted terms in the unit's window
    gated: bool  # passed by its words or its meaning, not only by the fused rank


def lexical(score: np.ndarray, cover: Coverage, allowed: np.ndarray, min_coverage: float) -> list[Candidate]:
    """The units whose window and own words cover the question (BM25 alone: no model, or lexical mode)."""
    best = float(score.max()) or 1.0
    out = []
    for i in (int(i) for i in np.argsort(-score, kind="stable")[:POOL]):
        if score[i] <= 0:
            break
        if not allowed[i]:
            continue
        cover_w, cover_s = cover.exact(i)
        if cover_w >= min_coverage and cover_s >= MIN_OWN_COVERAGE:
            out.append(Candidate(i, 0.45 * float(score[i]) / best + 0.35 * cover_s + 0.2 * cover_w, cover_w, True))
    return out


def answerable(model: Embedder, top_similarity: float, best_coverage: float) -> bool:
    """The corpus addresses the question: its closest window's cosine plus half the best soft term
    coverage reaches the model's calibrated ``answer_floor``. Meaning alone lets a near-topic question
    through; words alone let a coincidence through."""
    return top_similarity + 0.5 * best_coverage >= model.answer_floor


def _ranks(values: np.ndarray) -> np.ndarray:
    ranks = np.full(len(values), float(POOL))
    order = np.argsort(-values, kind="stable")[:POOL]
    ranks[order] = np.arange(len(order))
    return ranks


def reranked(score: np.ndarray, sim: np.ndarray, cover: Coverage, allowed: np.ndarray,
             model: Embedder) -> list[Candidate]:
    """The gated units and the fused top :data:`RERANK_DEPTH`, scored again; none when the question is not
    :func:`answerable` and nothing passes the gate."""
    if not allowed.any():
        return []
    lex_rank, sem_rank = _ranks(score), _ranks(sim)
    lex_rank[score <= 0] = POOL
    fused = RRF_K * (1.0 / (RRF_K + lex_rank) + RRF_SEMANTIC / (RRF_K + sem_rank)) / (1 + RRF_SEMANTIC)
    fused[~allowed] = -1.0
    pool = [int(i) for i in np.argsort(-fused, kind="stable")[:RERANK_DEPTH] if allowed[i]]
    top = float(sim[allowed].max())
    gated = set()  # in the question's own words, or close in meaning with some of them
    for i in (int(i) for i in np.flatnonzero(allowed & ((lex_rank < POOL) | (sem_rank < POOL)))):
        cover_w, cover_s = cover.exact(i)
        if (lex_rank[i] < POOL and cover_w >= MIN_COVERAGE and cover_s >= MIN_OWN_COVERAGE
                and top >= model.min_similarity) \
                or (sim[i] >= max(model.semantic_similarity, top - SEMANTIC_BAND) and cover_w >= SEMANTIC_MIN_COVERAGE):
            gated.add(i)
    covers = {i: cover(i) for i in dict.fromkeys([*sorted(gated), *pool])}
    if not gated and not answerable(model, top, max((covers[i][0] for i in pool[:ANSWER_DEPTH]), default=0.0)):
        return []
    best = float(score.max()) or 1.0
    out = []
    for i, (soft_w, soft_s, cover_w, cover_s) in covers.items():
        if soft_w < SEMANTIC_MIN_COVERAGE or (i not in gated and sim[i] < top - UNGATED_BAND):
            continue
        words = 0.45 * float(score[i]) / best + 0.35 * cover_s + 0.2 * cover_w
        base = (1 - SEMANTIC_WEIGHT) * words + SEMANTIC_WEIGHT * float(fused[i]) \
            + RR_SOFT * (0.6 * (soft_s - cover_s) + 0.4 * (soft_w - cover_w)) - (0.0 if i in gated else UNGATED)
        out.append(Candidate(i, base, cover_w, i in gated))
    return out
