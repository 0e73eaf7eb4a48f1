"""The unified view rebuilt from per-agent parts kept between flushes (pure).

:func:`orchestrator.graph.unified.build_views` builds every agent's part
(:func:`orchestrator.graph.unified_parts.build_part`) afresh. Most parts depend on their own agent's
record and on a few values of other agents: the canonical id and text hash of each cited source,
the canonical id of each entity, the assessments of each claim, the stored texts a snippet was
re-checked against. :class:`UnifiedCache` keeps each agent's part with the values it was built
from, and builds it again only when its record or one of those values changed. Sources, entities,
contradictions and stats are derived again at each build, by the same functions. The result
equals ``build_views`` (``tests/test_json_view.py``, ``tests/test_incremental_equivalence.py``).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping
from typing import Any

from orchestrator.contradictions import ConflictCache
from orchestrator.graph.current_evidence import Overrides
from orchestrator.graph.source_groups import SourceGroups
from orchestrator.graph.unified import dedupe_entities, dedupe_sources
from orchestrator.graph.unified_parts import (
    ABSENT,
    AgentPart,
    Recheck,
    all_items,
    assemble,
    assessments_by_claim,
    build_part,
    record_key,
)

__all__ = ["Segment", "TextReady", "UnifiedCache", "overrides", "record_key", "segments"]

#: Whether the stored text of a sha256 can be read now.
TextReady = Callable[[str], bool]


class UnifiedCache:
    """One per processor: :meth:`build` returns what ``build_views`` returns for the same arguments."""

    def __init__(self) -> None:
        self.parts: dict[str, AgentPart] = {}
        self.last: dict[str, AgentPart] = {}  # every agent's part in the last build, cached or not
        # the outside values of the last build: a part that used one that changed is built again
        self.sources: dict[str, tuple[Any, Any]] = {}
        self.entities: dict[str, str] = {}
        self.assessments: dict[str, list[dict[str, Any]]] = {}
        self.groups = SourceGroups()
        self._builds = itertools.count(1)

    def build(
        self, records: Mapping[str, Mapping[str, Any]], session_id: str, commit_seq: int, generated_at: str,
        recheck: Recheck | None = None, conflicts: ConflictCache | None = None,
        text_ready: TextReady | None = None, namespaces: bool = True,
    ) -> dict[str, Any]:
        """``namespaces``: see :func:`orchestrator.graph.unified_parts.assemble`.

        ``text_ready`` says whether a stored text can be read now (there, and matching its name): a
        verification resting on a text that is not stops counting, and a part is kept only while each
        text it asked about is as it was (never without ``text_ready``)."""
        agents = sorted(records)
        keys = {a: record_key(records[a]) for a in agents}
        gathered = all_items(records)
        all_sources = gathered["sources"]
        cited_sources = {s["id"]: s for s in all_sources}
        if len(cited_sources) == len(all_sources):  # unique ids, as always in a merged graph
            sources, source_alias = self.groups.dedupe(
                {a: records[a]["contribution"]["items"]["sources"] for a in agents},
                keys)
        else:
            sources, source_alias = dedupe_sources(all_sources)
            self.groups.last = {}
        entities, entity_alias = dedupe_entities(gathered["entities"])
        assessments = assessments_by_claim(gathered["confidence_scores"])
        # what build_part records in sources_used, for every source
        now = {sid: (source_alias.get(sid, sid), s.get("content_sha256")) for sid, s in cited_sources.items()}
        changed_sources, self.sources = _changed(self.sources, now), now
        changed_entities, self.entities = _changed(self.entities, entity_alias), dict(entity_alias)
        changed_claims, self.assessments = _changed(self.assessments, assessments), dict(assessments)
        parts = {}
        for agent in agents:
            part = self.parts.get(agent)
            key = keys[agent]
            if (part is None or key is None or part.key != key or not changed_sources.isdisjoint(part.sources_used)
                    or not changed_entities.isdisjoint(part.entities_used)
                    or not changed_claims.isdisjoint(part.assessments_used)
                    or (part.texts_used and _texts_moved(part.texts_used, text_ready))):
                part = build_part(records[agent], key, cited_sources, source_alias, entity_alias, assessments,
                                  recheck, text_ready)
                part.version = next(self._builds)
            parts[agent] = part
        self.parts = {a: p for a, p in parts.items() if p.key[0] is not None}
        self.last = parts
        return assemble(records, parts, gathered, sources, entities, session_id, commit_seq, generated_at, conflicts,
                        namespaces)


def _changed(previous: Mapping[str, Any], now: Mapping[str, Any]) -> set[str]:
    """Ids whose value differs between two builds (new and gone ones included)."""
    found = {k for k, v in now.items() if previous.get(k, ABSENT) != v}
    found.update(k for k in previous if k not in now)
    return found


def _texts_moved(used: Mapping[str, bool], text_ready: TextReady | None) -> bool:
    """Whether a text a part re-checked against appeared or went since (unknown without ``text_ready``)."""
    return text_ready is None or any(text_ready(sha) != had for sha, had in used.items())


def overrides(cache: UnifiedCache) -> dict[str, Overrides]:
    """By agent, the evidence the last build counts otherwise than its record (a stored text deleted or
    altered since): what :func:`orchestrator.graph.current_evidence.verification_overrides` finds, kept
    by each part as it was built, so a flush does not walk every claim again to find them."""
    return {agent: part.overrides for agent, part in cache.last.items() if part.overrides}


#: A segment: what identifies its content (the same key, the same items; None: never reused) and its items.
Segment = tuple[Any, list[dict[str, Any]]]


def segments(cache: UnifiedCache) -> dict[str, dict[str, Segment]]:
    """Each agent's unified sources (the groups it heads), claims and relationships, for splicing the JSON view.

    Keyed for reuse: a part by its build, an agent's own source groups by its record (while it shares no
    identifier with another agent), groups shared with others not at all."""
    return {"claims": {a: (("part", p.version), p.claims) for a, p in cache.last.items()},
            "relationships": {a: (("part", p.version), p.relationships) for a, p in cache.last.items()},
            # {} when not grouped per agent: the view renders them whole
            "sources": {a: (cache.groups.last_keys.get(a), items) for a, items in cache.groups.last.items()}}
