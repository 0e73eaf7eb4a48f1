"""When two statements disagree: the pairwise rules of contradiction detection (pure).

Two statements are about the same thing when their topics (:mod:`orchestrator.contradictions.statements`)
coincide, but for at most :data:`MAX_EXTRA` word that only one of them has ("in most patients"): a
word on each side that the other lacks is a different qualifier or subject ("inlet" / "outlet",
"Spain" / "Italy"), and such statements never disagree. About the same thing, and in the same years,
they disagree when

* ``numeric``: a value of one unit lies outside the other's interval (the values paired by unit,
  then by what each is of: "45% in the treatment arm" meets the other's treatment-arm value);
* ``polarity``: one says the opposite of the other: "rose" / "fell" (an opposition both state), or
  one negates what the other asserts with the same values.

Only claims with independent support are compared (disjoint sources, or different agents when a
side has no evidence), and claims naming entities compare only when they share one.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from orchestrator.contradictions.statements import Statement, analyse
from orchestrator.contradictions.values import HEDGE, Quantity
from orchestrator.contradictions.words import OPPOSITIONS

#: Relative half-width of a hedged value (kept in each numeric finding as its ``tolerance``).
TOLERANCE = HEDGE
#: Words one statement may add to the other's topic and still be about the same thing.
MAX_EXTRA = 1
#: Topic words two statements must share: fewer says too little to know it is the same thing.
MIN_SHARED = 2
MIN_SHARED_NEGATION = 3


@dataclass(frozen=True)
class Conflict:
    """Why two statements disagree: the kind, a one-line reason, the values compared (numeric)."""

    kind: str
    reason: str
    compared: dict[str, Any] | None = None


def same_topic(a: Statement, b: Statement, least: int = MIN_SHARED) -> bool:
    """Whether ``a`` and ``b`` are about the same thing (see the module docstring)."""
    extra_a, extra_b = a.topic - b.topic, b.topic - a.topic
    if (extra_a and extra_b) or len(extra_a) + len(extra_b) > MAX_EXTRA:
        return False
    if _narrows(a, b, extra_a) or _narrows(b, a, extra_b):
        return False
    return len(a.topic & b.topic) >= least and a.years == b.years


def _narrows(a: Statement, b: Statement, extra: frozenset[str]) -> bool:
    """Whether ``a``'s extra word specialises a word ``b`` writes bare: "lung cancer deaths" are some of the
    "cancer deaths", another subject (where "the study" / "the trial" swaps one word for another)."""
    return any((word, after) in a.modifiers and after in b.bare for word in extra if word not in OPPOSITIONS
               for after in b.topic)


def _by_unit(quantities: Iterable[Quantity]) -> dict[str, list[Quantity]]:
    found: dict[str, list[Quantity]] = defaultdict(list)
    for q in quantities:
        found[q.unit].append(q)
    return found


def _overlap(x: Quantity, y: Quantity) -> bool:
    return (x.low < y.high and y.low < x.high) or (x.low == x.high == y.low == y.high)


def _paired(xs: list[Quantity], ys: list[Quantity]) -> list[tuple[Quantity, Quantity]] | None:
    """The values of one unit matched one to one: by what they are of, else in order; None when unclear."""
    if len(xs) == len(ys) == 1:
        return [(xs[0], ys[0])]
    if len(xs) != len(ys):
        return None
    anchors_x, anchors_y = [q.anchor for q in xs], [q.anchor for q in ys]
    if all(anchors_x) and len(set(anchors_x)) == len(xs) and set(anchors_x) == set(anchors_y):
        by_anchor = {q.anchor: q for q in ys}
        return [(q, by_anchor[q.anchor]) for q in xs]
    by_value = sorted(xs, key=lambda q: q.value), sorted(ys, key=lambda q: q.value)
    return list(zip(*by_value, strict=True))  # unclear which is which: only a value with no match disagrees


def _numeric(a: Statement, b: Statement) -> Conflict | None:
    units_a, units_b = _by_unit(a.quantities), _by_unit(b.quantities)
    for unit in sorted(units_a.keys() & units_b.keys()):
        for x, y in _paired(units_a[unit], units_b[unit]) or ():
            if _overlap(x, y):
                continue
            scale = max(abs(x.value), abs(y.value))
            diff = abs(x.value - y.value) / scale if scale else 0.0
            shown = unit.removeprefix("#")
            return Conflict("numeric", f"different values of the same quantity: “{x.text}” vs “{y.text}” "
                            f"({_apart(x, y, diff)})",
                            {"unit": shown, "values": [x.value, y.value], "texts": [x.text, y.text],
                             "relative_difference": round(diff, 4), "tolerance": TOLERANCE})
    return None


def _apart(x: Quantity, y: Quantity, relative: float) -> str:
    """How far apart two values are, in words that are true of them: years apart for dates ("1937" vs "1933"
    are 4 years apart, not 0%), points for percentages, else the relative difference."""
    gap = abs(x.value - y.value)
    if x.unit == "year":
        return f"{gap:g} year{'s' if gap != 1 else ''} apart"
    if x.unit == "%":
        return f"{gap:g} percentage point{'s' if gap != 1 else ''} apart"
    if x.unit == "°C":  # a temperature has no true zero: "-18 °C" is not 200 % away from "18 °C"
        return f"{round(gap, 2):g} °C apart"
    return f"they differ by {relative:.0%}" if relative >= 0.005 else f"they differ by {relative:.2%}"


def _same_values(a: Statement, b: Statement) -> bool:
    units_a, units_b = _by_unit(a.quantities), _by_unit(b.quantities)
    if units_a.keys() != units_b.keys():
        return False
    for unit in units_a:
        pairs = _paired(units_a[unit], units_b[unit])
        if pairs is None or not all(_overlap(x, y) for x, y in pairs):
            return False
    return True


def compare_statements(a: Statement, b: Statement) -> Conflict | None:
    """Whether two analysed statements disagree about the same thing, and how."""
    if not same_topic(a, b):
        return None
    opposite_words = a.flipped != b.flipped and _directions_shared(a, b)
    if a.negated == b.negated and opposite_words:
        return Conflict("polarity", "one statement says the opposite of the other")
    if a.negated != b.negated and not opposite_words:
        if same_topic(a, b, MIN_SHARED_NEGATION) and _same_values(a, b):
            return Conflict("polarity", "one statement negates what the other asserts")
        return None
    if a.negated != b.negated:
        return None  # a negated opposite: "did not fall" agrees with "rose"
    return _numeric(a, b)


def _directions_shared(a: Statement, b: Statement) -> bool:
    """Opposites compare only when both statements use the same opposition ("rose" / "fell"); a
    statement that alone has one ("reduced" beside "had no effect on") is read by its negation."""
    return (a.topic & OPPOSITIONS) == (b.topic & OPPOSITIONS)


def compare(a: str, b: str, names_a: tuple[tuple[str, str], ...] = (),
            names_b: tuple[tuple[str, str], ...] = ()) -> Conflict | None:
    """Whether statements ``a`` and ``b`` disagree about the same thing, and how (symmetric)."""
    first, second = sorted([(a, names_a), (b, names_b)])
    return compare_statements(analyse(*first), analyse(*second))


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
