"""One claim as the contradiction search holds it, its filing keys and context, and the pair check (pure).

Apart from :mod:`orchestrator.contradictions.search`, which decides which pairs to compare and keeps
the search between builds: this is what it keeps of each claim and how two of them are compared.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from orchestrator.contradictions.entities import Names
from orchestrator.contradictions.rules import MAX_EXTRA, MIN_SHARED, Conflict, compare_statements, independent
from orchestrator.contradictions.saved import SavedRow
from orchestrator.contradictions.statements import analyse


class Entry:
    """One claim as the search holds it: what the pair rules read from it, its filing keys, its topic, and
    its :func:`context_key` (kept for the saved row)."""

    __slots__ = ("_topic", "claim", "context", "groups", "keys", "names", "row")

    def __init__(self, claim: Mapping[str, Any], names: Names, groups: frozenset[str], keys: Sequence[int],
                 topic: frozenset[str] | None = None, context: str | None = None, row: SavedRow | None = None):
        self.claim, self.names, self.groups, self.keys, self._topic = claim, names, groups, keys, topic
        self.context, self.row = context, row  # row: the saved row that describes it, while it does

    @property
    def topic(self) -> frozenset[str]:
        """Analysed when first needed: a claim taken from a saved row has only its keys."""
        if self._topic is None:
            self._topic = analyse(str(self.claim.get("statement", "")), self.names).topic
        return self._topic


_HASHES: dict[str, int] = {}


def word_hash(word: str) -> int:
    """A 64-bit hash of a topic word that is the same in every process (so keys can be saved)."""
    found = _HASHES.get(word)
    if found is None:
        found = int.from_bytes(hashlib.blake2b(word.encode(), digest_size=8).digest(), "little", signed=True)
        if len(_HASHES) < 500_000:
            _HASHES[word] = found
    return found


def keys_of(topic: Iterable[str]) -> tuple[int, ...]:
    """The claim's filing keys: its topic, then its topic less each word (when enough words remain)."""
    hashes = [_HASHES.get(word) or word_hash(word) for word in topic]
    full = 0
    for h in hashes:
        full ^= h
    if len(hashes) - 1 < MIN_SHARED:
        return (full,) if len(hashes) >= MIN_SHARED else ()
    return (full, *[full ^ h for h in hashes])


_NAMES_TEXT: dict[Names, str] = {}


def context_key(claim: Mapping[str, Any], names: Names) -> str:
    """What the pair rules read from a claim besides its statement: its entities' names and its sources.

    Computed for every claim when a new process checks its saved rows: the common shapes take no detour."""
    evidence: Any = claim.get("evidence") or ()
    if len(evidence) == 1 and (type(first := evidence[0]) is dict or isinstance(first, Mapping)):
        sources = first.get("source_id")
        if type(sources) is not str:
            sources = str(sources)
    else:
        sources = ",".join(str(e.get("source_id")) for e in evidence if isinstance(e, Mapping))
    if not names:
        return sources
    text = _NAMES_TEXT.get(names)
    if text is None:
        text = "|".join(f"{n}={t}" for n, t in names) + "\x1f"
        if len(_NAMES_TEXT) < 100_000:
            _NAMES_TEXT[names] = text
    return text + sources


def agent_part(claim_id: str) -> str:
    """The agent of a global claim id (``<agent>:<local id>``)."""
    return claim_id.partition(":")[0]


#: One agent's saved row as the first search of a new process takes it: the agent, and its claims' ids,
#: :func:`context_key` and filing keys, side by side.
_Block = tuple[str, list[str], list[str], list[Sequence[int]]]


def entry_context(entry: Entry) -> str:
    if entry.context is None:
        entry.context = context_key(entry.claim, entry.names)
    return entry.context


def same_claim(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """Whether the pair rules would read the same from both versions of a claim."""
    return (a.get("statement") == b.get("statement") and a.get("provenance") == b.get("provenance")
            and [e.get("source_id") for e in a.get("evidence") or () if isinstance(e, Mapping)]
            == [e.get("source_id") for e in b.get("evidence") or () if isinstance(e, Mapping)])


def related(a: Entry, b: Entry) -> bool:
    """Independent claims that may be about one thing (not naming only different entities)."""
    return not (a.groups and b.groups and not a.groups & b.groups) and independent(a.claim, b.claim)


def pair_conflict(a: Entry, b: Entry) -> Conflict | None:
    extra_a, extra_b = a.topic - b.topic, b.topic - a.topic
    if (extra_a and extra_b) or len(extra_a) + len(extra_b) > MAX_EXTRA:
        return None  # filed under one key by chance (a word each side): never the same thing
    if not related(a, b):
        return None
    return compare_statements(analyse(str(a.claim.get("statement", "")), a.names),
                              analyse(str(b.claim.get("statement", "")), b.names))
