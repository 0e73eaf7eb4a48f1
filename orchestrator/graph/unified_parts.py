"""One agent's share of the unified view, and the view assembled from every agent's share (pure).

Both the full rebuild (:func:`orchestrator.graph.unified.build_views`) and the cache a processor
keeps between flushes (:class:`orchestrator.graph.unified_cache.UnifiedCache`) build each agent's
unified claims and relationships with :func:`build_part` and assemble the view with
:func:`assemble`, so the two cannot drift apart. A part records the outside values it read (the
canonical id and text hash of each cited source, entity aliases, assessments, the stored texts it
re-checked against): the cache rebuilds it when one of them changes.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from orchestrator.contradictions import ConflictCache, detect, unresolved
from orchestrator.model.kinds import COLLECTIONS, DOCUMENT_COLLECTIONS

__all__ = ["DEFERRED", "SCHEMA_VERSION", "UNIFIED", "AgentPart", "Intact", "Recheck", "all_items", "assemble",
           "assessments_by_claim", "build_part", "namespace_entry", "record_key"]

SCHEMA_VERSION = 1
UNIFIED = ("sources", "claims", "entities", "relationships", "gaps", "contradictions",
           "sections", "figures", "tables", "captions")
ABSENT = ("absent",)  # a cited source id that no agent has
#: In place of an agent's namespace in a view assembled with ``namespaces=False``.
DEFERRED = ("deferred namespace",)

#: Re-checks one evidence item against the current text (sha256) of its source; None when there is no text.
Recheck = Callable[[dict[str, Any], str], dict[str, Any] | None]
#: Whether the stored text of a sha256 is there and still matches its name.
Intact = Callable[[str], bool]


@dataclass
class AgentPart:
    """One agent's unified claims and relationships, the outside values they used, and their counts."""

    key: tuple[Any, ...]
    claims: list[dict[str, Any]]
    relationships: list[dict[str, Any]]
    by_id: dict[str, dict[str, Any]] = field(default_factory=dict)  # its claims with a string id
    sources_used: dict[str, tuple[Any, Any]] = field(default_factory=dict)
    entities_used: dict[str, str] = field(default_factory=dict)
    assessments_used: dict[str, Any] = field(default_factory=dict)
    texts_used: dict[str, bool] = field(default_factory=dict)  # sha256 re-checked against -> its text was there
    priorities: Counter[str] = field(default_factory=Counter)
    confidences: list[Any] = field(default_factory=list)
    with_evidence: int = 0
    evidence_items: int = 0
    verified: int = 0
    counts: dict[str, int] = field(default_factory=dict)  # its items per collection, for the stats
    #: which build of the agent's part this is (a cache that keeps parts numbers them; 0: not kept)
    version: int = 0
    #: (claim index, evidence index) -> the verification the view counts, where it differs from the record's
    #: (a stored text deleted or altered since the merge): what the .trig must say too
    overrides: dict[tuple[int, int], dict[str, Any]] = field(default_factory=dict)


def record_key(record: Mapping[str, Any]) -> tuple[Any, ...] | None:
    """What identifies a committed record; None for one not committed yet (never cached)."""
    seq = record.get("seq")
    if not isinstance(seq, int):
        return None
    return (seq, record.get("artifact_sha256"), record.get("attempt"), record.get("merged_at"))


#: The collections read from every agent at each build (claims and relationships come from the parts).
GATHERED = ("sources", "entities", "confidence_scores", "gaps", "contradictions",
            "sections", "figures", "tables", "captions")


def all_items(records: Mapping[str, Mapping[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """Every agent's items of each :data:`GATHERED` collection, agents in order (one pass over them)."""
    found: dict[str, list[dict[str, Any]]] = {name: [] for name in GATHERED}
    lists = list(found.items())
    for agent in sorted(records):
        items = records[agent]["contribution"]["items"]
        for name, gathered in lists:
            gathered += items.get(name, ())  # a record from before a collection existed has none
    return found


def assessments_by_claim(scores: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """Every agent's confidence scores, by the claim they assess."""
    found: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for score in scores:
        found[score["claim_id"]].append(
            {k: score[k] for k in ("confidence", "status", "rationale", "supporting_source_ids") if k in score}
            | {"by": score["provenance"]["agent"]})
    return dict(found)


def current_verification(
    evidence: dict[str, Any], cited: Mapping[str, Any] | None, recheck: Recheck | None, intact: Intact | None = None,
) -> dict[str, Any] | None:
    """A verification is bound to the text it was checked against: a changed text is checked again, and
    a text deleted or altered since (its content no longer matching its name) verifies nothing."""
    verification = evidence.get("verification")
    if not isinstance(verification, dict) or "text_sha256" not in verification or cited is None:
        return verification
    now = cited.get("content_sha256")
    if now == verification["text_sha256"]:
        if intact is None or verification.get("verified") is not True or intact(now):
            return verification
        return {"verified": False, "score": 0.0, "matched_text": "", "page": None,
                "reason": f"the stored text sources/{now}.txt this snippet was checked against is missing or was "
                          "altered (its content no longer matches its sha256): restore the original text",
                "text_sha256": now, "text_damaged": True, "previous_verified": True}
    fresh = recheck(evidence, now) if recheck is not None and isinstance(now, str) else None
    if fresh is None:
        fresh = {"verified": False, "score": 0.0, "matched_text": "", "page": None,
                 "reason": "the cited source's text changed since this snippet was checked, and the new text "
                           "could not be checked"}
    return {**fresh, "rechecked": True, "previous_text_sha256": verification["text_sha256"],
            "previous_verified": verification.get("verified")}


def namespace_entry(record: Mapping[str, Any]) -> dict[str, Any]:
    """The agent's top-level key in the view: its merged files and where they came from.

    It depends on the record alone, so a view writer may render it once per record and keep it.
    """
    return {**record["namespace"], "_provenance": {
        "attempt": record["attempt"], "merged_at": record["merged_at"],
        "artifact_sha256": record["artifact_sha256"], "commit_seq": record.get("seq"),
        "files": {f["name"]: f["sha256"] for f in record["files"]}}}


def build_part(record: Mapping[str, Any], key: tuple[Any, ...] | None, cited_sources: Mapping[str, Any],
               source_alias: Mapping[str, str], entity_alias: Mapping[str, str],
               assessments: Mapping[str, list[dict[str, Any]]], recheck: Recheck | None,
               intact: Intact | None = None) -> AgentPart:
    """The agent's namespace, unified claims and relationships, with what they read from other agents.

    ``intact``: whether a stored text is still there as named (a verification resting on one that is not
    stops counting); the part notes each text it asked about, so a cache builds it again when that changes.
    """
    items = record["contribution"]["items"]
    part = AgentPart(key or (None,), [], [])
    part.counts = {c: len(items[c]) for c in COLLECTIONS if items.get(c)}
    if recheck is not None:
        recheck = _recording(recheck, part.texts_used)
    if intact is not None:
        intact = _noting(intact, part.texts_used)
    for i, claim in enumerate(items["claims"]):
        claim = {**claim, "evidence": [dict(e) for e in claim.get("evidence", [])]}
        for j, evidence in enumerate(claim["evidence"]):
            sid = evidence["source_id"]
            cited = cited_sources.get(sid)
            part.sources_used[sid] = (source_alias.get(sid, sid),
                                      cited.get("content_sha256") if cited is not None else ABSENT)
            recorded = evidence.get("verification")
            verification = current_verification(evidence, cited, recheck, intact)
            if verification is not None:
                evidence["verification"] = verification
                if verification is not recorded and verification != recorded:
                    part.overrides[(i, j)] = verification
            evidence["source_id"] = source_alias.get(sid, sid)
        if "entity_ids" in claim:
            for eid in claim["entity_ids"]:
                part.entities_used[eid] = entity_alias.get(eid, eid)
            claim["entity_ids"] = [entity_alias.get(e, e) for e in claim["entity_ids"]]
        part.assessments_used[claim["id"]] = assessments.get(claim["id"])
        if claim["id"] in assessments:
            claim["assessments"] = assessments[claim["id"]]
        part.claims.append(claim)
        if isinstance(claim["id"], str):
            part.by_id[claim["id"]] = claim
        evidence_list = claim["evidence"]
        part.priorities[str(claim.get("priority", "unknown"))] += 1
        if isinstance(claim.get("confidence"), int | float):
            part.confidences.append(claim["confidence"])
        part.with_evidence += 1 if evidence_list else 0
        part.evidence_items += len(evidence_list)
        part.verified += sum(1 for e in evidence_list if (e.get("verification") or {}).get("verified") is True)
    for rel in items["relationships"]:
        rel = dict(rel)
        for end in ("subject", "object"):
            if rel.get(f"{end}_kind", "entity") == "entity":  # a claim id is never rewritten to an entity
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


def _noting(intact: Intact, used: dict[str, bool]) -> Intact:
    """``intact`` noting each text it was asked about and its answer."""
    def checked(sha: str) -> bool:
        used[sha] = found = intact(sha)
        return found
    return checked


def assemble(records: Mapping[str, Mapping[str, Any]], parts: Mapping[str, AgentPart],
             gathered: Mapping[str, list[dict[str, Any]]], sources: list[dict[str, Any]],
             entities: list[dict[str, Any]], session_id: str, commit_seq: int, generated_at: str,
             conflicts: ConflictCache | None, namespaces: bool = True) -> dict[str, Any]:
    """The view: header, each agent's namespace, the unified collections, then ``stats``.

    ``namespaces=False`` leaves :data:`DEFERRED` in each agent's key, for a writer that renders it
    from :func:`namespace_entry` only when it has no rendering of that record yet.
    """
    agents = sorted(records)
    claims = [c for a in agents for c in parts[a].claims]
    by_id: dict[str, dict[str, Any]] = {}
    for agent in agents:
        by_id.update(parts[agent].by_id)
    relationships = [r for a in agents for r in parts[a].relationships]
    graph: dict[str, Any] = {"schema_version": SCHEMA_VERSION, "session": session_id,
                             "generated_at": generated_at, "commit_seq": commit_seq}
    for agent in agents:
        graph[agent] = namespace_entry(records[agent]) if namespaces else DEFERRED
    recorded = gathered["contradictions"]
    graph.update(sources=sources, claims=claims, entities=entities, relationships=relationships,
                 gaps=gathered["gaps"],
                 # the agents' own, then those derived from the current claims (docs/data-model.md)
                 contradictions=recorded + detect(claims, relationships, recorded, entities=entities, cache=conflicts,
                                                  by_id=by_id))
    graph.update({name: gathered[name] for name in DOCUMENT_COLLECTIONS})
    graph["stats"] = _stats(graph, [parts[a] for a in agents], agents)
    return graph


def _stats(graph: Mapping[str, Any], parts: list[AgentPart], agents: list[str]) -> dict[str, Any]:
    """Recomputed from the data (never trusted from agents); claim figures summed from the parts' counts."""
    priorities: dict[str, int] = {}
    confidences: list[Any] = []
    with_evidence = evidence_items = verified = 0
    for part in parts:  # one pass: this runs over every agent at each flush
        for name, count in part.priorities.items():
            priorities[name] = priorities.get(name, 0) + count
        confidences += part.confidences
        with_evidence += part.with_evidence
        evidence_items += part.evidence_items
        verified += part.verified
    return {
        "agents": len(agents),
        **{f"{name}_count": len(graph[name]) for name in UNIFIED},
        "peer_reviewed_sources": sum(1 for s in graph["sources"] if s.get("peer_reviewed") is True),
        "sources_by_type": dict(sorted(Counter(str(s.get("type", "unknown")) for s in graph["sources"]).items())),
        "claims_by_priority": dict(sorted(priorities.items())),
        "claims_with_evidence": with_evidence,
        "evidence_items": evidence_items,
        "evidence_verified": verified,
        "mean_confidence": round(sum(confidences) / len(confidences), 4) if confidences else None,
        "open_contradictions": len(unresolved(graph["contradictions"])),
        "detected_contradictions": sum(1 for c in graph["contradictions"] if c.get("detected")),
        "items_by_agent": {agent: part.counts for agent, part in zip(agents, parts, strict=True)},
    }
