"""Key phrases of a text: the frequent, informative word runs a planner or researcher searches with."""

from __future__ import annotations

import math
import re
from collections import Counter

from agents.offline.text import normalize_chars, wordlist
from orchestrator.model.terms import SEARCH_STOPWORDS

_PHRASE_SPLIT_RE = re.compile(r"[^\w\s'\u2019-]|\s-\s|--")


_GENERIC = frozenset(
    wordlist(
        """
    al also among based doi et fig figs figure figures find found however http https include
    includes including new one paper result results second section show shown shows studies study
    table tables three two use used uses using well within work www
        """
    )
)


def key_phrases(text: str, top_n: int = 10, max_words: int = 4) -> list[str]:
    """Deterministic key phrases, lower-cased, best first.

    RAKE-style candidates (runs of content words between stopwords and punctuation), scored by
    how often each n-gram of a run recurs, times sqrt(length) so multi-word phrases win and
    single words count half. A phrase inside a better one (or containing it) is dropped; ties
    break alphabetically.
    """
    counts: Counter[tuple[str, ...]] = Counter()
    for chunk in _PHRASE_SPLIT_RE.split(normalize_chars(text).casefold()):
        run: list[str] = []
        for word in [*chunk.split(), ""]:
            w = word.strip("'\u2019-")
            if len(w) > 1 and w not in SEARCH_STOPWORDS and w not in _GENERIC and not w[0].isdigit():
                run.append(w)
                continue
            for n in range(1, min(max_words, len(run)) + 1):
                counts.update(tuple(run[i : i + n]) for i in range(len(run) - n + 1))
            run = []

    def score(p: tuple[str, ...]) -> float:
        return counts[p] * (math.sqrt(len(p)) if len(p) > 1 else 0.5)

    chosen: list[str] = []
    for phrase in sorted(counts, key=lambda p: (-score(p), " ".join(p))):
        padded = f" {' '.join(phrase)} "
        if any(padded in f" {c} " or f" {c} " in padded for c in chosen):
            continue
        chosen.append(padded.strip())
        if len(chosen) >= top_n:
            break
    return chosen
