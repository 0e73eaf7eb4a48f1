"""Contradictions as graph records: the detected pairs, an agent's explicit ones, and the recorded (pure).

Detected, never appended: the unified view recomputes them from the current claims and
relationships every time it is built, so a retry or rollback that removes a claim removes
its contradictions too, and a rebuild from the ledger gives the same bytes. Three kinds:

- ``numeric`` and ``polarity``: :mod:`orchestrator.contradictions.rules`, found among all claims
  by :mod:`orchestrator.contradictions.search`;
- ``explicit``: an agent's relationship ``contradicts`` (or a synonym) between two claims.

An agent resolves a detected contradiction by writing a ``contradictions.json`` item naming both
claims with status ``resolved``; an open item of its own naming them is the same contradiction.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Container, Iterable, Mapping, Sequence
from itertools import combinations
from typing import Any

from orchestrator.contradictions.entities import groups as entity_groups
from orchestrator.contradictions.rules import agent_of, sources_of
from orchestrator.contradictions.search import ConflictCache, find_conflicts

EXPLICIT_PREDICATES = frozenset({"contradicts", "contradicted by", "is contradicted by", "conflicts with",
                                 "contradiction", "refutes", "disputes"})
KIND_ORDER = ("explicit", "numeric", "polarity")
ID_PREFIX = "detected:"


def _explicit(relationships: Iterable[Mapping[str, Any]], claim_ids: Container[str]
              ) -> dict[tuple[str, str], list[Any]]:
    found: dict[tuple[str, str], list[Any]] = defaultdict(list)
    for rel in relationships:
        predicate = " ".join(str(rel.get("predicate", "")).replace("_", " ").replace("-", " ").casefold().split())
        subject, obj = str(rel.get("subject")), str(rel.get("object"))
        if predicate in EXPLICIT_PREDICATES and subject != obj and subject in claim_ids and obj in claim_ids:
            pair = (min(subject, obj), max(subject, obj))
            agent = rel["provenance"]["agent"] if isinstance(rel.get("provenance"), Mapping) else None
            found[pair].append({"id": rel.get("id"), "agent": agent, "predicate": rel.get("predicate")})
    return found


def _side(claim: Mapping[str, Any], quantity_text: str | None) -> dict[str, Any]:
    side = {"claim_id": claim["id"], "agent": agent_of(claim), "statement": claim.get("statement"),
            "source_ids": sorted(sources_of(claim))}
    if quantity_text is not None:
        side["value"] = quantity_text
    return side


def detect(
    claims: Sequence[Mapping[str, Any]], relationships: Iterable[Mapping[str, Any]],
    recorded: Iterable[Mapping[str, Any]] = (), *, entities: Sequence[Mapping[str, Any]] = (),
    cache: ConflictCache | None = None, by_id: Mapping[str, Mapping[str, Any]] | None = None,
) -> list[dict[str, Any]]:
    """The contradictions among ``claims`` (unified, with canonical source and entity ids), by claim ids.

    ``entities``: the unified entities the claims name (their names and aliases tie two claims to one
    thing). ``recorded`` are the agents' own contradiction items: one naming both claims marks the
    detected contradiction as recorded, and resolves it when its status is ``resolved``. ``cache``
    (kept between calls) limits the comparison to the claims that changed since the last call.
    """
    if by_id is None or len(by_id) != len(claims):  # ``by_id``, when the caller has it
        by_id = {c["id"]: c for c in claims if isinstance(c.get("id"), str)}
    findings: dict[tuple[str, str], dict[str, Any]] = {}
    for pair, rels in _explicit(relationships, by_id).items():
        who = ", ".join(sorted({str(r["agent"]) for r in rels if r["agent"]})) or "an agent"
        findings[pair] = {"kinds": ["explicit"], "relationships": rels,
                          "reason": f"{who} stated that these claims contradict each other"}
    for pair, conflict in find_conflicts(by_id, entity_groups(entities), cache).items():
        entry = findings.setdefault(pair, {"kinds": [], "reason": conflict.reason})
        entry["kinds"].append(conflict.kind)
        if conflict.compared is not None:
            entry["compared"] = conflict.compared
        if len(entry["kinds"]) > 1:
            entry["reason"] = f"{entry['reason']}; {conflict.reason}"
    covering = _recorded_pairs(recorded)
    return [_record(pair, entry, by_id, covering.get(pair, [])) for pair, entry in sorted(findings.items())
            ] if findings else []


def _recorded_pairs(recorded: Iterable[Mapping[str, Any]]) -> dict[tuple[str, str], list[Mapping[str, Any]]]:
    found: dict[tuple[str, str], list[Mapping[str, Any]]] = defaultdict(list)
    for item in recorded:
        ids = sorted({str(i) for i in item.get("claim_ids") or ()})
        for pair in combinations(ids, 2):
            found[pair].append(item)
    return found


def _record(pair: tuple[str, str], entry: dict[str, Any], by_id: Mapping[str, Mapping[str, Any]],
            covering: list[Mapping[str, Any]]) -> dict[str, Any]:
    kinds = sorted(set(entry["kinds"]), key=KIND_ORDER.index)
    compared = entry.get("compared")
    texts = compared["texts"] if compared else [None, None]
    digest = hashlib.sha256("\n".join(pair).encode()).hexdigest()[:10]
    resolved_by = [c for c in covering if c.get("status") == "resolved"]
    record: dict[str, Any] = {
        "id": f"{ID_PREFIX}contradiction-{digest}", "detected": True, "kind": kinds[0], "kinds": kinds,
        "claim_ids": list(pair), "description": entry["reason"],
        "status": "resolved" if resolved_by else "open", "resolved": bool(resolved_by),
        "sides": [_side(by_id[claim_id], text) for claim_id, text in zip(pair, texts, strict=True)],
        "provenance": {"derived_by": "cconductor", "rule": "contradiction detection", "from": list(pair)
                       + sorted(str(r["id"]) for r in entry.get("relationships") or () if r.get("id"))},
    }
    if compared:  # a copy: the search cache keeps the original for the next build
        record["compared"] = {**compared, "values": list(compared["values"]), "texts": list(compared["texts"])}
    if entry.get("relationships"):
        record["relationships"] = entry["relationships"]
    if covering:
        record["recorded_by"] = sorted(str(c.get("id")) for c in covering)
    if resolved_by:
        record["resolved_by"] = str(resolved_by[0].get("id"))
        if resolved_by[0].get("resolution"):
            record["resolution"] = resolved_by[0]["resolution"]
    return record


def unresolved(contradictions: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """Open contradictions, each counted once (a detected one an agent also recorded counts as the agent's)."""
    return [c for c in contradictions if isinstance(c, Mapping) and c.get("status") != "resolved"
            and not (c.get("detected") and c.get("recorded_by"))]


def contradictions_touching(graph: Mapping[str, Any], node_ids: Iterable[str]) -> list[dict[str, Any]]:
    """The graph's contradictions that involve any of ``node_ids``.

    A node may be a claim, an entity a claim is about, a source a claim cites, a relationship that
    states the contradiction, or a contradiction itself. For ``ask``: the answer names them.
    """
    wanted = set(node_ids)
    about: dict[str, set[str]] = {}
    for claim in graph.get("claims") or ():
        if isinstance(claim, Mapping) and isinstance(claim.get("id"), str):
            about[claim["id"]] = {str(e) for e in claim.get("entity_ids") or ()} | set(sources_of(claim))
    found = []
    for item in graph.get("contradictions") or ():
        if not isinstance(item, Mapping):
            continue
        named = item.get("claim_ids")
        claims = {c for c in named if isinstance(c, str)} if isinstance(named, list) else set()
        related = claims.union(*(about.get(c, set()) for c in claims))
        related |= {str(r.get("id")) for r in item.get("relationships") or () if isinstance(r, Mapping)}
        if item.get("id") in wanted or related & wanted:
            found.append(dict(item))
    return found

