"""Finding the pairs of claims that conflict without comparing every pair (pure).

Two claims can disagree only when their topics coincide but for at most one word on one side
(:func:`orchestrator.contradictions.rules.same_topic`). So each claim is filed under its topic and
under its topic less each one word (a *deletion neighbourhood*: 1 + n keys for n words), and two
claims are compared only when they share a key: a topic and the same topic with one word more
always do. A key is the XOR of its words' hashes, so the n smaller keys cost one XOR each. The
cost is linear in the number of claims whatever the vocabulary: no word, however common, makes
a long list to walk (the word-by-word index this replaced went quadratic with a small vocabulary).

:class:`ConflictCache` keeps the search from one views build to the next: only claims that changed
(statement, sources, agent, entities or their names) are analysed and compared again. Between
processes the views keep, beside each agent's record in the ledger, a row with each claim's context
and filing keys and the conflicts found with its claims (:meth:`ConflictCache.take_saved`,
:mod:`orchestrator.contradictions.saved`); a new process seeded with them
(:meth:`ConflictCache.seed_from`) checks every claim's context against its row and *holds* the
claims that match as saved, making one an entry only when a search needs it; it analyses and
compares only the claims whose record, sources or entity names changed, and keeps a saved conflict
when both of its claims are as they were saved. At 20,000 claims the per-claim work of a new
process is the point: it is one check per claim, the rest in bulk.
"""

from __future__ import annotations

import hashlib
from array import array
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import compress, repeat
from operator import attrgetter, not_
from typing import Any

from orchestrator.contradictions.entities import Groups, Names
from orchestrator.contradictions.rules import MAX_EXTRA, MIN_SHARED, Conflict, compare_statements, independent
from orchestrator.contradictions.saved import SavedRow, pack, read_row, saved_row
from orchestrator.contradictions.statements import analyse

Pair = tuple[str, str]


class _Entry:
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


@dataclass
class ConflictCache:
    """What the last search saw (each claim and its keys) and found (conflicts by claim-id pair).

    A claim is either an entry or *held*: taken as its saved row describes it, made an entry only when a
    search needs it (a new process needs few of them)."""

    entries: dict[str, _Entry] = field(default_factory=dict)
    #: filing key -> the claim id filed under it (a list when several are); built when first needed
    buckets: dict[int, str | list[str]] = field(default_factory=dict)
    filed: bool = False
    scanned: bool = False
    conflicts: dict[Pair, Conflict] = field(default_factory=dict)
    groups: Groups | None = None
    #: Saved by an earlier process, read by the first search of this one: each agent's row, its conflicts.
    rows: dict[str, SavedRow] = field(default_factory=dict)
    seed_pairs: dict[Pair, Conflict] = field(default_factory=dict)
    #: claim id -> its saved row and position, for the claims taken as saved and not made entries yet
    held: dict[str, tuple[SavedRow, int]] = field(default_factory=dict)
    held_rows: list[SavedRow] = field(default_factory=list)
    #: Saved rows seeded after a search: taken claim by claim (:meth:`_entry`).
    seed: dict[str, tuple[str, Sequence[int]]] = field(default_factory=dict)
    #: Agents whose saved keys or conflicts no longer describe their claims (see :meth:`take_saved`).
    dirty: set[str] = field(default_factory=set)
    #: agent -> the ids of its entries (a dict for order), for :meth:`take_saved`
    members: dict[str, dict[str, None]] = field(default_factory=dict)

    def seed_from(self, saved: Mapping[str, Any]) -> None:
        """Take one agent's :meth:`take_saved` row (read back from JSON); a malformed row's claims are ignored,
        and so is each malformed conflict. Checked in bulk: the rows hold every claim of the graph."""
        row = read_row(saved)
        if row is not None:
            self.rows[row.agent] = row
        pairs = saved.get("conflicts")
        for item in pairs if isinstance(pairs, list) else ():
            if isinstance(item, list) and len(item) == 5 and all(isinstance(x, str) for x in item[:4]):
                compared = item[4] if isinstance(item[4], dict) else None
                self.seed_pairs[(item[0], item[1])] = Conflict(item[2], item[3], compared)

    def _put(self, cid: str, entry: _Entry) -> None:
        self.entries[cid] = entry
        self.members.setdefault(agent_part(cid), {})[cid] = None
        if self.filed:
            self._file(cid, entry)

    def _file(self, cid: str, entry: _Entry) -> None:
        buckets = self.buckets
        for key in entry.keys:
            held = buckets.get(key)
            if held is None:
                buckets[key] = cid
            elif isinstance(held, str):
                buckets[key] = [held, cid]
            else:
                held.append(cid)

    def _unfile(self, cid: str) -> None:
        entry = self.entries.pop(cid, None)
        if entry is None:
            return
        agent = agent_part(cid)
        self.dirty.add(agent)
        self.members.get(agent, {}).pop(cid, None)
        if entry.row is not None:
            entry.row.gone += 1
        if not self.filed:
            return
        for key in entry.keys:
            held = self.buckets.get(key)
            if held == cid:
                del self.buckets[key]
            elif isinstance(held, list) and cid in held:
                held.remove(cid)
                if len(held) == 1:
                    self.buckets[key] = held[0]

    def _drop_held(self, cid: str) -> None:
        row, _ = self.held.pop(cid)
        row.gone += 1
        self.dirty.add(row.agent)

    def _entry(self, cid: str, claim: Mapping[str, Any], tokens: frozenset[str], names: Names) -> tuple[_Entry, bool]:
        """The claim's entry, and whether it was taken as saved (not analysed)."""
        saved = self.seed.pop(cid, None)
        context = context_key(claim, names)
        if saved is not None and saved[0] == context:
            return _Entry(claim, names, tokens, saved[1], None, context), True
        self.dirty.add(agent_part(cid))
        topic = analyse(str(claim.get("statement", "")), names).topic
        return _Entry(claim, names, tokens, array("q", keys_of(topic)), topic, context), False

    def _get(self, cid: str, groups: Groups) -> _Entry | None:
        """The claim's entry, made from its saved row if it is held (its names under ``groups``, as checked)."""
        item = self.held.pop(cid, None)
        if item is None:
            return self.entries.get(cid)
        row, pos = item
        claim = row.claims[pos]
        assert claim is not None  # held: it was there and as saved
        tokens, names = groups.of_claim(claim)
        entry = _Entry(claim, names, tokens, row.keys_at(pos), None, row.contexts[pos], row)
        self._put(cid, entry)
        return entry

    def update(self, by_id: Mapping[str, Mapping[str, Any]], groups: Groups) -> set[str]:
        """Take the claims of ``by_id`` that are new or changed, drop the gone; return the ids to compare again."""
        if self.rows and not self.entries and not self.held:
            changed = self._take_rows(by_id, groups)
        else:
            for row in self.rows.values():
                self.seed.update(zip(row.ids, zip(row.contexts, map(row.keys_at, range(len(row.ids))), strict=True),
                                      strict=True))
            changed = self._take_changed(by_id, groups)
        self.groups, self.rows = groups, {}
        if self.seed_pairs:  # a saved conflict stands while both claims are as saved and still independent
            for pair, conflict in self.seed_pairs.items():
                a = None if pair[0] in changed else self._get(pair[0], groups)
                b = None if pair[1] in changed else self._get(pair[1], groups)
                if a is not None and b is not None and _related(a, b):
                    self.conflicts[pair] = conflict
                else:
                    self.dirty.add(agent_part(pair[0]))  # its saved row lists a conflict that may be gone
        self.seed, self.seed_pairs = {}, {}
        return changed

    def _take_rows(self, by_id: Mapping[str, Mapping[str, Any]], groups: Groups) -> set[str]:
        """A new process's first search: each claim held as saved when its context is, the others analysed.

        The one pass over every claim of the graph, so it does no more per claim than it must: look the
        claim up, read its entities' names, compare its context; a row whose claims all match is held whole."""
        held, of_claim = self.held, groups.of_claim
        self.held_rows = list(self.rows.values())
        for row in self.held_rows:
            row.claims = claims = list(map(by_id.get, row.ids))
            same = [claim is not None and context_key(claim, of_claim(claim)[1]) == context
                    for claim, context in zip(claims, row.contexts, strict=True)]
            if all(same):
                held.update(zip(row.ids, zip(repeat(row), range(len(claims))), strict=True))
                continue
            self.dirty.add(row.agent)  # a claim gone or changed: the row is written again
            for pos, (cid, kept) in enumerate(zip(row.ids, same, strict=True)):
                if kept:
                    held[cid] = (row, pos)
                else:
                    row.gone += 1
        changed = set()
        if len(held) != len(by_id):
            for cid in sorted(by_id.keys() - held.keys()):
                claim = by_id[cid]
                entry, _ = self._entry(cid, claim, *of_claim(claim))
                self._put(cid, entry)
                changed.add(cid)
        return changed

    def _take_changed(self, by_id: Mapping[str, Mapping[str, Any]], groups: Groups) -> set[str]:
        before = self.groups
        same_groups = before is not None and before == groups
        changed: set[str] = set()
        for cid in [c for c in self.entries if c not in by_id]:
            self._unfile(cid)
            changed.add(cid)
        for cid in [c for c in self.held if c not in by_id]:
            self._drop_held(cid)
            changed.add(cid)
        entries, held = self.entries, self.held
        for cid, claim in by_id.items():
            entry = entries.get(cid)
            if entry is None and cid in held:
                row, pos = held[cid]
                if row.claims[pos] is claim and same_groups:
                    continue  # the very claim object it was checked as, and no entity changed its names
                entry = self._get(cid, before if before is not None else groups)  # as it was held, to compare below
            if entry is not None and entry.claim is claim and same_groups:
                continue  # the very claim object of the last build, and no entity changed its names
            tokens, names = groups.of_claim(claim)
            if entry is not None and entry.names == names and entry.groups == tokens and _same(entry.claim, claim):
                entry.claim = claim
                continue
            if entry is not None:
                self._unfile(cid)
            entry, seeded = self._entry(cid, claim, tokens, names)
            self._put(cid, entry)
            if not seeded:
                changed.add(cid)
        return changed

    def _candidates(self, changed: set[str]) -> Iterable[tuple[str, str]]:
        """Each pair sharing a key with a changed claim on one side, once (``cid`` changed)."""
        entries, held = self.entries, self.held
        if not self.filed and held and len(changed) * 8 < len(entries) + len(held):
            yield from self._scan(changed)
            return
        if not self.filed:
            if held:
                assert self.groups is not None  # claims are held only after an update
                for cid in list(held):
                    self._get(cid, self.groups)
            for cid, entry in entries.items():
                self._file(cid, entry)
            self.filed = True
        buckets = self.buckets
        for cid in sorted(changed):
            mine = entries.get(cid)
            if mine is None:
                continue
            for key in mine.keys:
                held_under = buckets.get(key)
                for other in (held_under,) if isinstance(held_under, str) else held_under or ():
                    if other != cid and not (other in changed and other < cid):
                        yield cid, other

    def _scan(self, changed: set[str]) -> Iterable[tuple[str, str]]:
        """Most claims held as saved (a new process): find those sharing a key with the few changed ones by a
        pass in C over every claim's keys, without filing them (which would make every one an entry)."""
        entries = self.entries
        wanted: dict[int, list[str]] = {}
        for cid in changed:
            if cid in entries:
                for key in entries[cid].keys:
                    wanted.setdefault(key, []).append(cid)
        self.scanned = True
        if not wanted:
            return
        keys = frozenset(wanted)
        apart = keys.isdisjoint
        sharing = list(compress(entries, map(not_, map(apart, map(_KEYS, entries.values())))))
        for row in self.held_rows:
            if row.gone < len(row.ids):
                sharing += [row.ids[pos] for pos in row.owners(keys) if self.held.get(row.ids[pos]) == (row, pos)]
        groups = self.groups
        assert groups is not None  # claims are held only after an update
        for other in sharing:
            mine = self._get(other, groups)
            assert mine is not None
            for key in mine.keys:
                for cid in wanted.get(key, ()):
                    if cid != other and not (other in changed and other < cid):
                        yield cid, other

    def search(self, changed: set[str]) -> dict[Pair, Conflict]:
        """Compare every claim that changed with every claim it shares a key with; keep the rest."""
        found = {pair: c for pair, c in self.conflicts.items() if pair[0] not in changed and pair[1] not in changed}
        entries = self.entries
        compared: set[Pair] = set()
        for cid, other in self._candidates(changed):
            pair = (cid, other) if cid < other else (other, cid)
            if pair in compared:
                continue
            compared.add(pair)
            conflict = _conflict(entries[pair[0]], entries[pair[1]])
            if conflict is not None:
                found[pair] = conflict
        for pair in found.keys() ^ self.conflicts.keys():
            self.dirty.add(agent_part(pair[0]))  # the agent whose saved row lists the pair
        self.conflicts = found
        return found

    def take_saved(self) -> dict[str, dict[str, Any]]:
        """What a new process needs, for each agent whose claims or conflicts changed since the last call:
        its claims' :func:`context_key` and filing keys (:func:`~orchestrator.contradictions.saved.saved_row`),
        and the conflicts listed under the agent of their first claim."""
        dirty, self.dirty = self.dirty, set()
        if not dirty:
            return {}
        saved_rows = {row.agent: row for row in self.held_rows}
        entries, held = self.entries, self.held
        rows: dict[str, dict[str, Any]] = {}
        for agent in sorted(dirty):
            ids: list[str] = []
            contexts: list[str] = []
            sizes: list[int] = []
            packed: list[bytes] = []
            row = saved_rows.get(agent)
            if row is not None and not row.gone:  # every claim as saved: the row as read
                ids, contexts, sizes = list(row.ids), list(row.contexts), list(row.sizes)
                packed.append(row.packed())
            elif row is not None:
                kept = [pos for pos, cid in enumerate(row.ids) if held.get(cid) == (row, pos)
                        or ((entry := entries.get(cid)) is not None and entry.row is row)]
                ids, contexts = [row.ids[pos] for pos in kept], [row.contexts[pos] for pos in kept]
                sizes = [row.sizes[pos] for pos in kept]
                packed.append(row.packed(kept))
            new = [(cid, entries[cid]) for cid in self.members.get(agent, ()) if entries[cid].row is None]
            ids += [cid for cid, _ in new]
            contexts += [_context(entry) for _, entry in new]
            sizes += [len(entry.keys) for _, entry in new]
            packed.append(pack(entry.keys for _, entry in new))
            rows[agent] = {**saved_row(ids, contexts, sizes, b"".join(packed)), "conflicts": []}
        for (a, b), conflict in sorted(self.conflicts.items()):
            row_of = rows.get(agent_part(a))
            if row_of is not None:
                row_of["conflicts"].append([a, b, conflict.kind, conflict.reason, conflict.compared])
        return rows


_KEYS = attrgetter("keys")


def _context(entry: _Entry) -> str:
    if entry.context is None:
        entry.context = context_key(entry.claim, entry.names)
    return entry.context


def _same(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """Whether the pair rules would read the same from both versions of a claim."""
    return (a.get("statement") == b.get("statement") and a.get("provenance") == b.get("provenance")
            and [e.get("source_id") for e in a.get("evidence") or () if isinstance(e, Mapping)]
            == [e.get("source_id") for e in b.get("evidence") or () if isinstance(e, Mapping)])


def _related(a: _Entry, b: _Entry) -> bool:
    """Independent claims that may be about one thing (not naming only different entities)."""
    return not (a.groups and b.groups and not a.groups & b.groups) and independent(a.claim, b.claim)


def _conflict(a: _Entry, b: _Entry) -> Conflict | None:
    extra_a, extra_b = a.topic - b.topic, b.topic - a.topic
    if (extra_a and extra_b) or len(extra_a) + len(extra_b) > MAX_EXTRA:
        return None  # filed under one key by chance (a word each side): never the same thing
    if not _related(a, b):
        return None
    return compare_statements(analyse(str(a.claim.get("statement", "")), a.names),
                              analyse(str(b.claim.get("statement", "")), b.names))


def find_conflicts(by_id: Mapping[str, Mapping[str, Any]], groups: Groups,
                   cache: ConflictCache | None = None) -> dict[Pair, Conflict]:
    """The conflicting pairs among the claims of ``by_id`` (ids ordered within each pair); the same with or
    without a cache."""
    cache = cache if cache is not None else ConflictCache()
    return cache.search(cache.update(by_id, groups))
