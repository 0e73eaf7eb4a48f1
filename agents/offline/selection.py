"""Choosing among ranked sentences: near-duplicates once, and quotes spread over papers when asked.

Two sentences are the same statement when their wording is nearly identical and they do not
differ in direction ("increased" / "decreased", "not"), so a contradiction is never merged away.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

from rapidfuzz import fuzz

from agents.offline.sentences import Sentence
from orchestrator.model.terms import search_terms, stem_words

__all__ = ["DUPLICATE", "Answer", "dedupe", "is_broad", "same_statement", "spread", "with_results"]

DUPLICATE = 90.0  # token-set similarity above which two sentences say the same thing


@dataclass(frozen=True)
class Answer:
    """A quotable sentence, its score, how much of the question its window covers, and its section."""

    sentence: Sentence
    score: float
    coverage: float
    section: str


#: Stems that flip what a sentence says: two sentences differing in one of them are not duplicates.
_POLARITY = frozenset(stem_words(["increase", "decrease", "higher", "lower", "more", "less", "improve", "worsen",
                                  "not", "no", "without", "positive", "negative", "better", "worse", "rise", "fall",
                                  "gain", "loss", "before", "after"]))


def same_statement(a: str, b: str) -> bool:
    """Near-identical wording (token-set similarity >= DUPLICATE) with no difference in direction."""
    if fuzz.token_set_ratio(a.casefold(), b.casefold()) < DUPLICATE:
        return False
    differ = set(search_terms(a, keep_qualifiers=True)) ^ set(search_terms(b, keep_qualifiers=True))
    return not (differ & _POLARITY) and not any(t[:1].isdigit() for t in differ)


_BROAD = re.compile(r"(?i)\b(?:these|the|all|both|each|across|different|several|most)\s+(?:\w+\s+)?"
                    r"(?:papers|studies|articles|documents|sources|works|trials|reviews)\b")


def spread(answers: list[Answer], decay: float = 0.85) -> list[Answer]:
    """Reorder so each further quote from an already quoted paper counts ``decay`` times less."""
    pool = list(answers)
    out: list[Answer] = []
    count: Counter[str] = Counter()
    while pool:
        best = max(range(len(pool)), key=lambda i: (pool[i].score * decay ** count[pool[i].sentence.source_id], -i))
        chosen = pool.pop(best)
        count[chosen.sentence.source_id] += 1
        out.append(chosen)
    return out


def dedupe(answers: list[Answer], limit: int, exclude: set[str]) -> list[Answer]:
    """The first ``limit`` answers that do not repeat an earlier one (or an excluded sentence)."""
    kept: list[Answer] = []
    for answer in answers:
        flat = answer.sentence.flat
        if flat.casefold() in exclude or any(same_statement(flat, k.sentence.flat) for k in kept):
            continue
        kept.append(answer)
        if len(kept) >= limit:
            break
    return kept


def is_broad(question: str) -> bool:
    """A question about several papers ("what methods do these papers use")."""
    return _BROAD.search(question) is not None


def with_results(candidates: list[tuple[float, Answer]], units: list[tuple[Sentence, str, bool]],
                 added: int) -> list[tuple[float, Answer]]:
    """A yes/no question is answered by what the best-matching study found: up to ``added`` of its results
    sentences (``units``: sentence, section, quotable) join the candidates just below the best one."""
    best_value, best = candidates[0]
    have = {(a.sentence.source_id, a.sentence.page, a.sentence.start) for _, a in candidates}
    extra: list[tuple[float, Answer]] = []
    for sentence, section, ok in units:
        key = (sentence.source_id, sentence.page, sentence.start)
        if sentence.source_id == best.sentence.source_id and section == "results" and ok and key not in have:
            value = best_value * (0.97 - 0.01 * len(extra))
            extra.append((value, Answer(sentence, round(value, 6), best.coverage, section)))
    return sorted([*candidates, *extra[:added]], key=lambda c: -c[0])
