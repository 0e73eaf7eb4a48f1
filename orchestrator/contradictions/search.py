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
when both of its claims are as they were saved.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import compress, repeat
from operator import attrgetter, not_
from typing import Any

from orchestrator.contradictions.entities import Groups, Names
from orchestrator.contradictions.entries import (
    Entry,
    agent_part,
    context_key,
    entry_context,
    keys_of,
    pair_conflict,
    related,
    same_claim,
)
from orchestrator.contradictions.rules import Conflict
from orchestrator.contradictions.saved import SavedRow, agent_row, read_conflicts, read_row
from orchestrator.contradictions.statements import analyse

Pair = tuple[str, str]


@dataclass
class ConflictCache:
    """What the last search saw (each claim and its keys) and found (conflicts by claim-id pair). A claim is an
    entry, or *held* as its saved row describes it until a search needs it (a new process needs few)."""

    entries: dict[str, Entry] = field(default_factory=dict)
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
        self.seed_pairs.update(read_conflicts(saved))

    def _put(self, cid: str, entry: Entry) -> None:
        self.entries[cid] = entry
        self.members.setdefault(agent_part(cid), {})[cid] = None
        if self.filed:
            self._file(cid, entry)

    def _file(self, cid: str, entry: Entry) -> None:
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

    def _entry(self, cid: str, claim: Mapping[str, Any], tokens: frozenset[str], names: Names) -> tuple[Entry, bool]:
        """The claim's entry, and whether it was taken as saved (not analysed)."""
        saved = self.seed.pop(cid, None)
        context = context_key(claim, names)
        if saved is not None and saved[0] == context:
            return Entry(claim, names, tokens, saved[1], None, context), True
        self.dirty.add(agent_part(cid))
        topic = analyse(str(claim.get("statement", "")), names).topic
        return Entry(claim, names, tokens, array("q", keys_of(topic)), topic, context), False

    def _get(self, cid: str, groups: Groups) -> Entry | None:
        """The claim's entry, made from its saved row if it is held (its names under ``groups``, as checked)."""
        item = self.held.pop(cid, None)
        if item is None:
            return self.entries.get(cid)
        row, pos = item
        claim = row.claims[pos]
        assert claim is not None  # held: it was there and as saved
        tokens, names = groups.of_claim(claim)
        entry = Entry(claim, names, tokens, row.keys_at(pos), None, row.contexts[pos], row)
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
                if a is not None and b is not None and related(a, b):
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
            for cid in sorted([c for c in by_id if c not in held]):  # a pass of lookups, no copy of the ids
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
            row, _ = self.held.pop(cid)
            row.gone += 1
            self.dirty.add(row.agent)
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
            if entry is not None and entry.names == names and entry.groups == tokens and same_claim(entry.claim, claim):
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
            sharing += row.holding(keys, self.held)
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
            conflict = pair_conflict(entries[pair[0]], entries[pair[1]])
            if conflict is not None:
                found[pair] = conflict
        for pair in found.keys() ^ self.conflicts.keys():
            self.dirty.add(agent_part(pair[0]))  # the agent whose saved row lists the pair
        self.conflicts = found
        return found

    def take_saved(self) -> dict[str, dict[str, Any]]:
        """What a new process needs, for each agent whose claims or conflicts changed since the last call:
        its claims' :func:`context_key` and filing keys (:func:`~orchestrator.contradictions.saved.agent_row`),
        and the conflicts listed under the agent of their first claim."""
        dirty, self.dirty = self.dirty, set()
        if not dirty:
            return {}
        saved_rows = {row.agent: row for row in self.held_rows}
        entries, held = self.entries, self.held
        rows: dict[str, dict[str, Any]] = {}
        for agent in sorted(dirty):
            row = saved_rows.get(agent)
            kept = None if row is None or not row.gone else [
                pos for pos, cid in enumerate(row.ids)
                if held.get(cid) == (row, pos) or ((entry := entries.get(cid)) is not None and entry.row is row)]
            new = [cid for cid in self.members.get(agent, ()) if entries[cid].row is None]
            rows[agent] = {**agent_row(row, kept, new, [entry_context(entries[cid]) for cid in new],
                                       [entries[cid].keys for cid in new]), "conflicts": []}
        for (a, b), conflict in sorted(self.conflicts.items()):
            row_of = rows.get(agent_part(a))
            if row_of is not None:
                row_of["conflicts"].append([a, b, conflict.kind, conflict.reason, conflict.compared])
        return rows


_KEYS = attrgetter("keys")


def find_conflicts(by_id: Mapping[str, Mapping[str, Any]], groups: Groups,
                   cache: ConflictCache | None = None) -> dict[Pair, Conflict]:
    """The conflicting pairs among the claims of ``by_id`` (ids ordered within each pair); the same with or
    without a cache."""
    cache = cache if cache is not None else ConflictCache()
    return cache.search(cache.update(by_id, groups))
