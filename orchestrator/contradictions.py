"""Contradictions between claims of different agents or sources, derived from the graph (pure).

Detected, never appended: the unified view recomputes them from the current claims and
relationships every time it is built, so a retry or rollback that removes a claim removes
its contradictions too, and a rebuild from the ledger gives the same bytes. Three kinds:

- ``numeric``: near-identical statements (same content words, same years, same polarity)
  giving values of one quantity (same normalised unit) that differ beyond a relative tolerance;
- ``polarity``: near-identical statements, same numbers, exactly one of them negated;
- ``explicit``: an agent's relationship ``contradicts`` (or a synonym) between two claims.

Only claims with independent support are compared (disjoint sources, or different agents when
a side has no evidence): a source that states two values in two contexts contradicts nothing.
An agent resolves a detected contradiction by writing a ``contradictions.json`` item naming both
claims with status ``resolved``; an open item of its own naming them is the same contradiction.
"""

from __future__ import annotations

import hashlib
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from math import ceil
from typing import Any

from orchestrator.statements import Quantity, Statement, analyse

TOLERANCE = 0.10
#: Jaccard overlap of content words two statements need to be about the same thing.
NUMERIC_OVERLAP = 0.7
POLARITY_OVERLAP = 0.8
#: How much lower the overlap may be when both claims name the same entity.
ENTITY_BONUS = 0.1
MIN_CONTENT_WORDS = 3
EXPLICIT_PREDICATES = frozenset({"contradicts", "contradicted by", "is contradicted by", "conflicts with",
                                 "contradiction", "refutes", "disputes"})
KIND_ORDER = ("explicit", "numeric", "polarity")
ID_PREFIX = "detected:"


@dataclass(frozen=True)
class Conflict:
    """Why two statements disagree: the kind, a one-line reason, the values compared (numeric)."""

    kind: str
    reason: str
    compared: dict[str, Any] | None = None


def overlap(a: Statement, b: Statement) -> float:
    union = a.content | b.content
    return len(a.content & b.content) / len(union) if union else 0.0


def relative_difference(x: float, y: float) -> float:
    scale = max(abs(x), abs(y))
    return abs(x - y) / scale if scale else 0.0


def _by_unit(quantities: Iterable[Quantity]) -> dict[str, list[Quantity]]:
    found: dict[str, list[Quantity]] = defaultdict(list)
    for q in quantities:
        found[q.unit].append(q)
    return {unit: sorted(qs, key=lambda q: q.value) for unit, qs in found.items()}


def _numeric_conflict(a: Statement, b: Statement, tolerance: float) -> Conflict | None:
    units_a, units_b = _by_unit(a.quantities), _by_unit(b.quantities)
    for unit in sorted(units_a.keys() & units_b.keys()):
        qa, qb = units_a[unit], units_b[unit]
        if len(qa) != len(qb):
            continue  # cannot tell which value answers which
        for x, y in zip(qa, qb, strict=True):
            diff = relative_difference(x.value, y.value)
            if diff > tolerance:
                return Conflict("numeric", f"different values of the same quantity: “{x.text}” vs “{y.text}” "
                                f"(they differ by {diff:.0%}; tolerance {tolerance:.0%})",
                                {"unit": unit, "values": [x.value, y.value], "texts": [x.text, y.text],
                                 "relative_difference": round(diff, 4), "tolerance": tolerance})
    return None


def _same_numbers(a: Statement, b: Statement, tolerance: float) -> bool:
    units_a, units_b = _by_unit(a.quantities), _by_unit(b.quantities)
    if units_a.keys() != units_b.keys() or a.years != b.years:
        return False
    return all(len(units_a[u]) == len(units_b[u]) and all(
        relative_difference(x.value, y.value) <= tolerance for x, y in zip(units_a[u], units_b[u], strict=True))
        for u in units_a)


def compare(a: str, b: str, *, shared_entity: bool = False, tolerance: float = TOLERANCE) -> Conflict | None:
    """Whether statements ``a`` and ``b`` disagree about the same thing, and how."""
    sa, sb = analyse(a), analyse(b)
    if len(sa.content) < MIN_CONTENT_WORDS or len(sb.content) < MIN_CONTENT_WORDS:
        return None  # too little said to know it is the same thing
    similar = overlap(sa, sb)
    bonus = ENTITY_BONUS if shared_entity else 0.0
    if sa.negated != sb.negated:
        if similar >= POLARITY_OVERLAP - bonus and _same_numbers(sa, sb, tolerance):
            return Conflict("polarity", "one statement negates what the other asserts")
        return None
    if sa.years != sb.years or similar < NUMERIC_OVERLAP - bonus:
        return None
    return _numeric_conflict(sa, sb, tolerance)


def _agent(claim: Mapping[str, Any]) -> str:
    provenance = claim.get("provenance")
    if isinstance(provenance, Mapping) and isinstance(provenance.get("agent"), str):
        return str(provenance["agent"])
    return str(claim.get("id", "")).partition(":")[0]


def _sources(claim: Mapping[str, Any]) -> frozenset[str]:
    return frozenset(str(e["source_id"]) for e in claim.get("evidence") or ()
                     if isinstance(e, Mapping) and e.get("source_id"))


def independent(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """Claims resting on disjoint sources (or, when one has none, written by different agents)."""
    sa, sb = _sources(a), _sources(b)
    if sa and sb:
        return not sa & sb
    return _agent(a) != _agent(b)


def _candidate_pairs(claims: Sequence[Mapping[str, Any]]) -> Iterator[tuple[int, int]]:
    """Pairs whose content words reach the lowest overlap threshold, each once.

    Prefix filtering (rare words first): two sets with Jaccard >= t share a word among the
    first ``|x| - ceil(t|x|) + 1`` of each, so only those words are indexed and probed; each
    candidate is then checked with the size bound and the exact overlap before it is yielded.
    """
    threshold = min(NUMERIC_OVERLAP, POLARITY_OVERLAP) - ENTITY_BONUS
    words = [analyse(str(c.get("statement", ""))).content for c in claims]
    frequency = Counter(w for content in words for w in content)
    postings: dict[str, list[int]] = defaultdict(list)
    for index, content in enumerate(words):
        size = len(content)
        if size < MIN_CONTENT_WORDS:
            continue
        ordered = sorted(content, key=lambda w: (frequency[w], w))
        seen: set[int] = set()
        for word in ordered[: size - ceil(threshold * size) + 1]:
            for other in postings[word]:
                if other in seen:
                    continue
                seen.add(other)
                theirs = words[other]
                if min(size, len(theirs)) < threshold * max(size, len(theirs)):
                    continue
                shared = len(content & theirs)
                if shared >= threshold * (size + len(theirs) - shared):
                    yield other, index
            postings[word].append(index)


def _explicit(relationships: Iterable[Mapping[str, Any]], claim_ids: set[str]) -> dict[tuple[str, str], list[Any]]:
    found: dict[tuple[str, str], list[Any]] = defaultdict(list)
    for rel in relationships:
        predicate = " ".join(str(rel.get("predicate", "")).replace("_", " ").replace("-", " ").casefold().split())
        subject, obj = str(rel.get("subject")), str(rel.get("object"))
        if predicate in EXPLICIT_PREDICATES and subject != obj and {subject, obj} <= claim_ids:
            pair = (min(subject, obj), max(subject, obj))
            agent = rel["provenance"]["agent"] if isinstance(rel.get("provenance"), Mapping) else None
            found[pair].append({"id": rel.get("id"), "agent": agent, "predicate": rel.get("predicate")})
    return found


def _side(claim: Mapping[str, Any], quantity_text: str | None) -> dict[str, Any]:
    side = {"claim_id": claim["id"], "agent": _agent(claim), "statement": claim.get("statement"),
            "source_ids": sorted(_sources(claim))}
    if quantity_text is not None:
        side["value"] = quantity_text
    return side


def detect(
    claims: Sequence[Mapping[str, Any]], relationships: Iterable[Mapping[str, Any]],
    recorded: Iterable[Mapping[str, Any]] = (), *, tolerance: float = TOLERANCE,
) -> list[dict[str, Any]]:
    """The contradictions among ``claims`` (unified, with canonical source and entity ids), by claim ids.

    ``recorded`` are the agents' own contradiction items: one naming both claims marks the
    detected contradiction as recorded, and resolves it when its status is ``resolved``.
    """
    by_id = {str(c["id"]): c for c in claims if isinstance(c.get("id"), str)}
    findings: dict[tuple[str, str], dict[str, Any]] = {}
    for pair, rels in _explicit(relationships, set(by_id)).items():
        who = ", ".join(sorted({str(r["agent"]) for r in rels if r["agent"]})) or "an agent"
        findings[pair] = {"kinds": ["explicit"], "relationships": rels,
                          "reason": f"{who} stated that these claims contradict each other"}
    for i, j in _candidate_pairs(claims):
        a, b = claims[i], claims[j]
        if not independent(a, b):
            continue
        entities_a, entities_b = set(a.get("entity_ids") or ()), set(b.get("entity_ids") or ())
        if entities_a and entities_b and not entities_a & entities_b:
            continue  # about different things
        first, second = (a, b) if a["id"] < b["id"] else (b, a)  # the order of the input never matters
        conflict = compare(str(first.get("statement", "")), str(second.get("statement", "")),
                           shared_entity=bool(entities_a & entities_b), tolerance=tolerance)
        if conflict is None:
            continue
        pair = (first["id"], second["id"])
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
    if compared:
        record["compared"] = compared
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
            about[claim["id"]] = {str(e) for e in claim.get("entity_ids") or ()} | set(_sources(claim))
    found = []
    for item in graph.get("contradictions") or ():
        if not isinstance(item, Mapping):
            continue
        claims = {str(c) for c in item.get("claim_ids") or ()}
        related = claims.union(*(about.get(c, set()) for c in claims))
        related |= {str(r.get("id")) for r in item.get("relationships") or () if isinstance(r, Mapping)}
        if item.get("id") in wanted or related & wanted:
            found.append(dict(item))
    return found

