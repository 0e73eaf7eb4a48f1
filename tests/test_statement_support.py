"""A claim's statement keeps the numbers and the negation of its verified quotes: the report states a claim by its
statement and counts it as verified."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from orchestrator.graph.statement_support import unsupported_statements
from tests.helpers.one_claim import submit_one_claim


def _claim(statement: str, *quotes: str, verified: bool = True) -> dict[str, Any]:
    return {"id": "a:C1", "local_id": "C1", "statement": statement,
            "provenance": {"file": "artifacts/a/claims.json", "pointer": "/claims/0"},
            "evidence": [{"snippet": q, "verification": {"verified": verified, "matched_text": q}} for q in quotes]}


def _problems(claim: dict[str, Any]) -> list[str]:
    return [p.message for p in unsupported_statements({"items": {"claims": [claim]}})]


CHANGED = [
    ("The drug eliminated mortality in 100 percent of cases.", "the drug reduced mortality by 20 percent"),
    ("Latency is 40 ms.", "The measured latency was 12 ms on average"),
    ("The trial enrolled 4,200 patients.", "The trial enrolled 4,000 patients at 12 sites"),
    ("The drug reduced mortality in older adults.", "The drug did not reduce mortality in older adults"),
    ("Aspirin prevents strokes.", "There is no evidence that aspirin prevents strokes"),
]
KEPT = [
    ("Latency is 12 ms.", "The measured latency was 12 ms on average"),
    ("The trial enrolled 4000 patients.", "The trial enrolled 4,000 patients at 12 sites"),
    ("COVID-19 vaccines cut deaths by 20%.", "the vaccines cut deaths by 20 percent"),
    ("The drug failed to reduce mortality.", "The drug did not reduce mortality in older adults"),
    ("The drug had no effect on mortality.", "The drug did not reduce mortality in older adults"),
    ("The study enrolled 120 children.", "the study enrolled one hundred and twenty children"),
    ("The Lumen reactor is cooled by molten salt.", "The Lumen reactor is cooled by molten salt in the core"),
]


@pytest.mark.parametrize(("statement", "quote"), CHANGED)
def test_a_statement_that_changes_its_quotes_numbers_or_negation_is_a_problem(statement: str, quote: str) -> None:
    found = _problems(_claim(statement, quote))
    assert len(found) == 1 and "C1" in found[0], found


@pytest.mark.parametrize(("statement", "quote"), KEPT)
def test_a_statement_that_keeps_them_is_not(statement: str, quote: str) -> None:
    assert _problems(_claim(statement, quote)) == []


def test_numbers_may_come_from_any_verified_quote_and_unverified_quotes_are_left_to_shacl() -> None:
    assert _problems(_claim("Latency is 12 ms at 40 users.", "latency was 12 ms", "with 40 users online")) == []
    assert _problems(_claim("Latency is 99 ms.", "latency was 12 ms", verified=False)) == []


def test_the_merge_rejects_the_claim_and_the_instruction_names_the_number(tmp_path: Path) -> None:
    session, status = submit_one_claim(
        tmp_path, "In older adults, the drug reduced mortality by 20 percent over two years.",
        "The drug eliminated mortality entirely, curing 100 percent of cases.",
        "the drug reduced mortality by 20 percent over two years", "medium")
    assert status == "rejected"
    doc = json.loads(session.retry_instructions("trialist").read_text())
    problems = [p for f in doc["files"] for p in f["problems"] if p["rule"] == "claim.statement_unsupported"]
    assert len(problems) == 1 and problems[0]["pointer"] == "/claims/0" and "100" in problems[0]["message"]
    assert doc["error_class"] == "evidence"
    assert [f["path"] for f in doc["files"] if problems[0] in f["problems"]] == ["artifacts/trialist/claims.json"]


def test_a_year_the_statement_adds_for_context_is_no_value() -> None:
    quote = "the drug reduced mortality by 20 percent"
    assert _problems(_claim("According to Smith et al. (2020), the drug reduced mortality by 20%.", quote)) == []
    assert _problems(_claim("In 2019, the drug reduced mortality by 20 percent.", quote)) == []
    assert _problems(_claim("In 2019, the drug reduced mortality by 25 percent.", quote)) != []


def test_a_bare_number_that_labels_the_claim_is_no_value() -> None:
    quote = "the drug reduced mortality by 20 percent"
    assert _problems(_claim("Claim 0.", quote)) == []
    assert _problems(_claim("Finding 2: the drug reduced mortality by 20%.", quote)) == []
