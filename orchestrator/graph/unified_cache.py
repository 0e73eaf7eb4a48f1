"""The unified view rebuilt from per-agent parts kept between flushes (pure).

:func:`orchestrator.graph.unified.build_views` derives every unified claim and relationship from
all records. Most of them depend on their own agent's record and on a few values of other agents:
the canonical id and text hash of each cited source, the canonical id of each entity, the
assessments of each claim. :class:`UnifiedCache` keeps each agent's unified claims and
relationships with the values they were built from, and rebuilds an agent's part only when its
record or one of those values changed. Sources, entities, contradictions and stats are derived
again at each build. The result equals ``build_views`` (``tests/test_json_view.py``,
``tests/test_incremental_equivalence.py``).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from itertools import chain
from typing import Any

from orchestrator.graph.contradictions import ConflictCache, detect, unresolved
from orchestrator.graph.source_groups import SourceGroups
from orchestrator.graph.unified import (
    SCHEMA_VERSION,
    UNIFIED,
    Recheck,
    _all,
    _current_verification,
    dedupe_entities,
    dedupe_sources,
)
from orchestrator.model.kinds import COLLECTIONS

__all__ = ["AgentPart", "UnifiedCache", "segments"]

_ABSENT = ("absent",)  # a cited source id that no agent has
#: Whether the stored text of a sha256 can be read now.
TextReady = Callable[[str], bool]


@dataclass
class AgentPart:
    """One agent's unified claims and relationships, the outside values they used, and their counts."""

    key: tuple[Any, ...]
    claims: list[dict[str, Any]]
    relationships: list[dict[str, Any]]
    sources_used: dict[str, tuple[Any, Any]] = field(default_factory=dict)
    entities_used: dict[str, str] = field(default_factory=dict)
    assessments_used: dict[str, Any] = field(default_factory=dict)
    texts_used: dict[str, bool] = field(default_factory=dict)  # sha256 re-checked against -> its text was there
    priorities: Counter[str] = field(default_factory=Counter)
    confidences: list[Any] = field(default_factory=list)
    with_evidence: int = 0
    evidence_items: int = 0
    verified: int = 0
    namespace: dict[str, Any] = field(default_factory=dict)  # the agent's top-level key in the view
    counts: dict[str, int] = field(default_factory=dict)  # its items per collection, for the stats


def record_key(record: Mapping[str, Any]) -> tuple[Any, ...] | None:
    """What identifies a committed record; None for one not committed yet (never cached)."""
    seq = record.get("seq")
    if not isinstance(seq, int):
        return None
    return (seq, record.get("artifact_sha256"), record.get("attempt"), record.get("merged_at"))


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

    def build(
        self, records: Mapping[str, Mapping[str, Any]], session_id: str, commit_seq: int, generated_at: str,
        recheck: Recheck | None = None, conflicts: ConflictCache | None = None,
        text_ready: TextReady | None = None,
    ) -> dict[str, Any]:
        """``text_ready`` says whether a stored text can be read now: a part that re-checked a snippet is
        kept only while each text it re-checked against is as present as it was (never without it)."""
        agents = sorted(records)
        all_sources = _all(records, "sources")  # type: ignore[arg-type]
        cited_sources = {s["id"]: s for s in all_sources}
        if len(cited_sources) == len(all_sources):  # unique ids, as always in a merged graph
            sources, source_alias = self.groups.dedupe(
                {a: records[a]["contribution"]["items"]["sources"] for a in agents},
                {a: record_key(records[a]) for a in agents})
        else:
            sources, source_alias = dedupe_sources(all_sources)
            self.groups.last = {}
        entities, entity_alias = dedupe_entities(_all(records, "entities"))  # type: ignore[arg-type]
        assessments: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for score in _all(records, "confidence_scores"):  # type: ignore[arg-type]
            assessments[score["claim_id"]].append(
                {k: score[k] for k in ("confidence", "status", "rationale", "supporting_source_ids") if k in score}
                | {"by": score["provenance"]["agent"]}
            )
        # _source_value of every source, inlined (each one is cited_sources[sid])
        now = {sid: (source_alias.get(sid, sid), s.get("content_sha256")) for sid, s in cited_sources.items()}
        changed_sources, self.sources = _changed(self.sources, now), now
        changed_entities, self.entities = _changed(self.entities, entity_alias), dict(entity_alias)
        changed_claims, self.assessments = _changed(self.assessments, assessments), dict(assessments)
        parts = {}
        for agent in agents:
            part = self.parts.get(agent)
            key = record_key(records[agent])
            if (part is None or key is None or part.key != key or not changed_sources.isdisjoint(part.sources_used)
                    or not changed_entities.isdisjoint(part.entities_used)
                    or not changed_claims.isdisjoint(part.assessments_used)
                    or (part.texts_used and _texts_moved(part.texts_used, text_ready))):
                part = _build_part(records[agent], key, cited_sources, source_alias, entity_alias, assessments,
                                   recheck)
            parts[agent] = part
        self.parts = {a: p for a, p in parts.items() if p.key[0] is not None}
        self.last = parts
        claims = [c for a in agents for c in parts[a].claims]
        relationships = [r for a in agents for r in parts[a].relationships]
        graph: dict[str, Any] = {"schema_version": SCHEMA_VERSION, "session": session_id,
                                 "generated_at": generated_at, "commit_seq": commit_seq}
        for agent in agents:
            graph[agent] = parts[agent].namespace
        recorded = _all(records, "contradictions")  # type: ignore[arg-type]
        graph.update(sources=sources, claims=claims, entities=entities, relationships=relationships,
                     gaps=_all(records, "gaps"),  # type: ignore[arg-type]
                     contradictions=recorded + detect(claims, relationships, recorded, cache=conflicts))
        graph["stats"] = _stats(graph, records, [parts[a] for a in agents])
        return graph


def _changed(previous: Mapping[str, Any], now: Mapping[str, Any]) -> set[str]:
    """Ids whose value differs between two builds (new and gone ones included)."""
    found = {k for k, v in now.items() if previous.get(k, _ABSENT) != v}
    found.update(k for k in previous if k not in now)
    return found


def _texts_moved(used: Mapping[str, bool], text_ready: TextReady | None) -> bool:
    """Whether a text a part re-checked against appeared or went since (unknown without ``text_ready``)."""
    return text_ready is None or any(text_ready(sha) != had for sha, had in used.items())


def _source_value(sid: str, cited: Mapping[str, Any], alias: Mapping[str, str]) -> tuple[Any, Any]:
    source = cited.get(sid)
    return alias.get(sid, sid), source.get("content_sha256") if source is not None else _ABSENT


def _build_part(record: Mapping[str, Any], key: tuple[Any, ...] | None, cited_sources: Mapping[str, Any],
                source_alias: Mapping[str, str], entity_alias: Mapping[str, str],
                assessments: Mapping[str, list[dict[str, Any]]], recheck: Recheck | None) -> AgentPart:
    """The agent's claims and relationships as ``build_views`` unifies them, with what they read."""
    items = record["contribution"]["items"]
    part = AgentPart(key or (None,), [], [])
    part.namespace = {**record["namespace"], "_provenance": {
        "attempt": record["attempt"], "merged_at": record["merged_at"],
        "artifact_sha256": record["artifact_sha256"], "commit_seq": record.get("seq"),
        "files": {f["name"]: f["sha256"] for f in record["files"]}}}
    part.counts = {c: len(items[c]) for c in COLLECTIONS if items[c]}
    if recheck is not None:
        recheck = _recording(recheck, part.texts_used)
    for claim in items["claims"]:
        claim = {**claim, "evidence": [dict(e) for e in claim.get("evidence", [])]}
        for evidence in claim["evidence"]:
            sid = evidence["source_id"]
            part.sources_used[sid] = _source_value(sid, cited_sources, source_alias)
            verification = _current_verification(evidence, cited_sources.get(sid), recheck)
            if verification is not None:
                evidence["verification"] = verification
            evidence["source_id"] = source_alias.get(sid, sid)
        if "entity_ids" in claim:
            for eid in claim["entity_ids"]:
                part.entities_used[eid] = entity_alias.get(eid, eid)
            claim["entity_ids"] = [entity_alias.get(e, e) for e in claim["entity_ids"]]
        part.assessments_used[claim["id"]] = assessments.get(claim["id"])
        if claim["id"] in assessments:
            claim["assessments"] = assessments[claim["id"]]
        part.claims.append(claim)
        evidence_list = claim.get("evidence", [])
        part.priorities[str(claim.get("priority", "unknown"))] += 1
        if isinstance(claim.get("confidence"), int | float):
            part.confidences.append(claim["confidence"])
        part.with_evidence += 1 if evidence_list else 0
        part.evidence_items += len(evidence_list)
        part.verified += sum(1 for e in evidence_list if (e.get("verification") or {}).get("verified") is True)
    for rel in items["relationships"]:
        rel = dict(rel)
        for end in ("subject", "object"):
            if rel.get(f"{end}_kind", "entity") == "entity":
                part.entities_used[rel[end]] = entity_alias.get(rel[end], rel[end])
                rel[end] = entity_alias.get(rel[end], rel[end])
        part.relationships.append(rel)
    return part


def _recording(recheck: Recheck, used: dict[str, bool]) -> Recheck:
    """``recheck`` noting each text it was asked about and whether it had one (None: no text)."""
    def checked(evidence: dict[str, Any], sha: str) -> dict[str, Any] | None:
        found = recheck(evidence, sha)
        used[sha] = found is not None
        return found
    return checked


def _stats(graph: Mapping[str, Any], records: Mapping[str, Mapping[str, Any]], parts: list[AgentPart]
           ) -> dict[str, Any]:
    """``compute_stats`` from the parts' counts: the same numbers without walking every claim again."""
    priorities: Counter[str] = Counter()
    for part in parts:
        priorities.update(part.priorities)
    confidences = list(chain.from_iterable(p.confidences for p in parts))
    return {
        "agents": len(records),
        **{f"{name}_count": len(graph[name]) for name in UNIFIED},
        "peer_reviewed_sources": sum(1 for s in graph["sources"] if s.get("peer_reviewed") is True),
        "sources_by_type": dict(sorted(Counter(str(s.get("type", "unknown")) for s in graph["sources"]).items())),
        "claims_by_priority": dict(sorted(priorities.items())),
        "claims_with_evidence": sum(p.with_evidence for p in parts),
        "evidence_items": sum(p.evidence_items for p in parts),
        "evidence_verified": sum(p.verified for p in parts),
        "mean_confidence": round(sum(confidences) / len(confidences), 4) if confidences else None,
        "open_contradictions": len(unresolved(graph["contradictions"])),
        "detected_contradictions": sum(1 for c in graph["contradictions"] if c.get("detected")),
        "items_by_agent": {agent: part.counts for agent, part in zip(sorted(records), parts, strict=True)},
    }


def segments(cache: UnifiedCache) -> dict[str, dict[str, list[dict[str, Any]]]]:
    """Each agent's unified sources (the groups it heads), claims and relationships, for splicing the JSON view."""
    return {"claims": {a: p.claims for a, p in cache.last.items()},
            "relationships": {a: p.relationships for a, p in cache.last.items()},
            "sources": cache.groups.last}  # {} when not grouped per agent: the view renders them whole
