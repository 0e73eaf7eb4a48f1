"""Soft term matching: a question's word counts as present when the passage uses a close neighbour of it.

A reader writes "picked", "began", "quit working out" where the paper writes "selected", "were
initiated", "stopped exercising"; BM25 and exact term coverage see nothing in common. The static
model that embeds the passages (:mod:`agents.offline.semantic`) also gives each word a vector, so a
question word is matched to the closest word of a passage window (a MaxSim over word vectors, as
late-interaction retrievers do with contextual ones) and credited by that similarity once it is
above :data:`SOFT_MIN`. Word vectors of a static model confuse spellings ("clot" is near "cl"), so
only alphabetic words of three letters or more are in the lexicon and a soft match never counts as
much as the word itself (:data:`SOFT_SHARE`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence

import numpy as np

from agents.offline.semantic import Embedder
from orchestrator.model.terms import SEARCH_STOPWORDS, search_words, stem_words

__all__ = ["SOFT_MIN", "SOFT_SHARE", "Coverage", "Lexicon", "surface_words"]

SOFT_MIN = 0.45  # a word's closest neighbour at this cosine or more is a match ...
SOFT_SHARE = 0.8  # ... credited at most this share of an exact match


def surface_words(texts: Iterable[str]) -> dict[str, str]:
    """Index stem -> the word the texts most often write for it (what a word vector is taken of)."""
    counts: dict[str, Counter[str]] = {}
    for text in texts:
        found = [w for w in search_words(text) if w.isalpha() and len(w) >= 3 and w not in SEARCH_STOPWORDS]
        for word, stem in zip(found, stem_words(found), strict=True):
            counts.setdefault(stem, Counter())[word] += 1
    return {stem: c.most_common(1)[0][0] for stem, c in counts.items()}


class Lexicon:
    """Unit word vectors of a corpus's index stems, embedded once per retriever."""

    def __init__(self, words: dict[str, str], model: Embedder) -> None:
        self.stems = sorted(words)
        self.ids = {s: i for i, s in enumerate(self.stems)}
        self.model = model
        self.vectors = model.embed([words[s] for s in self.stems])

    def ids_of(self, stems: Iterable[str]) -> np.ndarray:
        return np.fromiter((self.ids[s] for s in stems if s in self.ids), dtype=np.int64)

    def similarities(self, words: Sequence[str]) -> np.ndarray:
        """Cosine of each of ``words`` (rows) with every lexicon word (columns)."""
        if not self.stems or not words:
            return np.zeros((len(words), len(self.stems)), dtype=np.float32)
        return np.asarray(self.model.embed(list(words)) @ self.vectors.T)

    @staticmethod
    def credit(similarities: np.ndarray, ids: np.ndarray) -> np.ndarray:
        """Per question word, the soft match credit in a window whose stems have lexicon ``ids``."""
        if not len(ids):
            return np.zeros(len(similarities))
        best = similarities[:, ids].max(axis=1)
        return np.where(best >= SOFT_MIN, SOFT_SHARE * np.clip(best, 0.0, 1.0), 0.0)


class Coverage:
    """Share of a question's weighted terms a unit and its window hold: exactly (the stem or one of its
    expansions) and softly (else the closest word's :meth:`Lexicon.credit`)."""

    def __init__(self, lexicon: Lexicon | None, groups: Sequence[tuple[str, str, set[str], float]],
                 terms: Sequence[Sequence[str]], windows: Sequence[set[str]]) -> None:
        """``groups``: (the question's word, its stem, the stems that may stand in for it, its weight)."""
        self.lexicon, self.groups, self.terms, self.windows = lexicon, groups, terms, windows
        self.weights = np.array([g[3] for g in groups])
        self.total = float(self.weights.sum()) or 1.0
        self.sims = lexicon.similarities([g[0] for g in groups]) if lexicon is not None else None

    def _hits(self, i: int) -> tuple[np.ndarray, np.ndarray]:
        own, window = set(self.terms[i]), self.windows[i]
        return (np.array([1.0 if (s in window or alts & window) else 0.0 for _, s, alts, _ in self.groups]),
                np.array([1.0 if (s in own or alts & own) else 0.0 for _, s, alts, _ in self.groups]))

    def exact(self, i: int) -> tuple[float, float]:
        """(window, own) coverage of unit ``i`` by the question's terms and their expansions only."""
        hard_w, hard_s = self._hits(i)
        return float(self.weights @ hard_w) / self.total, float(self.weights @ hard_s) / self.total

    def __call__(self, i: int) -> tuple[float, float, float, float]:
        """(soft window, soft own, exact window, exact own) coverage of unit ``i``."""
        hard_w, hard_s = self._hits(i)
        exact_w, exact_s = float(self.weights @ hard_w) / self.total, float(self.weights @ hard_s) / self.total
        own, window = set(self.terms[i]), self.windows[i]
        if self.sims is None or self.lexicon is None:
            return exact_w, exact_s, exact_w, exact_s
        soft_w = np.maximum(hard_w, Lexicon.credit(self.sims, self.lexicon.ids_of(window)))
        soft_s = np.maximum(hard_s, Lexicon.credit(self.sims, self.lexicon.ids_of(own)))
        return (float(self.weights @ soft_w) / self.total, float(self.weights @ soft_s) / self.total,
                exact_w, exact_s)
