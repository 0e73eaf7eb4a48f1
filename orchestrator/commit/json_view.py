"""``knowledge-graph.json`` bytes from cached per-agent fragments, so a flush serialises what changed.

An agent's namespace (its top-level key, with ``_provenance``) depends on its committed record
only, so its indented JSON is rendered once per record, kept in memory and in the store (table
``derived``, keyed by the record's ledger seq, like the TriG blocks) and spliced between the view's
header and its unified collections. A fresh process therefore neither parses nor renders any other
agent's namespace: the graph is loaded without them (:mod:`orchestrator.session.ledger`). The unified
sources, claims and relationships are spliced the same way from each agent's part
(:class:`orchestrator.graph.unified_cache.UnifiedCache` keeps the same list while it is valid); the
other lists are rendered a chunk of items at a time and the stats at each flush.

The pieces come from a generator and are written as they come, so a 50 MB view is never held
whole. Their bytes are exactly those of ``orjson.dumps(graph, option=OPT_INDENT_2)`` of the whole
view with each namespace in place (``tests/test_json_view.py``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import orjson

from orchestrator.graph.unified import UNIFIED
from orchestrator.graph.unified_parts import DEFERRED, namespace_entry, record_key
from orchestrator.model.records import Record
from orchestrator.session.ledger import Ledger

__all__ = ["KIND", "JsonFragments", "whole"]

KIND = "json-namespace"  # the rendered namespaces in the store's ``derived`` table
HEADER = ("schema_version", "session", "generated_at", "commit_seq")
TRAILER = (*UNIFIED, "stats")
SPLICED = ("sources", "claims", "relationships")
CHUNK = 256  # items of a list rendered at a time when no per-agent pieces are given
_INDENT = orjson.OPT_INDENT_2
#: Per collection, per agent: (what identifies them, None: never reused; that agent's unified items).
Segments = Mapping[str, Mapping[str, tuple[Any, Sequence[Any]]]]


def _members(value: Mapping[str, Any]) -> bytes:
    """The members of a non-empty top-level object as the indented document writes them."""
    return orjson.dumps(value, option=_INDENT)[2:-2]  # without "{\n" and "\n}"


def _list_items(name: str, items: Sequence[Any]) -> bytes:
    """Items as the indented document writes them inside the top-level list ``name`` (no brackets)."""
    label = orjson.dumps(name)
    return orjson.dumps({name: items}, option=_INDENT)[len(label) + 8:-6]  # '{\n  "x": [\n' ... '\n  ]\n}'


def whole(graph: Mapping[str, Any], records: Mapping[str, Record]) -> dict[str, Any]:
    """The view with every deferred namespace in place (for writing it in one piece)."""
    return {key: namespace_entry(records[key]) if value is DEFERRED else value for key, value in graph.items()}


class JsonFragments:
    """One per processor: the rendered namespace of each agent, keyed by its record."""

    def __init__(self, store: Ledger | None = None) -> None:
        self._store = store
        self._loaded = store is None
        self._memory: dict[str, tuple[tuple[Any, ...], bytes]] = {}
        self._segments: dict[tuple[str, str], tuple[Any, bytes]] = {}

    def render(self, graph: Mapping[str, Any], records: Mapping[str, Record],
               segments: Segments | None = None) -> bytes | None:
        """The whole view's bytes (with the final newline), or None: see :meth:`pieces`."""
        found = self.pieces(graph, records, segments)
        return None if found is None else b"".join(found)

    def pieces(self, graph: Mapping[str, Any], records: Mapping[str, Record],
               segments: Segments | None = None) -> Iterator[bytes] | None:
        """The view's bytes in pieces, rendered as they are taken (write them one after the other), or
        None when it must be written in one piece: the keys are not header, agents, unified collections
        in that order (an agent named like a unified collection).

        A namespace may be :data:`~orchestrator.graph.unified_parts.DEFERRED`: it is then taken from
        the rendering kept for its record, or rendered from the record. Taking the pieces raises
        ``TypeError`` where a value cannot be written by orjson (then write :func:`whole` another way).
        """
        agents = sorted(records)
        if list(graph) != [*HEADER, *agents, *TRAILER]:
            return None
        self._load(records)
        return self._generate(graph, records, agents, segments or {})

    def _generate(self, graph: Mapping[str, Any], records: Mapping[str, Record], agents: list[str],
                  segments: Segments) -> Iterator[bytes]:
        yield b"{\n"
        yield _members({key: graph[key] for key in HEADER})
        fresh: list[tuple[str, int, bytes]] = []
        for agent in agents:
            yield b",\n"
            yield self._agent(agent, graph[agent], records[agent], fresh)
        for key in TRAILER:
            yield b",\n"
            yield from self._collection(key, graph[key], agents, segments.get(key))
        yield b"\n}\n"
        for agent in [a for a in self._memory if a not in records]:
            del self._memory[agent]
        for name, agent in [k for k in self._segments if k[1] not in records]:
            del self._segments[(name, agent)]
        if fresh and self._store is not None:
            self._store.put_derived(KIND, fresh)

    def _load(self, records: Mapping[str, Record]) -> None:
        """Once per processor: the renderings kept in the store for the records not in memory."""
        if self._loaded or self._store is None or all(a in self._memory for a in records):
            return
        self._loaded = True
        for agent, (seq, body) in self._store.derived(KIND).items():
            record = records.get(agent)
            key = record_key(record) if record is not None else None
            if key is not None and record is not None and record.get("seq") == seq and agent not in self._memory:
                self._memory[agent] = (key, body.encode() if isinstance(body, str) else body)

    def _agent(self, agent: str, namespace: Any, record: Record,
               fresh: list[tuple[str, int, bytes]]) -> bytes:
        key = record_key(record)  # None: not committed yet, rendered every time
        cached = self._memory.get(agent)
        if key is not None and cached is not None and cached[0] == key:
            return cached[1]
        deferred = namespace is DEFERRED
        body = _members({agent: namespace_entry(record) if deferred else namespace})
        if key is not None:
            self._memory[agent] = (key, body)
            if deferred:  # rendered from the record itself: valid for as long as that record
                fresh.append((agent, key[0], body))
        return body

    def _collection(self, name: str, value: Any, agents: list[str],
                    by_agent: Mapping[str, tuple[Any, Sequence[Any]]] | None) -> Iterator[bytes]:
        """The pieces of one trailer member: each agent's items for a spliced collection, chunks of
        items for another list, the member whole otherwise."""
        if not isinstance(value, list) or not value:
            yield _members({name: value})
            return
        spliced = (by_agent is not None and name in SPLICED and all(a in by_agent for a in agents)
                   and sum(len(by_agent[a][1]) for a in agents) == len(value))
        label = orjson.dumps(name)
        yield b"  " + label + b": [\n"
        first = True
        if spliced and by_agent is not None:
            chunks: Iterator[bytes] = (self._items(name, a, *by_agent[a]) for a in agents if by_agent[a][1])
        else:
            chunks = (_list_items(name, value[i:i + CHUNK]) for i in range(0, len(value), CHUNK))
        for chunk in chunks:
            if not first:
                yield b",\n"
            first = False
            yield chunk
        yield b"\n  ]"

    def _items(self, name: str, agent: str, key: Any, items: Sequence[Any]) -> bytes:
        """The items as the indented document writes them inside a top-level list, kept while ``key`` is the same."""
        cached = self._segments.get((name, agent))
        if key is not None and cached is not None and cached[0] == key:
            return cached[1]
        body = _list_items(name, items)
        if key is not None:
            self._segments[(name, agent)] = (key, body)
        return body
