"""Finding the pairs of claims that conflict without comparing every pair (pure).

Prefix filtering (rare words first): two word sets with Jaccard >= t share a word among the
first ``|x| - ceil(t|x|) + 1`` words of each, so only those need probing; each candidate is
then checked with the size bound and the exact overlap. A :class:`ConflictCache` carries the
result from one build of the views to the next: only claims that changed (new, edited, or
with other canonical sources or entities) are compared again, against every claim.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from math import ceil
from typing import Any

from orchestrator.graph.conflicts import (
    ENTITY_BONUS,
    MIN_CONTENT_WORDS,
    NUMERIC_OVERLAP,
    POLARITY_OVERLAP,
    Conflict,
    agent_of,
    claim_conflict,
    sources_of,
)
from orchestrator.graph.statements import analyse

THRESHOLD = min(NUMERIC_OVERLAP, POLARITY_OVERLAP) - ENTITY_BONUS
Pair = tuple[str, str]


def _prefix(content: frozenset[str], frequency: Counter[str]) -> list[str]:
    ordered = sorted(content, key=lambda w: (frequency[w], w))
    return ordered[: len(content) - ceil(THRESHOLD * len(content)) + 1]


def _close(mine: frozenset[str], theirs: frozenset[str]) -> bool:
    if min(len(mine), len(theirs)) < THRESHOLD * max(len(mine), len(theirs)):
        return False
    shared = len(mine & theirs)
    return shared >= THRESHOLD * (len(mine) + len(theirs) - shared)


def _all_pairs(words: Sequence[frozenset[str]], frequency: Counter[str]) -> Iterator[tuple[int, int]]:
    """Every pair close enough, each once: only prefix words are indexed."""
    postings: dict[str, list[int]] = defaultdict(list)
    for index, content in enumerate(words):
        if len(content) < MIN_CONTENT_WORDS:
            continue
        seen: set[int] = set()
        for word in _prefix(content, frequency):
            for other in postings[word]:
                if other not in seen:
                    seen.add(other)
                    if _close(content, words[other]):
                        yield other, index
            postings[word].append(index)


def _pairs_touching(words: Sequence[frozenset[str]], frequency: Counter[str], focus: Sequence[int]
                    ) -> Iterator[tuple[int, int]]:
    """Every close pair with at least one side in ``focus``: its prefix probed against all words."""
    postings: dict[str, list[int]] = defaultdict(list)
    for index, content in enumerate(words):
        if len(content) >= MIN_CONTENT_WORDS:
            for word in content:
                postings[word].append(index)
    for index in focus:
        content = words[index]
        if len(content) < MIN_CONTENT_WORDS:
            continue
        seen = {index}
        for word in _prefix(content, frequency):
            for other in postings[word]:
                if other not in seen:
                    seen.add(other)
                    if _close(content, words[other]):
                        yield (other, index) if other < index else (index, other)


@dataclass
class ConflictCache:
    """What the last search saw (a signature per claim id) and found (conflicts by claim-id pair)."""

    tolerance: float | None = None
    signatures: dict[str, tuple[Any, ...]] = field(default_factory=dict)
    conflicts: dict[Pair, Conflict] = field(default_factory=dict)


def _signature(claim: Mapping[str, Any]) -> tuple[Any, ...]:
    """Everything the pairwise rules read from a claim."""
    return (str(claim.get("statement", "")), sources_of(claim), agent_of(claim),
            tuple(sorted(str(e) for e in claim.get("entity_ids") or ())))


def find_conflicts(claims: Sequence[Mapping[str, Any]], tolerance: float,
                   cache: ConflictCache | None = None) -> dict[Pair, Conflict]:
    """The conflicting pairs among ``claims`` (ids ordered within each pair); the same with or without cache."""
    cache = cache if cache is not None else ConflictCache()
    claims = [c for c in claims if isinstance(c.get("id"), str)]
    signatures = {str(c["id"]): _signature(c) for c in claims}
    words = [analyse(str(c.get("statement", ""))).content for c in claims]
    frequency = Counter(w for content in words for w in content)
    if cache.tolerance == tolerance and cache.signatures:
        same = {cid for cid, sig in signatures.items() if cache.signatures.get(cid) == sig}
        found = {pair: c for pair, c in cache.conflicts.items() if pair[0] in same and pair[1] in same}
        focus = [i for i, c in enumerate(claims) if c["id"] not in same]
        pairs = _pairs_touching(words, frequency, focus)
    else:
        found, pairs = {}, _all_pairs(words, frequency)
    for i, j in pairs:
        conflict = claim_conflict(claims[i], claims[j], tolerance)
        if conflict is not None:
            a, b = str(claims[i]["id"]), str(claims[j]["id"])
            found[(a, b) if a < b else (b, a)] = conflict
    cache.tolerance, cache.signatures, cache.conflicts = tolerance, signatures, found
    return found
