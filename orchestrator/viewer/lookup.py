"""Lookups over the committed graph (items by id and alias, who cites whom), built once per graph."""

from __future__ import annotations

import threading
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from orchestrator.model.kinds import KINDS
from orchestrator.model.layout import RESERVED_KEYS, SessionPaths
from orchestrator.viewer.files import remember
from orchestrator.viewer.trusted import shown

#: The collections the explorer shows, in the order of its tabs.
COLLECTIONS = ("sources", "claims", "entities", "relationships", "gaps", "contradictions")


@dataclass
class GraphIndex:
    graph: dict[str, Any]
    items: dict[str, tuple[str, dict[str, Any]]] = field(default_factory=dict)  # id or alias -> (kind, item)
    cited_by: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))  # source/entity -> claims
    related: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))  # node -> relationships
    #: why the view file is not shown as it is (None: the ledger vouches for it; :mod:`orchestrator.viewer.trusted`)
    warning: str | None = None
    #: the view file as read (``graph`` itself when it is vouched for): what it claims, beside what is shown
    view: dict[str, Any] = field(default_factory=dict)

    def item(self, item_id: str) -> tuple[str, dict[str, Any]] | None:
        return self.items.get(item_id)

    def source(self, source_id: str) -> dict[str, Any] | None:
        found = self.items.get(source_id)
        return found[1] if found and found[0] == "sources" else None

    def agents(self) -> list[str]:
        return sorted(k for k, v in self.graph.items() if k not in RESERVED_KEYS and isinstance(v, dict))


def _build(graph: dict[str, Any]) -> GraphIndex:
    index = GraphIndex(graph)
    for kind in COLLECTIONS:
        for item in graph.get(kind) or ():
            if not isinstance(item, dict) or not isinstance(item.get("id"), str):
                continue
            for alias in (item["id"], *(a for a in item.get("aliases") or () if isinstance(a, str))):
                index.items.setdefault(alias, (kind, item))
    for claim in graph.get("claims") or ():
        if not isinstance(claim, dict):
            continue
        targets = {e.get("source_id") for e in claim.get("evidence") or () if isinstance(e, dict)}
        targets |= set(claim.get("entity_ids") or ())
        for target in targets:
            if isinstance(target, str):
                index.cited_by[target].append(claim["id"])
    for relationship in graph.get("relationships") or ():
        if isinstance(relationship, dict):
            for end in (relationship.get("subject"), relationship.get("object")):
                if isinstance(end, str):
                    index.related[end].append(relationship["id"])
    return index


_cache: dict[SessionPaths, GraphIndex] = {}
_lock = threading.Lock()


def graph_index(paths: SessionPaths) -> GraphIndex:
    """The index of the graph the pages show: the committed state (:func:`orchestrator.viewer.trusted.shown`)."""
    current = shown(paths)
    with _lock:
        cached = _cache.get(paths)
    if cached is not None and cached.graph is current.graph and cached.warning == current.warning:
        return cached
    index = _build(current.graph)
    index.warning, index.view = current.warning, current.view
    with _lock:
        remember(_cache, paths, index)
    return index


#: The field that names an item of each collection (the kinds table's preview field).
PREVIEW = {kind.collection: kind.preview_field for kind in KINDS}


def preview(kind: str, item: dict[str, Any]) -> str:
    value = item.get(PREVIEW.get(kind, "id"))
    return str(value if value is not None else item.get("id", ""))
