"""The in-memory graph a processor works on: every agent's current record, plus lookups.

Kept between merges so each merge costs what its change costs. Start-up must not cost what the
graph costs: a state started from the committed graph (a :class:`Committed`, the store) knows
only each agent's record seq, loads a record the first time it is read, and answers "who has
this local id" from the store's key index for the records it has not loaded. Records put later
(merges, records other processes committed) live in memory, indexed here.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator, Mapping, MutableMapping, Sequence
from typing import Any, Protocol

from orchestrator.model.errors import StoreError
from orchestrator.model.kinds import COLLECTIONS
from orchestrator.model.records import Record


class Committed(Protocol):
    """The committed graph a state starts from, read on demand (the commit layer backs it with the store)."""

    def records_at(self, seqs: Sequence[int]) -> dict[int, Record]: ...

    def holders(self, kind: str, key: str) -> list[tuple[str, int, str]]: ...


def local_key(collection: str) -> str:
    """The key kind under which a record's items of ``collection`` are indexed by local id."""
    return f"local:{collection}"


def record_keys(record: Mapping[str, Any]) -> list[tuple[str, str, str]]:
    """The lookup keys of a record's items: (``local:<collection>``, local id, global id)."""
    return [(local_key(collection), item["local_id"], item["id"])
            for collection, items in record["contribution"]["items"].items() for item in items]


class _Unloaded:
    """Stands in for a committed record not read yet."""

    __slots__ = ("seq",)

    def __init__(self, seq: int) -> None:
        self.seq = seq


class Records(MutableMapping[str, Record]):
    """agent -> current record, in the order one-by-one puts leave them (each put moves its agent last).

    Reading a record not loaded yet loads it (and indexes it in the state); :meth:`load_all`
    loads every one at once, for what reads the whole graph (views, full validation).
    """

    def __init__(self, state: GraphState) -> None:
        self._state = state
        self._data: dict[str, Record | _Unloaded] = {}

    def __getitem__(self, agent: str) -> Record:
        value = self._data[agent]
        if isinstance(value, _Unloaded):
            return self._state._load([agent])[agent]
        return value

    def __setitem__(self, agent: str, record: Record) -> None:
        self._data[agent] = record

    def __delitem__(self, agent: str) -> None:
        del self._data[agent]

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __reversed__(self) -> Iterator[str]:
        return reversed(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __contains__(self, agent: object) -> bool:
        return agent in self._data

    def load_all(self) -> dict[str, Record]:
        """Every record, loaded (one read of the store for those not loaded yet), as a plain dict."""
        unloaded = [agent for agent, value in self._data.items() if isinstance(value, _Unloaded)]
        if unloaded:
            self._state._load(unloaded)
        return dict(self._data)  # type: ignore[arg-type]  # all loaded now

    def items(self) -> Any:
        return self.load_all().items()

    def values(self) -> Any:
        return self.load_all().values()

    def move_to_end(self, agent: str) -> None:
        self._data[agent] = self._data.pop(agent)

    def _pop_loaded(self, agent: str) -> Record | None:
        """Remove the agent; its record if it was loaded (an unloaded one was never indexed)."""
        value = self._data.pop(agent, None)
        return None if isinstance(value, _Unloaded) else value


class GraphState:
    def __init__(self, session_id: str):
        self.session_id = session_id
        self.records = Records(self)
        self.head_seq = 0
        self._items: dict[str, dict[str, dict[str, Any]]] = {c: {} for c in COLLECTIONS}
        self._locals: dict[str, dict[str, set[str]]] = {c: defaultdict(set) for c in COLLECTIONS}
        self._committed: Committed | None = None
        #: agent -> seq of its committed record, for agents whose record was not put since the start
        self._base: dict[str, int] = {}

    def start_from(self, committed: Committed, seqs: Mapping[str, int]) -> None:
        """Begin as the committed graph whose current records are ``seqs`` (agent -> record seq),
        loading none. Their items must be in the store's key index (:func:`record_keys`)."""
        self._committed = committed
        for agent, seq in seqs.items():
            self.records._data[agent] = _Unloaded(seq)
            self._base[agent] = seq

    def adopt(self, agents: list[str]) -> dict[str, Record]:
        """Load these agents' records and hold them as if put (not looked up in the store's index)."""
        found = self._load(agents) if agents else {}
        for agent in agents:
            self._base.pop(agent, None)
        return found

    def seqs(self) -> dict[str, int | None]:
        """agent -> the seq of its current record (None for a record not committed yet), reading none."""
        return {agent: self.seq_of(agent) for agent in self.records._data}

    def base_seq(self, agent: str) -> int | None:
        """The record seq of ``agent`` if its record is the committed one the state started from."""
        return self._base.get(agent)

    def seq_of(self, agent: str) -> int | None:
        value = self.records._data.get(agent)
        if isinstance(value, _Unloaded):
            return value.seq
        return value.get("seq") if value is not None else None

    def put(self, agent: str, record: Record | None) -> None:
        """Replace (or with None, remove) an agent's record and its index entries."""
        self._base.pop(agent, None)
        old = self.records._pop_loaded(agent)
        if old is not None:
            self._unindex(old)
        if record is None:
            return
        self.records._data[agent] = record
        self._index(record)

    def _index(self, record: Mapping[str, Any]) -> None:
        for collection, items in record["contribution"]["items"].items():
            for item in items:
                self._items[collection][item["id"]] = item
                self._locals[collection][item["local_id"]].add(item["id"])

    def _unindex(self, record: Mapping[str, Any]) -> None:
        for collection, items in record["contribution"]["items"].items():
            for item in items:
                self._items[collection].pop(item["id"], None)
                owners = self._locals[collection].get(item["local_id"])
                if owners is not None:
                    owners.discard(item["id"])
                    if not owners:
                        del self._locals[collection][item["local_id"]]

    def _load(self, agents: list[str]) -> dict[str, Record]:
        assert self._committed is not None
        data = self.records._data
        wanted = {agent: value.seq for agent in agents if isinstance(value := data.get(agent), _Unloaded)}
        found = self._committed.records_at(sorted(wanted.values()))
        for agent, seq in wanted.items():
            record = found.get(seq)
            if record is None:  # not a KeyError: Mapping.get would take the agent for absent
                raise StoreError(f"the store has no record {seq}, which it lists as agent {agent!r}'s current "
                                 "one; it is internal state: move the .cconductor folder aside and re-drop the "
                                 "agents' locks to rebuild")
            data[agent] = record
            self._index(record)
        return {agent: data[agent] for agent in agents}  # type: ignore[misc]

    def _owner_loaded(self, global_id: str) -> None:
        owner = global_id.partition(":")[0]
        if isinstance(self.records._data.get(owner), _Unloaded):
            self._load([owner])

    def item(self, collection: str, global_id: str) -> dict[str, Any] | None:
        self._owner_loaded(global_id)
        return self._items[collection].get(global_id)

    def kind_of(self, global_id: str) -> str | None:
        self._owner_loaded(global_id)
        for collection in ("claims", "entities", "sources"):
            if global_id in self._items[collection]:
                return COLLECTIONS[collection]
        return None

    def with_local(self, collection: str, local_id: str) -> set[str]:
        """Global ids of the items of ``collection`` with this local id, in every current record."""
        found = set(self._locals[collection].get(local_id, ()))
        if self._committed is not None and self._base:
            found.update(gid for agent, seq, gid in self._committed.holders(local_key(collection), local_id)
                         if self._base.get(agent) == seq)
        return found

    def excluding(self, agent: str) -> AgentView:
        return AgentView(self, agent)


class AgentView:
    """The graph as the merge of ``agent`` may see it: everyone else's items."""

    def __init__(self, state: GraphState, agent: str):
        self._state = state
        self._prefix = f"{agent}:"

    def exists(self, collection: str, global_id: str) -> bool:
        return not global_id.startswith(self._prefix) and self._state.item(collection, global_id) is not None

    def by_local(self, collection: str, local_id: str) -> list[str]:
        return sorted(g for g in self._state.with_local(collection, local_id) if not g.startswith(self._prefix))
