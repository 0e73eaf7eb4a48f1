"""The in-memory graph a processor works on: every agent's current record, plus lookups.

Kept between merges so each merge costs what its change costs. Loaded from the store
at start and refreshed from it when another process has committed meanwhile.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from orchestrator.model.kinds import COLLECTIONS


class GraphState:
    def __init__(self, session_id: str):
        self.session_id = session_id
        self.records: dict[str, dict[str, Any]] = {}
        self.head_seq = 0
        self._items: dict[str, dict[str, dict[str, Any]]] = {c: {} for c in COLLECTIONS}
        self._locals: dict[str, dict[str, set[str]]] = {c: defaultdict(set) for c in COLLECTIONS}

    def put(self, agent: str, record: dict[str, Any] | None) -> None:
        """Replace (or with None, remove) an agent's record and its index entries."""
        old = self.records.pop(agent, None)
        if old is not None:
            for collection, items in old["contribution"]["items"].items():
                for item in items:
                    self._items[collection].pop(item["id"], None)
                    owners = self._locals[collection].get(item["local_id"])
                    if owners is not None:
                        owners.discard(item["id"])
                        if not owners:
                            del self._locals[collection][item["local_id"]]
        if record is None:
            return
        self.records[agent] = record
        for collection, items in record["contribution"]["items"].items():
            for item in items:
                self._items[collection][item["id"]] = item
                self._locals[collection][item["local_id"]].add(item["id"])

    def item(self, collection: str, global_id: str) -> dict[str, Any] | None:
        return self._items[collection].get(global_id)

    def kind_of(self, global_id: str) -> str | None:
        for collection in ("claims", "entities", "sources"):
            if global_id in self._items[collection]:
                return COLLECTIONS[collection]
        return None

    def excluding(self, agent: str) -> AgentView:
        return AgentView(self, agent)

    def counts(self) -> dict[str, int]:
        return {c: len(items) for c, items in self._items.items()}


class AgentView:
    """The graph as the merge of ``agent`` may see it: everyone else's items."""

    def __init__(self, state: GraphState, agent: str):
        self._state = state
        self._prefix = f"{agent}:"

    def exists(self, collection: str, global_id: str) -> bool:
        return not global_id.startswith(self._prefix) and global_id in self._state._items[collection]

    def by_local(self, collection: str, local_id: str) -> list[str]:
        owners = self._state._locals[collection].get(local_id, ())
        return sorted(g for g in owners if not g.startswith(self._prefix))
