"""When two claims disagree: the pairwise rules of contradiction detection (pure).

Two statements disagree about the same thing when their content words nearly coincide and
either a quantity in one normalised unit differs beyond a relative tolerance (``numeric``)
or exactly one of them is negated (``polarity``); see :mod:`orchestrator.graph.statements` for
what a statement is reduced to. Only claims with independent support are compared.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from orchestrator.graph.statements import Quantity, Statement, analyse

TOLERANCE = 0.10
#: Jaccard overlap of content words two statements need to be about the same thing.
NUMERIC_OVERLAP = 0.7
POLARITY_OVERLAP = 0.8
#: How much lower the overlap may be when both claims name the same entity.
ENTITY_BONUS = 0.05
MIN_CONTENT_WORDS = 3

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


def agent_of(claim: Mapping[str, Any]) -> str:
    provenance = claim.get("provenance")
    if isinstance(provenance, Mapping) and isinstance(provenance.get("agent"), str):
        return str(provenance["agent"])
    return str(claim.get("id", "")).partition(":")[0]


def sources_of(claim: Mapping[str, Any]) -> frozenset[str]:
    return frozenset(str(e["source_id"]) for e in claim.get("evidence") or ()
                     if isinstance(e, Mapping) and e.get("source_id"))


def independent(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """Claims resting on disjoint sources (or, when one has none, written by different agents)."""
    sa, sb = sources_of(a), sources_of(b)
    if sa and sb:
        return not sa & sb
    return agent_of(a) != agent_of(b)


def claim_conflict(a: Mapping[str, Any], b: Mapping[str, Any], tolerance: float = TOLERANCE) -> Conflict | None:
    """Whether claims ``a`` and ``b`` (unified items) conflict; symmetric in its arguments."""
    if not independent(a, b):
        return None
    entities_a, entities_b = set(a.get("entity_ids") or ()), set(b.get("entity_ids") or ())
    if entities_a and entities_b and not entities_a & entities_b:
        return None  # about different things
    first, second = (a, b) if str(a["id"]) < str(b["id"]) else (b, a)  # the order never matters
    return compare(str(first.get("statement", "")), str(second.get("statement", "")),
                   shared_entity=bool(entities_a & entities_b), tolerance=tolerance)
