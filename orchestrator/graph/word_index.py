"""The content words of every claim, indexed for the contradiction search and kept between searches (pure).

Two statements are compared only when their content words overlap (Jaccard >= :data:`THRESHOLD`)
both as a whole and without the *stop words*: words held by more than :data:`STOP_DF` claims of
the graph. As in a search engine, a word that common says little about what two statements are
about, and its postings would make every search visit most of the graph: with a small
vocabulary the search went quadratic (a 50 MB graph's flush ran for over 14 minutes). A
statement made only of stop words is compared with none. The stop words are a function of the
current claims, so the pairs are the same whether found from scratch or kept from search to search.

Prefix filtering (rare words first): two word sets with Jaccard >= t share a word among the
first ``|x| - ceil(t|x|) + 1`` words of each, in any fixed order, so only those are indexed.
"""

from __future__ import annotations

import hashlib
import sys
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from math import ceil
from typing import Any

import orjson

from orchestrator.graph.conflicts import (
    ENTITY_BONUS,
    MIN_CONTENT_WORDS,
    NUMERIC_OVERLAP,
    POLARITY_OVERLAP,
    agent_of,
    sources_of,
)
from orchestrator.graph.statements import analyse

__all__ = ["STOP_DF", "THRESHOLD", "WordIndex", "close", "keyed", "prefix", "signature", "stop_words"]

THRESHOLD = min(NUMERIC_OVERLAP, POLARITY_OVERLAP) - ENTITY_BONUS
#: A content word held by more claims than this is a stop word (read at each search).
STOP_DF = 1000


def stop_words(frequency: Mapping[str, int]) -> set[str]:
    return {word for word, held in frequency.items() if held > STOP_DF}


def keyed(content: frozenset[str], stop: set[str]) -> frozenset[str]:
    """The words two statements must overlap in (none for a statement too short to compare)."""
    return content - stop if len(content) >= MIN_CONTENT_WORDS else frozenset()


def prefix(words: frozenset[str], rank: Mapping[str, int]) -> list[str]:
    ordered = sorted(words, key=lambda w: (rank.get(w, 0), w))
    return ordered[: len(words) - ceil(THRESHOLD * len(words)) + 1]


def close(mine: frozenset[str], theirs: frozenset[str]) -> bool:
    if min(len(mine), len(theirs)) < THRESHOLD * max(len(mine), len(theirs)):
        return False
    shared = len(mine & theirs)
    return shared >= THRESHOLD * (len(mine) + len(theirs) - shared)


def signature(claim: Mapping[str, Any]) -> str:
    """A digest of everything the pairwise rules read from a claim (its statement included)."""
    parts = [str(claim.get("statement", "")), sorted(sources_of(claim)), agent_of(claim),
             sorted(str(e) for e in claim.get("entity_ids") or ())]
    return hashlib.sha256(orjson.dumps(parts)).hexdigest()[:24]


def _key(claim: Mapping[str, Any]) -> tuple[Any, ...]:
    """What :func:`signature` and the content words depend on, cheap to build and compare."""
    provenance = claim.get("provenance")
    return (claim.get("id"), claim.get("statement"),
            provenance.get("agent") if isinstance(provenance, Mapping) else None,
            tuple(e.get("source_id") if isinstance(e, Mapping) else None for e in claim.get("evidence") or ()),
            tuple(claim.get("entity_ids") or ()))


@dataclass
class WordIndex:
    """Signature, content words and prefix postings by claim id, kept from one search to the next.

    A views flush re-reads every claim; only those whose key changed are analysed and re-indexed,
    so the search costs what changed rather than the size of the graph. Prefixes are ordered by a
    frequency snapshot taken when the index was (re)built: any fixed order finds every close pair,
    and rare words first keeps the postings short.
    """

    keys: dict[str, tuple[Any, ...] | None] = field(default_factory=dict)
    objects: dict[str, Mapping[str, Any]] = field(default_factory=dict)
    signatures: dict[str, str] = field(default_factory=dict)
    words: dict[str, frozenset[str]] = field(default_factory=dict)
    keyed: dict[str, frozenset[str]] = field(default_factory=dict)  # words without the stop words
    frequency: Counter[str] = field(default_factory=Counter)
    stop: set[str] = field(default_factory=set)
    rank: dict[str, int] = field(default_factory=dict)
    ranked_at: int = 0
    prefixes: dict[str, list[str]] = field(default_factory=dict)
    postings: dict[str, dict[str, int]] = field(default_factory=lambda: defaultdict(dict))  # word -> id -> position
    groups: dict[int, Mapping[str, Mapping[str, Any]]] | None = None  # the parts of the last update, by id()
    #: Content words a previous process analysed, by claim id: (signature, words joined by spaces).
    #: A claim with the same signature (so the same statement) takes them instead of analysing again.
    seed: Mapping[str, tuple[str, str]] = field(default_factory=dict)
    #: The parts a previous process saw, by name: (fingerprint, its claim ids). A part passed with the
    #: same fingerprint and ids takes its claims' signatures and words from :attr:`seed` unread.
    seed_prints: Mapping[str, tuple[str, Sequence[str]]] = field(default_factory=dict)
    #: The parts of the last update, by name: (fingerprint, the part), for the next process (see ``update``).
    prints: dict[str, tuple[str, Mapping[str, Mapping[str, Any]]]] = field(default_factory=dict)

    def update(self, by_id: Mapping[str, Mapping[str, Any]],
               groups: Sequence[Mapping[str, Mapping[str, Any]]] | None = None,
               prints: Sequence[tuple[str, str | None]] | None = None) -> set[str]:
        """Bring the index to ``by_id``; returns the ids whose signature or compared words changed.

        ``groups``: ``by_id`` in parts (an agent's claims), never changed once passed: a part passed
        last time as the same object is skipped without looking at its claims. ``prints``: for each
        part, its name and a fingerprint of all its claims' signatures and words depend on (None when
        unknown): a part that a previous process saw with the same fingerprint is not analysed.
        """
        changed: set[str] = set()
        touched: set[str] = set()  # words whose frequency moved
        rerank = len(by_id) > 2 * self.ranked_at + 100  # then every prefix is taken once, at the end
        known = self.groups
        self.groups = {id(g): g for g in groups} if groups is not None else None
        self.prints = {}  # set again once the index holds these parts (a failed update saves none)
        if known is not None and self.groups is not None:
            now = self.groups
            gone = [cid for k, g in known.items() if now.get(k) is not g for cid in g if cid not in by_id]
            scan: Iterable[tuple[str, Mapping[str, Any]]] = (
                item for k, g in now.items() if known.get(k) is not g for item in g.items())
        else:
            gone = [cid for cid in self.keys if cid not in by_id]
            scan = by_id.items()
        for cid in gone:
            touched |= self.words.get(cid, frozenset())
            self._drop(cid=cid)
        seeded = self._seeded(groups, prints) if self.seed_prints and groups is not None and prints else {}
        objects = self.objects
        for cid, claim in scan:
            if objects.get(cid) is claim:  # the same unified claim as last time (views keep unchanged ones)
                continue
            objects[cid] = claim
            saved = seeded.get(cid)
            key: tuple[Any, ...] | None
            if saved is not None:  # its part is as a previous process saw it: key taken on its next change
                key, sig, content = None, saved[0], frozenset(map(sys.intern, saved[1].split()))
            else:
                try:
                    key = _key(claim)
                    unchanged = self.keys.get(cid) == key
                except TypeError:  # an unhashable or incomparable value: analyse every time
                    key, unchanged = None, False
                if unchanged and key is not None:
                    continue
                sig = signature(claim)
                content = self._content(cid, sig, claim)
            if self.signatures.get(cid) != sig:
                changed.add(cid)
            if cid in self.keys and self.words.get(cid) == content:
                self.keys[cid], self.signatures[cid] = key, sig
                continue
            if cid in self.words:  # else nothing of it is indexed yet (a process's first update)
                touched |= self.words[cid] ^ content
                self._drop(cid)
                objects[cid] = claim
            else:
                touched |= content
            self.keys[cid], self.words[cid], self.signatures[cid] = key, content, sig
            self.frequency.update(content)
            changed.add(cid)
            if not rerank:
                self._post(cid)
        flipped = {w for w in touched if (self.frequency[w] > STOP_DF) != (w in self.stop)}
        self.stop ^= flipped
        # a word became a stop word or stopped being one: the claims holding it are compared again
        moved = [c for c, content in self.words.items() if not flipped.isdisjoint(content)] if flipped else []
        changed.update(moved)
        if rerank:  # the graph doubled: order by today's frequencies
            self.rank, self.ranked_at = dict(self.frequency), len(self.words)
            self.prefixes.clear()
            self.postings.clear()
            for cid in self.words:
                self._post(cid)
        for cid in moved if not rerank else ():
            self._unpost(cid)
            self._post(cid)
        if groups is not None and prints is not None:
            self.prints = {name: (found, g) for (name, found), g in zip(prints, groups, strict=True)
                           if found is not None}
        return changed

    def _seeded(self, groups: Sequence[Mapping[str, Mapping[str, Any]]], prints: Sequence[tuple[str, str | None]]
                ) -> dict[str, tuple[str, str]]:
        """The saved (signature, words) of each claim whose part has the fingerprint and ids it was saved with."""
        found: dict[str, tuple[str, str]] = {}
        seed = self.seed
        for (name, now), group in zip(prints, groups, strict=True):
            saved = self.seed_prints.get(name)
            if now is None or saved is None or saved[0] != now or len(saved[1]) != len(group):
                continue
            ids = list(group)
            if ids == saved[1] and all(cid in seed for cid in ids):
                found.update((cid, seed[cid]) for cid in ids)
        return found

    def _content(self, cid: str, sig: str, claim: Mapping[str, Any]) -> frozenset[str]:
        if self.signatures.get(cid) == sig:  # the same statement as when last analysed
            return self.words[cid]
        seeded = self.seed.get(cid)
        if seeded is not None and seeded[0] == sig:
            return frozenset(map(sys.intern, seeded[1].split()))  # one string per word, not per claim
        return analyse(str(claim.get("statement", ""))).content

    def _post(self, cid: str) -> None:
        words = self.keyed[cid] = keyed(self.words[cid], self.stop)
        if not words:
            return
        found = self.prefixes[cid] = prefix(words, self.rank)
        for position, word in enumerate(found):
            self.postings[word][cid] = position

    def _unpost(self, cid: str) -> None:
        self.keyed.pop(cid, None)
        for word in self.prefixes.pop(cid, ()):
            holders = self.postings.get(word)
            if holders is not None:
                holders.pop(cid, None)

    def _drop(self, cid: str) -> None:
        content = self.words.pop(cid, None)
        self.keys.pop(cid, None)
        self.objects.pop(cid, None)
        self.signatures.pop(cid, None)
        if content is not None:
            self.frequency.subtract(content)
        self._unpost(cid)

    def pairs_touching(self, focus: Sequence[str]) -> Iterator[tuple[str, str]]:
        """Every close pair with at least one side in ``focus``."""
        words, reduced = self.words, self.keyed
        for cid in focus:
            content = reduced[cid]
            seen, size = {cid}, len(content)
            for mine, word in enumerate(self.prefixes.get(cid, ())):  # none without compared words
                for other, theirs_at in self.postings.get(word, {}).items():
                    if other in seen:
                        continue
                    seen.add(other)
                    theirs = reduced[other]  # close(), inlined: this loop is most of a flush's search
                    their_size = len(theirs)
                    if their_size < THRESHOLD * size or size < THRESHOLD * their_size:  # the size bound
                        continue
                    # Met first at their smallest shared word (for a close pair it is in both prefixes),
                    # so at most this many words are shared (positional filtering).
                    most = min(size - mine, their_size - theirs_at)
                    if most < THRESHOLD * (size + their_size - most):
                        continue
                    shared = len(content & theirs)
                    if shared >= THRESHOLD * (size + their_size - shared) and close(words[cid], words[other]):
                        yield cid, other
