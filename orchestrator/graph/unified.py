"""Materialize ``knowledge-graph.json`` from the agents' records (pure).

Agent namespaces go at the top level, next to de-duplicated unified views derived
from all of them, and ``stats`` recomputed from the data (never trusted from agents).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from typing import Any

from orchestrator.contradictions import ConflictCache
from orchestrator.graph.unified_parts import (
    SCHEMA_VERSION,
    UNIFIED,
    Intact,
    Recheck,
    all_items,
    assemble,
    assessments_by_claim,
    build_part,
)
from orchestrator.model.scholarly_ids import DisjointSets, clean_arxiv_id, clean_doi, clean_url

__all__ = ["SCHEMA_VERSION", "UNIFIED", "Recheck", "build_views", "dedupe_entities", "dedupe_sources",
           "source_keys"]


#: (doi, arxiv_id, url, content_sha256) -> source keys: a views flush re-keys every source of the
#: graph, and parsing URLs was most of its time; the keys depend on these four values only.
_KEYS: dict[tuple[Any, ...], list[str]] = {}


def source_keys(source: dict[str, Any]) -> list[str]:
    """Identifiers that make two source items the same work."""
    raw = (source.get("doi"), source.get("arxiv_id"), source.get("url"), source.get("content_sha256"))
    try:
        found = _KEYS.get(raw)
    except TypeError:  # an unhashable value: compute every time
        return _source_keys(source)
    if found is None:
        found = _source_keys(source)
        if len(_KEYS) < 500_000:
            _KEYS[raw] = found
    return list(found)


def _source_keys(source: dict[str, Any]) -> list[str]:
    found = {
        "doi": clean_doi(source.get("doi")),
        "arxiv": clean_arxiv_id(source.get("arxiv_id")),
        "url": clean_url(source.get("url")),
        "sha256": source.get("content_sha256") if isinstance(source.get("content_sha256"), str) else None,
    }
    return [f"{kind}:{value}" for kind, value in found.items() if value]


def dedupe_sources(sources: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """Union sources sharing any identifier; returns the unified list and alias -> canonical id."""
    sets = DisjointSets(len(sources))
    first_with_key: dict[str, int] = {}
    for index, source in enumerate(sources):
        for key in source_keys(source):
            if key in first_with_key:
                sets.union(first_with_key[key], index)
            else:
                first_with_key[key] = index
    groups: dict[int, list[int]] = defaultdict(list)
    for index in range(len(sources)):
        groups[sets.find(index)].append(index)
    unified, canonical = [], {}
    for root in sorted(groups):
        members = [sources[i] for i in groups[root]]
        merged: dict[str, Any] = {}
        for member in members:
            for key, value in member.items():
                if key not in ("id", "local_id", "provenance") and key not in merged:
                    merged[key] = value
        head = members[0]
        merged = {"id": head["id"], **merged}
        merged["aliases"] = [m["id"] for m in members]
        merged["provenance"] = [m["provenance"] for m in members]
        for member in members:
            canonical[member["id"]] = head["id"]
        unified.append(merged)
    return unified, canonical


def dedupe_entities(entities: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """Entities with the same (type, case-folded name) are one entity."""
    by_key: dict[tuple[str, str], dict[str, Any]] = {}
    canonical: dict[str, str] = {}
    for entity in entities:
        key = (str(entity.get("type", "")).casefold(), " ".join(str(entity.get("name", "")).split()).casefold())
        names = [a for a in entity.get("aliases") or () if isinstance(a, str)]
        if key in by_key:
            kept = by_key[key]
            kept["merged_ids"].append(entity["id"])
            kept["aliases"] += [a for a in names if a not in kept["aliases"]]
            kept["provenance"].append(entity["provenance"])
        else:
            # "aliases" are the names agents gave; the ids of the merged duplicates are "merged_ids"
            kept = {**entity, "aliases": list(dict.fromkeys(names)), "merged_ids": [entity["id"]],
                    "provenance": [entity["provenance"]]}
            kept.pop("local_id", None)
            by_key[key] = kept
        canonical[entity["id"]] = kept["id"]
    return list(by_key.values()), canonical


def build_views(
    records: Mapping[str, Mapping[str, Any]], session_id: str, commit_seq: int, generated_at: str,
    recheck: Recheck | None = None, conflicts: ConflictCache | None = None, namespaces: bool = True,
    intact: Intact | None = None,
) -> dict[str, Any]:
    """The whole view from the records: every agent's part built afresh, with the functions the
    cache of :mod:`orchestrator.graph.unified_cache` builds changed parts with (``namespaces``: see
    :func:`orchestrator.graph.unified_parts.assemble`)."""
    gathered = all_items(records)
    all_sources = gathered["sources"]
    sources, source_alias = dedupe_sources(all_sources)
    entities, entity_alias = dedupe_entities(gathered["entities"])
    cited = {s["id"]: s for s in all_sources}
    assessments = assessments_by_claim(gathered["confidence_scores"])
    parts = {agent: build_part(records[agent], None, cited, source_alias, entity_alias, assessments, recheck, intact)
             for agent in sorted(records)}
    return assemble(records, parts, gathered, sources, entities, session_id, commit_seq, generated_at, conflicts,
                    namespaces)
