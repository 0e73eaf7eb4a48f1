"""``knowledge-graph.json`` bytes from cached per-agent fragments, so a flush serialises what changed.

An agent's namespace (its top-level key, with ``_provenance``) depends on its committed record
only, so its indented JSON is rendered once per record and spliced between the view's header and
its unified collections, which are rendered at each flush. The bytes are exactly those of
``orjson.dumps(graph, option=OPT_INDENT_2)`` of the whole view (``tests/test_json_view.py``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson

from orchestrator.graph.unified import UNIFIED

__all__ = ["JsonFragments"]

HEADER = ("schema_version", "session", "generated_at", "commit_seq")
TRAILER = (*UNIFIED, "stats")
_INDENT = orjson.OPT_INDENT_2


def _members(value: Mapping[str, Any]) -> bytes:
    """The members of a non-empty top-level object as the indented document writes them."""
    return orjson.dumps(value, option=_INDENT)[2:-2]  # without "{\n" and "\n}"


def _record_key(record: Mapping[str, Any]) -> tuple[Any, ...] | None:
    seq = record.get("seq")
    if not isinstance(seq, int):
        return None  # not committed yet: rendered every time
    return (seq, record.get("artifact_sha256"), record.get("attempt"), record.get("merged_at"))


class JsonFragments:
    """One per processor: the rendered namespace of each agent, keyed by its record."""

    def __init__(self) -> None:
        self._memory: dict[str, tuple[tuple[Any, ...], bytes]] = {}

    def render(self, graph: Mapping[str, Any], records: Mapping[str, Mapping[str, Any]]) -> bytes | None:
        """The whole view's bytes (with the final newline), or None when it must be written in one piece.

        None when the keys are not header, agents, unified collections in that order (an agent named
        like a unified collection) or a value cannot be written by orjson.
        """
        agents = sorted(records)
        if list(graph) != [*HEADER, *agents, *TRAILER]:
            return None
        try:
            parts = [_members({key: graph[key] for key in HEADER})]
            parts += [self._agent(agent, graph[agent], records[agent]) for agent in agents]
            parts.append(_members({key: graph[key] for key in TRAILER}))
        except TypeError:
            return None
        for agent in [a for a in self._memory if a not in records]:
            del self._memory[agent]
        return b"{\n" + b",\n".join(parts) + b"\n}\n"

    def _agent(self, agent: str, namespace: Any, record: Mapping[str, Any]) -> bytes:
        key = _record_key(record)
        cached = self._memory.get(agent)
        if key is not None and cached is not None and cached[0] == key:
            return cached[1]
        body = _members({agent: namespace})
        if key is not None:
            self._memory[agent] = (key, body)
        return body
