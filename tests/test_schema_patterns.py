"""Every pattern of schemas/ means the same in both validators: ECMA-262, as JSON Schema says.

Python's ``re`` lets ``$`` match before a final newline and ``\\d`` match any Unicode digit;
jsonschema-rs (and the standard) do not. jsonschema decides, so it must read the patterns as the
documentation does: an id ``"C1\\n"`` is rejected, by the fast check and by jsonschema alike.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import jsonschema_rs
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from orchestrator.contract.patterns import ecma, extended
from orchestrator.contract.schemas import SchemaRegistry
from orchestrator.model.layout import resource_dir


def _patterns(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        if isinstance(node.get("pattern"), str):
            yield node["pattern"]
        yield from (key for key in node.get("patternProperties") or {})
        for value in node.values():
            yield from _patterns(value)
    elif isinstance(node, list):
        for value in node:
            yield from _patterns(value)


PATTERNS = sorted({p for path in resource_dir("schemas").glob("*.schema.json")
                   for p in _patterns(json.loads(path.read_text()))})
ours = extended(Draft202012Validator)


def same_verdict(pattern: str, value: str) -> None:
    fast = jsonschema_rs.validator_for({"pattern": pattern}).is_valid(value)
    slow = ours({"pattern": pattern}).is_valid(value)
    assert fast == slow, f"{pattern!r} on {value!r}: jsonschema-rs {fast}, jsonschema {slow}"


def test_the_schemas_have_patterns() -> None:
    assert len(PATTERNS) >= 5


@pytest.mark.parametrize("pattern", PATTERNS)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_each_pattern_gives_both_validators_the_same_verdict(pattern: str, data: st.DataObject) -> None:
    value = data.draw(st.from_regex(pattern, fullmatch=True))
    for probe in (value, value + "\n", "\n" + value, value + "\r\n", value[:-1] + "\n" if value else "\n",
                  value + "\u0663", value.replace("0", "\u0660")):
        same_verdict(pattern, probe)


@pytest.mark.parametrize("value", ["C1\n", "C1\r\n", "\nC1", "C 1", "C1\u2028"])
def test_an_id_with_a_line_break_is_rejected_by_the_registry_and_by_jsonschema_alone(value: str) -> None:
    document = {"claims": [{"id": value, "statement": "A claim.", "confidence": 0.5,
                            "evidence": [{"source_id": "S1", "snippet": "x"}]}]}
    problems = SchemaRegistry.default().validate_artifact("claims.json", document, "artifacts/a/claims.json")
    assert any(p.rule == "schema.pattern" and p.pointer == "/claims/0/id" for p in problems), problems
    slow = SchemaRegistry.default()._slow_validator("claims")
    assert any(e.validator == "pattern" for e in slow.iter_errors(document))


@pytest.mark.parametrize("pattern, value, matches", [
    ("^[a-z]+$", "abc", True), ("^[a-z]+$", "abc\n", False), ("^\\d+$", "12", True), ("^\\d+$", "\u0661\u0662", False),
    ("^[\\d.]+$", "1.2", True), ("^[\\d.]+$", "\u0661.\u0662", False), ("^a\\$b$", "a$b", True), ("^[$]$", "$", True),
    ("^\\w+$", "éa", False), ("^[^\\]]+$", "a]", False), ("a|b$", "a\n", True),
])
def test_ecma_reads_a_pattern_as_the_standard_does(pattern: str, value: str, matches: bool) -> None:
    assert (ecma(pattern).search(value) is not None) is matches
    assert jsonschema_rs.validator_for({"pattern": pattern}).is_valid(value) is matches
