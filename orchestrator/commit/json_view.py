"""``knowledge-graph.json`` bytes from cached per-agent fragments, so a flush serialises what changed.

An agent's namespace (its top-level key, with ``_provenance``) depends on its committed record
only, so its indented JSON is rendered once per record and spliced between the view's header and
its unified collections. The unified sources, claims and relationships are spliced the same way
from each agent's part (:class:`orchestrator.graph.unified_cache.UnifiedCache` keeps the same list
while it is valid); the other collections and the stats are rendered at each flush. The bytes are exactly
those of ``orjson.dumps(graph, option=OPT_INDENT_2)`` of the whole view (``tests/test_json_view.py``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import orjson

from orchestrator.graph.unified import UNIFIED
from orchestrator.graph.unified_cache import record_key

__all__ = ["JsonFragments"]

HEADER = ("schema_version", "session", "generated_at", "commit_seq")
TRAILER = (*UNIFIED, "stats")
SPLICED = ("sources", "claims", "relationships")
_INDENT = orjson.OPT_INDENT_2
#: Per collection, per agent: that agent's unified items, in the order the view lists agents.
Segments = Mapping[str, Mapping[str, Sequence[Any]]]


def _members(value: Mapping[str, Any]) -> bytes:
    """The members of a non-empty top-level object as the indented document writes them."""
    return orjson.dumps(value, option=_INDENT)[2:-2]  # without "{\n" and "\n}"


class JsonFragments:
    """One per processor: the rendered namespace of each agent, keyed by its record."""

    def __init__(self) -> None:
        self._memory: dict[str, tuple[tuple[Any, ...], bytes]] = {}
        self._segments: dict[tuple[str, str], tuple[Sequence[Any], bytes]] = {}

    def render(self, graph: Mapping[str, Any], records: Mapping[str, Mapping[str, Any]],
               segments: Segments | None = None) -> bytes | None:
        """The whole view's bytes (with the final newline), or None: see :meth:`pieces`."""
        found = self.pieces(graph, records, segments)
        return None if found is None else b"".join(found)

    def pieces(self, graph: Mapping[str, Any], records: Mapping[str, Mapping[str, Any]],
               segments: Segments | None = None) -> list[bytes] | None:
        """The view's bytes in pieces (written one after the other, never joined into a copy of the
        whole), or None when it must be written in one piece.

        None when the keys are not header, agents, unified collections in that order (an agent named
        like a unified collection) or a value cannot be written by orjson.
        """
        agents = sorted(records)
        if list(graph) != [*HEADER, *agents, *TRAILER]:
            return None
        try:  # one list of pieces and one join: the view is copied once
            pieces = [b"{\n", _members({key: graph[key] for key in HEADER})]
            for agent in agents:
                pieces += (b",\n", self._agent(agent, graph[agent], records[agent]))
            for key in TRAILER:
                pieces.append(b",\n")
                pieces += self._collection(key, graph[key], agents, (segments or {}).get(key))
        except TypeError:
            return None
        for agent in [a for a in self._memory if a not in records]:
            del self._memory[agent]
        for name, agent in [k for k in self._segments if k[1] not in records]:
            del self._segments[(name, agent)]
        pieces.append(b"\n}\n")
        return pieces

    def _agent(self, agent: str, namespace: Any, record: Mapping[str, Any]) -> bytes:
        key = record_key(record)  # None: not committed yet, rendered every time
        cached = self._memory.get(agent)
        if key is not None and cached is not None and cached[0] == key:
            return cached[1]
        body = _members({agent: namespace})
        if key is not None:
            self._memory[agent] = (key, body)
        return body

    def _collection(self, name: str, value: Any, agents: list[str], by_agent: Mapping[str, Sequence[Any]] | None
                    ) -> list[bytes]:
        """The pieces of one trailer member; a spliced collection is each agent's rendered items."""
        if (by_agent is None or name not in SPLICED or any(a not in by_agent for a in agents)
                or sum(len(by_agent[a]) for a in agents) != len(value)):
            return [_members({name: value})]
        label = orjson.dumps(name)
        pieces = [b"  " + label + b": [\n"]
        for agent in agents:
            chunk = self._items(name, agent, by_agent[agent])
            if chunk:
                pieces += (chunk, b",\n")
        if len(pieces) == 1:
            return [b"  " + label + b": []"]
        pieces[-1] = b"\n  ]"
        return pieces

    def _items(self, name: str, agent: str, items: Sequence[Any]) -> bytes:
        """The items as the indented document writes them inside a top-level list (cached per list object)."""
        if not items:
            return b""
        cached = self._segments.get((name, agent))
        if cached is not None and cached[0] is items:
            return cached[1]
        label = orjson.dumps(name)
        body = orjson.dumps({name: items}, option=_INDENT)[len(label) + 8:-6]  # '{\n  "x": [\n' ... '\n  ]\n}'
        self._segments[(name, agent)] = (items, body)
        return body
