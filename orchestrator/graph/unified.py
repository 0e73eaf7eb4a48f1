"""Materialize ``knowledge-graph.json`` from the agents' records (pure).

Agent namespaces go at the top level, next to de-duplicated unified views derived
from all of them, and ``stats`` recomputed from the data (never trusted from agents).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable
from typing import Any

from orchestrator.graph.contradictions import ConflictCache, detect, unresolved
from orchestrator.model.kinds import COLLECTIONS
from orchestrator.model.scholarly_ids import DisjointSets, clean_arxiv_id, clean_doi, clean_url

SCHEMA_VERSION = 1
UNIFIED = ("sources", "claims", "entities", "relationships", "gaps", "contradictions")


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


def _all(records: dict[str, dict[str, Any]], collection: str) -> list[dict[str, Any]]:
    return [item for agent in sorted(records) for item in records[agent]["contribution"]["items"][collection]]


#: Re-checks one evidence item against the current text (sha256) of its source; None when there is no text.
Recheck = Callable[[dict[str, Any], str], dict[str, Any] | None]


def _current_verification(
    evidence: dict[str, Any], cited: dict[str, Any] | None, recheck: Recheck | None
) -> dict[str, Any] | None:
    """A verification is bound to the text it was checked against: a changed text is checked again."""
    verification = evidence.get("verification")
    if not isinstance(verification, dict) or "text_sha256" not in verification or cited is None:
        return verification
    now = cited.get("content_sha256")
    if now == verification["text_sha256"]:
        return verification
    fresh = recheck(evidence, now) if recheck is not None and isinstance(now, str) else None
    if fresh is None:
        fresh = {"verified": False, "score": 0.0, "matched_text": "", "page": None,
                 "reason": "the cited source's text changed since this snippet was checked, and the new text "
                           "could not be checked"}
    return {**fresh, "rechecked": True, "previous_text_sha256": verification["text_sha256"],
            "previous_verified": verification.get("verified")}


def build_views(
    records: dict[str, dict[str, Any]], session_id: str, commit_seq: int, generated_at: str,
    recheck: Recheck | None = None, conflicts: ConflictCache | None = None,
) -> dict[str, Any]:
    cited_sources = {s["id"]: s for s in _all(records, "sources")}
    sources, source_alias = dedupe_sources(_all(records, "sources"))
    entities, entity_alias = dedupe_entities(_all(records, "entities"))
    assessments: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for score in _all(records, "confidence_scores"):
        assessments[score["claim_id"]].append(
            {k: score[k] for k in ("confidence", "status", "rationale", "supporting_source_ids") if k in score}
            | {"by": score["provenance"]["agent"]}
        )
    claims = []
    for claim in _all(records, "claims"):
        claim = {**claim, "evidence": [dict(e) for e in claim.get("evidence", [])]}
        for evidence in claim["evidence"]:
            verification = _current_verification(evidence, cited_sources.get(evidence["source_id"]), recheck)
            if verification is not None:
                evidence["verification"] = verification
            evidence["source_id"] = source_alias.get(evidence["source_id"], evidence["source_id"])
        if "entity_ids" in claim:
            claim["entity_ids"] = [entity_alias.get(e, e) for e in claim["entity_ids"]]
        if claim["id"] in assessments:
            claim["assessments"] = assessments[claim["id"]]
        claims.append(claim)
    relationships = []
    for rel in _all(records, "relationships"):
        rel = dict(rel)
        for end in ("subject", "object"):
            if rel.get(f"{end}_kind", "entity") == "entity":  # a claim id is never rewritten to an entity
                rel[end] = entity_alias.get(rel[end], rel[end])
        relationships.append(rel)

    graph: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "session": session_id,
        "generated_at": generated_at,
        "commit_seq": commit_seq,
    }
    for agent in sorted(records):
        record = records[agent]
        graph[agent] = {
            **record["namespace"],
            "_provenance": {
                "attempt": record["attempt"],
                "merged_at": record["merged_at"],
                "artifact_sha256": record["artifact_sha256"],
                "commit_seq": record.get("seq"),
                "files": {f["name"]: f["sha256"] for f in record["files"]},
            },
        }
    recorded = _all(records, "contradictions")
    graph.update(
        sources=sources,
        claims=claims,
        entities=entities,
        relationships=relationships,
        gaps=_all(records, "gaps"),
        # the agents' own, then those derived from the current claims (docs/data-model.md)
        contradictions=recorded + detect(claims, relationships, recorded, cache=conflicts),
    )
    graph["stats"] = compute_stats(graph, records)
    return graph


def compute_stats(graph: dict[str, Any], records: dict[str, dict[str, Any]]) -> dict[str, Any]:
    claims = graph["claims"]
    evidence = [e for c in claims for e in c.get("evidence", [])]
    confidences = [c["confidence"] for c in claims if isinstance(c.get("confidence"), int | float)]
    return {
        "agents": len(records),
        **{f"{name}_count": len(graph[name]) for name in UNIFIED},
        "peer_reviewed_sources": sum(1 for s in graph["sources"] if s.get("peer_reviewed") is True),
        "sources_by_type": dict(sorted(Counter(str(s.get("type", "unknown")) for s in graph["sources"]).items())),
        "claims_by_priority": dict(sorted(Counter(str(c.get("priority", "unknown")) for c in claims).items())),
        "claims_with_evidence": sum(1 for c in claims if c.get("evidence")),
        "evidence_items": len(evidence),
        "evidence_verified": sum(1 for e in evidence if (e.get("verification") or {}).get("verified") is True),
        "mean_confidence": round(sum(confidences) / len(confidences), 4) if confidences else None,
        "open_contradictions": len(unresolved(graph["contradictions"])),
        "detected_contradictions": sum(1 for c in graph["contradictions"] if c.get("detected")),
        "items_by_agent": {
            agent: {
                c: len(records[agent]["contribution"]["items"][c])
                for c in COLLECTIONS
                if records[agent]["contribution"]["items"][c]
            }
            for agent in sorted(records)
        },
    }
