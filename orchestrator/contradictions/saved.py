"""The contradiction search's saved rows: each agent's claims as a new process reads them back (pure).

The views keep one row per agent record in the ledger (orchestrator/commit/views.py); a new process
reads every row back before its first search (:meth:`orchestrator.contradictions.search.ConflictCache.
seed_from`). That is every claim of the graph, so a row is made to be read, checked and written back
whole, never claim by claim: the claims' ids and contexts
(:func:`orchestrator.contradictions.entries.context_key`) as two JSON lists, and their filing keys as one
base64 string of little-endian 64-bit integers with the number of each claim's (a JSON number per key
was most of the reading, and checking each one's type most of the rest).
"""

from __future__ import annotations

import base64
import binascii
import sys
from array import array
from bisect import bisect_right
from collections.abc import Iterable, Mapping, Sequence
from itertools import accumulate, chain
from typing import Any

from orchestrator.contradictions.rules import Conflict

_SWAP = sys.byteorder == "big"  # saved little-endian, whatever the machine


class SavedRow:
    """One agent's saved claims: ids, contexts and (packed) filing keys by position; ``claims`` are the claim
    objects they were checked against; ``gone`` counts those the row no longer describes (removed, changed)."""

    __slots__ = ("agent", "claims", "contexts", "ends", "flat", "gone", "ids", "sizes")

    def __init__(self, agent: str, ids: list[str], contexts: list[str], sizes: list[int], flat: array[int]):
        self.agent, self.ids, self.contexts, self.sizes, self.flat = agent, ids, contexts, sizes, flat
        self.ends = list(accumulate(sizes))
        self.claims: list[Mapping[str, Any] | None] = []
        self.gone = 0

    def keys_at(self, pos: int) -> array[int]:
        """The filing keys of the claim at ``pos``."""
        return self.flat[self.ends[pos] - self.sizes[pos]:self.ends[pos]]

    def owners(self, keys: frozenset[int]) -> list[int]:
        """The positions of the claims filed under any of ``keys`` (passes in C over the row's keys)."""
        hits = keys.intersection(self.flat)
        if not hits:
            return []
        flat, found = self.flat.tolist(), set()
        for key in hits:
            at = -1
            while True:
                try:
                    at = flat.index(key, at + 1)
                except ValueError:
                    break
                found.add(bisect_right(self.ends, at))
        return sorted(found)

    def holding(self, keys: frozenset[int], held: Mapping[str, tuple[SavedRow, int]]) -> list[str]:
        """The ids of the claims filed under any of ``keys`` that it still holds (``held``: by id, row and position)."""
        if self.gone >= len(self.ids):
            return []
        return [self.ids[pos] for pos in self.owners(keys) if held.get(self.ids[pos]) == (self, pos)]

    def packed(self, positions: Iterable[int] | None = None) -> bytes:
        """The keys of the claims at ``positions`` (all: None), as saved."""
        if positions is None:
            return _to_bytes(self.flat)
        return b"".join(_to_bytes(self.keys_at(pos)) for pos in positions)


def agent_row(row: SavedRow | None, kept: list[int] | None, ids: list[str], contexts: list[str],
              keys: list[Sequence[int]]) -> dict[str, Any]:
    """An agent's row as the views save it: the claims its saved ``row`` still describes (those at ``kept``;
    all: None), then its other claims; the caller adds its ``conflicts``."""
    if row is None:
        head: tuple[list[str], list[str], list[int], bytes] = ([], [], [], b"")
    elif kept is None:  # every claim as saved: the row as read
        head = (row.ids, row.contexts, row.sizes, row.packed())
    else:
        head = ([row.ids[pos] for pos in kept], [row.contexts[pos] for pos in kept],
                [row.sizes[pos] for pos in kept], row.packed(kept))
    return {"ids": head[0] + ids, "contexts": head[1] + contexts, "sizes": head[2] + list(map(len, keys)),
            "keys": base64.b64encode(head[3] + pack(keys)).decode("ascii")}


def pack(keys: Iterable[Sequence[int]]) -> bytes:
    """Filing keys as a row saves them (each claim's best as an array: packing ints one by one is slow)."""
    return b"".join(_to_bytes(k if type(k) is array else array("q", k)) for k in keys)


def read_row(saved: Mapping[str, Any]) -> SavedRow | None:
    """A saved row's claims, or None when anything in them is malformed or is not one agent's.

    Also reads the rows of earlier versions (``claims``: id -> [context, keys]); the views write a row
    again in this form when its agent's claims or conflicts change."""
    if "ids" not in saved and isinstance(saved.get("claims"), dict):
        return _read_older(saved["claims"])
    ids, contexts, sizes, keys = saved.get("ids"), saved.get("contexts"), saved.get("sizes"), saved.get("keys")
    if not (isinstance(ids, list) and isinstance(contexts, list) and isinstance(sizes, list) and isinstance(keys, str)
            and ids and len(ids) == len(contexts) == len(sizes) and set(map(type, sizes)) == {int} and min(sizes) >= 0):
        return None
    try:
        raw = base64.b64decode(keys, validate=True)
    except (binascii.Error, ValueError):
        return None
    if len(raw) != 8 * sum(sizes):
        return None
    flat = array("q")
    flat.frombytes(raw)
    if _SWAP:
        flat.byteswap()
    return _checked(ids, contexts, sizes, flat)


def read_conflicts(saved: Mapping[str, Any]) -> dict[tuple[str, str], Conflict]:
    """The conflicts a saved row lists under its agent; each malformed one is ignored."""
    pairs = saved.get("conflicts")
    found = {}
    for item in pairs if isinstance(pairs, list) else ():
        if isinstance(item, list) and len(item) == 5 and all(isinstance(x, str) for x in item[:4]):
            found[(item[0], item[1])] = Conflict(item[2], item[3], item[4] if isinstance(item[4], dict) else None)
    return found


def _read_older(claims: dict[Any, Any]) -> SavedRow | None:
    lines = list(claims.values())
    if not (lines and all(isinstance(line, list) and len(line) == 2 and isinstance(line[1], list) for line in lines)
            and set(map(type, chain.from_iterable(line[1] for line in lines))) <= {int}):
        return None
    try:
        flat = array("q", chain.from_iterable(line[1] for line in lines))
    except OverflowError:
        return None
    return _checked(list(claims), [line[0] for line in lines], [len(line[1]) for line in lines], flat)


def _checked(ids: list[Any], contexts: list[Any], sizes: list[int], flat: array[int]) -> SavedRow | None:
    """The row, when its ids and contexts are strings and its ids one agent's (``<agent>:<local id>``), once each."""
    if not (set(map(type, ids)) == {str} and set(map(type, contexts)) == {str} and len(set(ids)) == len(ids)):
        return None
    agent = ids[0].partition(":")[0]
    # the ids with one prefix are one run in sorted order: the least and the greatest have it, so all do
    if not (min(ids).startswith(agent + ":") and max(ids).startswith(agent + ":")):
        return None
    return SavedRow(agent, ids, contexts, sizes, flat)


def _to_bytes(keys: array[int]) -> bytes:
    if _SWAP:
        keys = array("q", keys)
        keys.byteswap()
    return keys.tobytes()
