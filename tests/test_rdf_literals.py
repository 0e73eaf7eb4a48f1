"""The literal cache gives exactly the literal a fresh conversion gives, for values that compare equal too."""

from __future__ import annotations

import math

import pytest
from rdflib import Literal

from orchestrator.rdf import literals
from orchestrator.rdf.literals import literal

CONVERSIONS = ("str", "int", "dec", "bool", "uri", "date", "datetime", "json", "strs")
VALUES = [
    0, 1, -1, 2024, True, False, 0.0, -0.0, 1.0, 0.85, 100.0, float("nan"), float("inf"), "", "high", "1",
    "2024-02-30", "2024-01-31", "2024-01-31T10:00:00Z", "https://x.org/a", "x" * 41, 10**30, None, [1], {"a": 1},
]


def _same(a: Literal, b: Literal) -> bool:
    """Equal as RDF terms and written the same (Literal == alone calls 1 and 1.0 different, -0.0 and 0.0 not)."""
    return (a.eq(b) if not (isinstance(a.value, float) and math.isnan(a.value)) else str(a) == str(b)) and (
        str(a), a.datatype, a.language) == (str(b), b.datatype, b.language)


def test_cached_literals_are_the_fresh_ones_for_equal_comparing_values() -> None:
    literals._LITERALS.clear()
    for _ in range(2):  # the second round is served from the cache
        for conv in CONVERSIONS:
            for value in VALUES:
                assert _same(literal(conv, value), literals._make_literal(conv, value)), (conv, value)
    assert str(literal("dec", -0.0)) == "-0.0" and str(literal("dec", 0.0)) == "0.0"
    assert literal("str", True) != literal("str", 1)  # a boolean is not the number 1
    assert literal("int", 1).datatype != literal("int", True).datatype


def test_short_repeated_values_share_one_literal_and_the_cache_stays_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    literals._LITERALS.clear()
    assert literal("str", "high") is literal("str", "high")
    assert literal("str", "y" * 41) is not literal("str", "y" * 41)  # long text is not kept
    limit = 50
    monkeypatch.setattr(literals, "_LITERALS_MAX", limit)
    for n in range(3 * limit):
        literal("int", n)
        assert len(literals._LITERALS) <= limit
