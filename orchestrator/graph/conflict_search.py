"""Finding the pairs of claims that conflict without comparing every pair (pure).

Candidates come from the prefixes of :mod:`orchestrator.graph.word_index` (stop words, the
words more than ``STOP_DF`` claims hold, left out); each is then checked with the size bound
and the exact overlap, with and without the stop words. A :class:`ConflictCache` carries the
result from one build of the views to the next: only claims that changed (new, edited, or
with other canonical sources or entities) are compared again, against every claim.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from orchestrator.graph.conflicts import Conflict, claim_conflict
from orchestrator.graph.statements import analyse
from orchestrator.graph.word_index import WordIndex, close, keyed, prefix, signature, stop_words

Pair = tuple[str, str]


def _all_pairs(reduced: Sequence[frozenset[str]], words: Sequence[frozenset[str]], rank: Mapping[str, int]
               ) -> Iterator[tuple[int, int]]:
    """Every pair close enough, each once: only prefixes of the compared words are indexed."""
    postings: dict[str, list[int]] = {}
    for index, content in enumerate(reduced):
        if not content:
            continue
        seen: set[int] = set()
        for word in prefix(content, rank):
            holders = postings.setdefault(word, [])
            for other in holders:
                if other not in seen:
                    seen.add(other)
                    if close(content, reduced[other]) and close(words[index], words[other]):
                        yield other, index
            holders.append(index)


def _pairs_touching(reduced: Sequence[frozenset[str]], words: Sequence[frozenset[str]], rank: Mapping[str, int],
                    focus: Sequence[int]) -> Iterator[tuple[int, int]]:
    """Every close pair with at least one side in ``focus``: its prefix probed against all words."""
    postings: dict[str, list[int]] = {}
    for index, content in enumerate(reduced):
        for word in content:
            postings.setdefault(word, []).append(index)
    for index in focus:
        content = reduced[index]
        seen = {index}
        for word in prefix(content, rank) if content else ():
            for other in postings[word]:
                if other not in seen:
                    seen.add(other)
                    if close(content, reduced[other]) and close(words[index], words[other]):
                        yield (other, index) if other < index else (index, other)


#: Bump when the pairwise rules change: a cache written under other rules is not reused.
RULES_VERSION = 4  # 2: stop words (orchestrator/graph/word_index.py); 3: content words kept, orjson signatures;
# 4: each part's fingerprint and claim ids kept


@dataclass
class ConflictCache:
    """What the last search saw (a signature digest per claim id) and found (conflicts by claim-id pair).

    Kept in memory between flushes, and as JSON in the session's state folder between processes:
    a cache is only ever a shortcut, since a pair is reused only when both claims are unchanged.
    """

    tolerance: float | None = None
    signatures: dict[str, str] = field(default_factory=dict)
    conflicts: dict[Pair, Conflict] = field(default_factory=dict)
    stop: set[str] = field(default_factory=set)  # the stop words of that search
    #: Read back from JSON: each claim's content words by id, (signature, words joined by spaces),
    #: so a new process analyses only the statements that changed (see :attr:`WordIndex.seed`).
    words: dict[str, tuple[str, str]] = field(default_factory=dict, compare=False, repr=False)
    #: Read back from JSON: each part's fingerprint and claim ids by name (see :attr:`WordIndex.seed_prints`).
    prints: dict[str, tuple[str, list[str]]] = field(default_factory=dict, compare=False, repr=False)
    #: In memory only: the word index of the last search, updated for the claims that changed.
    index: WordIndex | None = field(default=None, compare=False, repr=False)

    def to_json(self) -> dict[str, Any]:
        index = self.index
        # joined by spaces: a content word never holds whitespace (statements._WORD)
        current = index is not None and index.signatures is self.signatures
        words = {cid: " ".join(content) for cid, content in index.words.items()} if index and current else {}
        parts = {name: [found, list(part)] for name, (found, part) in index.prints.items()} if index and current else {}
        return {"rules": RULES_VERSION, "tolerance": self.tolerance, "signatures": self.signatures,
                "stop": sorted(self.stop), "words": words, "parts": parts,
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
            words = {str(k): (signatures[k], str(v)) for k, v in data["words"].items() if k in signatures}
            prints = {str(name): (str(found), [str(cid) for cid in ids])
                      for name, (found, ids) in data["parts"].items()}
            return cls(float(data["tolerance"]), signatures, conflicts, {str(w) for w in data["stop"]}, words, prints)
        except (KeyError, TypeError, ValueError, AttributeError):
            return cls()


def find_conflicts(claims: Sequence[Mapping[str, Any]], tolerance: float,
                   cache: ConflictCache | None = None, *, by_id: Mapping[str, Mapping[str, Any]] | None = None,
                   groups: Sequence[Mapping[str, Mapping[str, Any]]] | None = None,
                   prints: Sequence[tuple[str, str | None]] | None = None) -> dict[Pair, Conflict]:
    """The conflicting pairs among ``claims`` (ids ordered within each pair); the same with or without cache.

    ``by_id``: the claims with a string id by id, when the caller has it (a pass over every claim less),
    ``groups`` the same in parts and ``prints`` their names and fingerprints (see :meth:`WordIndex.update`).
    """
    cache = cache if cache is not None else ConflictCache()
    if by_id is None or len(by_id) != len(claims):
        groups = prints = None
        claims = [c for c in claims if isinstance(c.get("id"), str)]
        by_id = {str(c["id"]): c for c in claims}
    if len(by_id) == len(claims):  # ids are unique (always, in a merged graph): index by id, update what changed
        index = cache.index if cache.index is not None else WordIndex(seed=cache.words, seed_prints=cache.prints)
        changed = index.update(by_id, groups, prints)
        index.seed = cache.words = {}  # used once, by the first update of a process
        index.seed_prints = cache.prints = {}
        signatures = index.signatures  # exactly the ids of by_id now
        cache.index = index
        steady = cache.tolerance == tolerance and cache.signatures is signatures  # the last search was this index's
        if steady and 2 * len(changed) <= len(by_id):  # when most claims changed, one self-join is cheaper (below)
            found = {pair: c for pair, c in cache.conflicts.items() if pair[0] in by_id and pair[1] in by_id
                     and pair[0] not in changed and pair[1] not in changed}
            pairs: Iterator[tuple[str, str]] = index.pairs_touching(list(changed))
        elif not steady and cache.tolerance == tolerance and cache.signatures:  # a search read back from JSON
            flipped = cache.stop ^ index.stop
            same = {cid for cid, sig in signatures.items() if cache.signatures.get(cid) == sig
                    and flipped.isdisjoint(index.words[cid])}
            found = {pair: c for pair, c in cache.conflicts.items() if pair[0] in same and pair[1] in same}
            pairs = index.pairs_touching([cid for cid in by_id if cid not in same])
        else:
            ids = list(by_id)
            found = {}
            pairs = ((ids[i], ids[j]) for i, j in _all_pairs(
                [index.keyed[cid] for cid in ids], [index.words[cid] for cid in ids], index.rank))
        stop = index.stop
    else:
        cache.index = None
        signatures = {str(c["id"]): signature(c) for c in claims}
        words = [analyse(str(c.get("statement", ""))).content for c in claims]
        frequency = Counter(w for content in words for w in content)
        stop = stop_words(frequency)
        reduced = [keyed(content, stop) for content in words]
        if cache.tolerance == tolerance and cache.signatures:
            same = {cid for cid, sig in signatures.items() if cache.signatures.get(cid) == sig}
            same -= {c["id"] for c, content in zip(claims, words, strict=True) if not content.isdisjoint(
                cache.stop ^ stop)}
            found = {pair: c for pair, c in cache.conflicts.items() if pair[0] in same and pair[1] in same}
            focus = [i for i, c in enumerate(claims) if c["id"] not in same]
            positions = _pairs_touching(reduced, words, frequency, focus)
        else:
            found, positions = {}, _all_pairs(reduced, words, frequency)
        pairs = ((str(claims[i]["id"]), str(claims[j]["id"])) for i, j in positions)
    for a, b in pairs:
        conflict = claim_conflict(by_id[a], by_id[b], tolerance)
        if conflict is not None:
            found[(a, b) if a < b else (b, a)] = conflict
    cache.tolerance, cache.signatures, cache.conflicts, cache.stop = tolerance, signatures, found, set(stop)
    return found
