"""Finding the pairs of claims that conflict without comparing every pair (pure).

Prefix filtering (rare words first): two word sets with Jaccard >= t share a word among the
first ``|x| - ceil(t|x|) + 1`` words of each, so only those need probing; each candidate is
then checked with the size bound and the exact overlap. A :class:`ConflictCache` carries the
result from one build of the views to the next: only claims that changed (new, edited, or
with other canonical sources or entities) are compared again, against every claim.
"""

from __future__ import annotations

import hashlib
import json
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


#: Bump when the pairwise rules change: a cache written under other rules is not reused.
RULES_VERSION = 1


@dataclass
class ConflictCache:
    """What the last search saw (a signature digest per claim id) and found (conflicts by claim-id pair).

    Kept in memory between flushes, and as JSON in the session's state folder between processes:
    a cache is only ever a shortcut, since a pair is reused only when both claims are unchanged.
    """

    tolerance: float | None = None
    signatures: dict[str, str] = field(default_factory=dict)
    conflicts: dict[Pair, Conflict] = field(default_factory=dict)
    #: In memory only: the word index of the last search, updated for the claims that changed.
    index: WordIndex | None = field(default=None, compare=False, repr=False)

    def to_json(self) -> dict[str, Any]:
        return {"rules": RULES_VERSION, "tolerance": self.tolerance, "signatures": self.signatures,
                "conflicts": [[a, b, c.kind, c.reason, c.compared] for (a, b), c in sorted(self.conflicts.items())]}

    @classmethod
    def from_json(cls, data: Any) -> ConflictCache:
        """The cache ``to_json`` wrote; an empty one for anything else (other rules, damage)."""
        try:
            if data["rules"] != RULES_VERSION:
                return cls()
            conflicts = {(str(a), str(b)): Conflict(str(kind), str(reason), compared)
                         for a, b, kind, reason, compared in data["conflicts"]}
            signatures = {str(k): str(v) for k, v in data["signatures"].items()}
            return cls(float(data["tolerance"]), signatures, conflicts)
        except (KeyError, TypeError, ValueError, AttributeError):
            return cls()


def _signature(claim: Mapping[str, Any]) -> str:
    """A digest of everything the pairwise rules read from a claim."""
    parts = [str(claim.get("statement", "")), sorted(sources_of(claim)), agent_of(claim),
             sorted(str(e) for e in claim.get("entity_ids") or ())]
    return hashlib.sha256(json.dumps(parts, ensure_ascii=False).encode()).hexdigest()[:24]


def find_conflicts(claims: Sequence[Mapping[str, Any]], tolerance: float,
                   cache: ConflictCache | None = None) -> dict[Pair, Conflict]:
    """The conflicting pairs among ``claims`` (ids ordered within each pair); the same with or without cache."""
    cache = cache if cache is not None else ConflictCache()
    claims = [c for c in claims if isinstance(c.get("id"), str)]
    by_id = {str(c["id"]): c for c in claims}
    if len(by_id) == len(claims):  # ids are unique (always, in a merged graph): index by id, update what changed
        index = cache.index if cache.index is not None else WordIndex()
        changed = index.update(by_id)
        signatures = index.signatures  # exactly the ids of by_id now
        cache.index = index
        steady = cache.tolerance == tolerance and cache.signatures is signatures  # the last search was this index's
        if steady and 2 * len(changed) <= len(by_id):  # when most claims changed, one self-join is cheaper (below)
            found = {pair: c for pair, c in cache.conflicts.items() if pair[0] in by_id and pair[1] in by_id
                     and pair[0] not in changed and pair[1] not in changed}
            pairs: Iterator[tuple[str, str]] = index.pairs_touching(list(changed))
        elif not steady and cache.tolerance == tolerance and cache.signatures:  # a search read back from JSON
            same = {cid for cid, sig in signatures.items() if cache.signatures.get(cid) == sig}
            found = {pair: c for pair, c in cache.conflicts.items() if pair[0] in same and pair[1] in same}
            pairs = index.pairs_touching([cid for cid in by_id if cid not in same])
        else:
            ids = list(by_id)
            words = [index.words[cid] for cid in ids]
            found = {}
            pairs = ((ids[i], ids[j]) for i, j in _all_pairs(words, index.frequency))
    else:
        cache.index = None
        signatures = {str(c["id"]): _signature(c) for c in claims}
        words = [analyse(str(c.get("statement", ""))).content for c in claims]
        frequency = Counter(w for content in words for w in content)
        if cache.tolerance == tolerance and cache.signatures:
            same = {cid for cid, sig in signatures.items() if cache.signatures.get(cid) == sig}
            found = {pair: c for pair, c in cache.conflicts.items() if pair[0] in same and pair[1] in same}
            focus = [i for i, c in enumerate(claims) if c["id"] not in same]
            positions = _pairs_touching(words, frequency, focus)
        else:
            found, positions = {}, _all_pairs(words, frequency)
        pairs = ((str(claims[i]["id"]), str(claims[j]["id"])) for i, j in positions)
    for a, b in pairs:
        conflict = claim_conflict(by_id[a], by_id[b], tolerance)
        if conflict is not None:
            found[(a, b) if a < b else (b, a)] = conflict
    cache.tolerance, cache.signatures, cache.conflicts = tolerance, signatures, found
    return found


def _key(claim: Mapping[str, Any]) -> tuple[Any, ...]:
    """What :func:`_signature` and the content words depend on, cheap to build and compare."""
    provenance = claim.get("provenance")
    return (claim.get("id"), claim.get("statement"),
            provenance.get("agent") if isinstance(provenance, Mapping) else None,
            tuple(e.get("source_id") if isinstance(e, Mapping) else None for e in claim.get("evidence") or ()),
            tuple(claim.get("entity_ids") or ()))


@dataclass
class WordIndex:
    """Signature, content words and prefix postings by claim id, kept from one search to the next.

    A views flush re-reads every claim; only those whose key changed are analysed and re-indexed,
    so the search costs what changed rather than the size of the graph. Only prefixes are indexed
    (as in :func:`_all_pairs`), ordered by a frequency snapshot taken when the index was (re)built:
    any fixed order finds every close pair, and rare words first keeps the postings short.
    """

    keys: dict[str, tuple[Any, ...] | None] = field(default_factory=dict)
    objects: dict[str, Mapping[str, Any]] = field(default_factory=dict)
    signatures: dict[str, str] = field(default_factory=dict)
    words: dict[str, frozenset[str]] = field(default_factory=dict)
    frequency: Counter[str] = field(default_factory=Counter)
    rank: dict[str, int] = field(default_factory=dict)
    ranked_at: int = 0
    prefixes: dict[str, list[str]] = field(default_factory=dict)
    postings: dict[str, dict[str, int]] = field(default_factory=lambda: defaultdict(dict))  # word -> id -> position

    def update(self, by_id: Mapping[str, Mapping[str, Any]]) -> set[str]:
        """Bring the index to ``by_id``; returns the ids whose signature is new or changed."""
        changed: set[str] = set()
        rerank = len(by_id) > 2 * self.ranked_at + 100  # then every prefix is taken once, at the end
        for gone in [cid for cid in self.keys if cid not in by_id]:
            self._drop(cid=gone)
        objects = self.objects
        for cid, claim in by_id.items():
            if objects.get(cid) is claim:  # the same unified claim as last time (views keep unchanged ones)
                continue
            objects[cid] = claim
            try:
                key: tuple[Any, ...] | None = _key(claim)
                unchanged = self.keys.get(cid) == key
            except TypeError:  # an unhashable or incomparable value: analyse every time
                key, unchanged = None, False
            if unchanged and key is not None:
                continue
            signature = _signature(claim)
            if self.signatures.get(cid) != signature:
                changed.add(cid)
            content = analyse(str(claim.get("statement", ""))).content
            if cid in self.keys and self.words.get(cid) == content:
                self.keys[cid], self.signatures[cid] = key, signature
                continue
            self._drop(cid)
            self.keys[cid], self.words[cid], self.signatures[cid] = key, content, signature
            objects[cid] = claim
            self.frequency.update(content)
            if not rerank:
                self._post(cid, content)
        if rerank:  # the graph doubled: order by today's frequencies
            self.rank, self.ranked_at = dict(self.frequency), len(self.words)
            self.prefixes.clear()
            self.postings.clear()
            for cid, content in self.words.items():
                self._post(cid, content)
        return changed

    def _post(self, cid: str, content: frozenset[str]) -> None:
        if len(content) < MIN_CONTENT_WORDS:
            return
        rank = self.rank
        ordered = sorted(content, key=lambda w: (rank.get(w, 0), w))
        prefix = self.prefixes[cid] = ordered[: len(content) - ceil(THRESHOLD * len(content)) + 1]
        for position, word in enumerate(prefix):
            self.postings[word][cid] = position

    def _drop(self, cid: str) -> None:
        content = self.words.pop(cid, None)
        self.keys.pop(cid, None)
        self.objects.pop(cid, None)
        self.signatures.pop(cid, None)
        if content is not None:
            self.frequency.subtract(content)
        for word in self.prefixes.pop(cid, ()):
            holders = self.postings.get(word)
            if holders is not None:
                holders.pop(cid, None)

    def pairs_touching(self, focus: Sequence[str]) -> Iterator[tuple[str, str]]:
        """Every close pair with at least one side in ``focus``, as :func:`_pairs_touching` finds them."""
        words = self.words
        for cid in focus:
            content = words[cid]
            seen, size = {cid}, len(content)
            for mine, word in enumerate(self.prefixes.get(cid, ())):  # none for a statement too short
                for other, theirs_at in self.postings.get(word, {}).items():
                    if other in seen:
                        continue
                    seen.add(other)
                    theirs = words[other]  # _close, inlined: this loop is most of a flush's search
                    their_size = len(theirs)
                    if their_size < THRESHOLD * size or size < THRESHOLD * their_size:  # _close's size bound
                        continue
                    # Met first at their smallest shared word (for a close pair it is in both prefixes),
                    # so at most this many words are shared (positional filtering).
                    most = min(size - mine, their_size - theirs_at)
                    if most < THRESHOLD * (size + their_size - most):
                        continue
                    shared = len(content & theirs)
                    if shared >= THRESHOLD * (size + their_size - shared):
                        yield cid, other
