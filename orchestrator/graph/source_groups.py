"""Sources de-duplicated across agents, re-grouping only the agents that share an identifier (pure).

:func:`orchestrator.graph.unified.dedupe_sources` unions sources sharing a DOI, arXiv id, URL or
text hash. A group never spans an agent whose identifiers no other agent holds, so such an agent's
groups are computed once per record and kept; the agents that do share identifiers are grouped
together at each build. Groups are listed by their first member, agents in sorted order, exactly as
``dedupe_sources`` over all sources lists them.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from itertools import chain
from typing import Any

from orchestrator.graph.unified import dedupe_sources, source_keys

__all__ = ["SourceGroups"]

Unified = tuple[list[dict[str, Any]], dict[str, str]]


class SourceGroups:
    """One per unified-view cache; :meth:`dedupe` equals ``dedupe_sources`` of all agents' sources in order."""

    def __init__(self) -> None:
        self._indexed: dict[str, tuple[Any, set[str]]] = {}  # agent -> (record key, its identifiers)
        self._holders: dict[str, set[str]] = defaultdict(set)  # identifier -> agents holding it
        self._shared: set[str] = set()  # identifiers held by two agents or more
        self._alone: dict[str, tuple[Any, list[dict[str, Any]], dict[str, str]]] = {}
        self.last: dict[str, list[dict[str, Any]]] = {}  # the groups each agent heads, of the last call
        #: what identifies each agent's groups of the last call: its record key when grouped alone, else None
        self.last_keys: dict[str, Any] = {}

    def dedupe(self, sources: Mapping[str, Sequence[dict[str, Any]]], keys: Mapping[str, Any]) -> Unified:
        """``sources`` by agent; ``keys`` the agent's record key (None: not cacheable, grouped again)."""
        agents = sorted(sources)
        for agent in [a for a in self._indexed if a not in sources]:
            self._unindex(agent)
        for agent in agents:
            entry = self._indexed.get(agent)
            if entry is None or keys[agent] is None or entry[0] != keys[agent]:
                self._unindex(agent)
                found = set(chain.from_iterable(source_keys(s) for s in sources[agent]))
                self._indexed[agent] = (keys[agent], found)
                for identifier in found:
                    holders = self._holders[identifier]
                    holders.add(agent)
                    if len(holders) == 2:
                        self._shared.add(identifier)
        linked: set[str] = set().union(*(self._holders[i] for i in self._shared))
        joint = [s for a in agents if a in linked for s in sources[a]]
        owner = {s["id"]: a for a in agents if a in linked for s in sources[a]}
        if len(owner) != len(joint):  # ids repeat (never in a merged graph): group everything at once
            self.last, self.last_keys = {}, {}
            return dedupe_sources([s for a in agents for s in sources[a]])
        joint_unified, alias = dedupe_sources(joint) if joint else ([], {})
        headed: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for item in joint_unified:
            headed[owner[item["id"]]].append(item)
        unified: list[dict[str, Any]] = []
        self.last, self.last_keys = {}, {}
        for agent in agents:
            if agent in linked:
                self.last[agent] = headed.get(agent, [])
                self.last_keys[agent] = None
                unified += self.last[agent]
                continue
            kept = self._alone.get(agent)
            if kept is None or keys[agent] is None or kept[0] != keys[agent]:
                kept = (keys[agent], *dedupe_sources(list(sources[agent])))
                if keys[agent] is not None:
                    self._alone[agent] = kept
            self.last[agent] = kept[1]  # the same list while the agent's record is: its JSON is kept too
            self.last_keys[agent] = ("alone", kept[0])
            unified += kept[1]
            alias.update(kept[2])
        for agent in [a for a in self._alone if a not in sources or a in linked]:
            del self._alone[agent]
        return unified, alias

    def _unindex(self, agent: str) -> None:
        entry = self._indexed.pop(agent, None)
        for identifier in entry[1] if entry else ():
            holders = self._holders[identifier]
            holders.discard(agent)
            if len(holders) < 2:
                self._shared.discard(identifier)
            if not holders:
                del self._holders[identifier]
