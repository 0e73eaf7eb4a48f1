"""A relationship must be stated by a claim it rests on: both ends named (or aliased) and the relation said."""

from __future__ import annotations

import json
from typing import Any

import pytest

from orchestrator.graph.relation_support import carries, names, relation_terms, support
from orchestrator.model.layout import SessionPaths
from tests.conftest import merge_pending, store_text, write_artifacts

TEXT = ("Atlas of Iberia, title page.\fLisbon is the capital of Portugal and its largest city. "
        "The sky is blue on clear days. Madrid is not the capital of Portugal.")


def test_relation_terms_drop_fillers_and_generic_predicates() -> None:
    assert relation_terms("capital_of") == {"capit"}
    assert relation_terms("isLocatedIn") == {"locat"}
    assert relation_terms("co-occurs-with") == frozenset() and relation_terms("related to") == frozenset()


@pytest.mark.parametrize("text, predicate, held", [
    ("Lisbon is the capital of Portugal.", "capital-of", True),
    ("Lisbon lies in Portugal.", "located_in", True),  # another word for the same relation
    ("Madrid is not the capital of Portugal.", "capital of", False),  # negated right before it
    ("The sky is blue on clear days.", "capital of", False),
    ("Lisbon and Porto are both in Portugal.", "co-occurs-with", True),  # generic: the ends suffice
    ("Molten salt cooling does not require high pressure.", "does-not-require", True),  # denied, and said so
    ("Molten salt cooling requires high pressure.", "does-not-require", False),
    ("Operating without high pressure allows a thin vessel.", "enables", True),
])
def test_carries(text: str, predicate: str, held: bool) -> None:
    assert carries(text, predicate) is held


def test_names_by_name_alias_possessive_or_plural() -> None:
    assert names("Lisboa's harbour is deep.", ["Lisbon", "Lisboa"])
    assert names("Both reactors failed.", ["reactor"])
    assert not names("Lisbonne is French for it.", ["Lisbon"])
    found = support("The sky is blue on clear days.", "capital of", ["Lisbon"], ["Spain"])
    assert found.missing() == ["its subject", "its object", "the relation"]


def _problems(session: SessionPaths, agent: str) -> list[dict[str, Any]]:
    instructions = json.loads(session.retry_instructions(agent).read_text())
    return [problem for file in instructions["files"] for problem in file["problems"]]


def _agent(session: SessionPaths, name: str, relationship: dict[str, Any], statements: list[str],
           entities: list[dict[str, Any]]) -> None:
    sha = store_text(session, TEXT)
    claims = [{"id": f"C{n}", "statement": s, "priority": "medium", "confidence": 0.8,
               "evidence": [{"source_id": "S1", "snippet": s.rstrip("."), "locator": {"page": 2}}]}
              for n, s in enumerate(statements, 1)]
    write_artifacts(session, name, {
        "sources.json": {"sources": [{"id": "S1", "type": "book", "title": "Atlas of Iberia", "year": 2020,
                                      "url": "https://example.org/atlas", "content_sha256": sha}]},
        "claims.json": {"claims": claims}, "entities.json": {"entities": entities},
        "relationships.json": {"relationships": [relationship]}})


ENTITIES = [{"id": "E1", "name": "Lisbon", "type": "city", "aliases": ["Lisboa"]},
            {"id": "E2", "name": "Portugal", "type": "country"}, {"id": "E3", "name": "Spain", "type": "country"}]


def test_a_relationship_its_claims_do_not_state_is_rejected_with_a_retry_instruction(session: SessionPaths) -> None:
    _agent(session, "mapper", {"id": "R1", "subject": "E1", "predicate": "capital of", "object": "E3",
                               "claim_ids": ["C1"]}, ["The sky is blue on clear days."], ENTITIES)
    assert merge_pending(session) == {"mapper": "rejected"}
    [problem] = [p for p in _problems(session, "mapper") if p["rule"] == "relationship.unsupported"]
    assert problem["file"] == "artifacts/mapper/relationships.json" and problem["pointer"] == "/relationships/0"
    assert "Lisbon --capital of--> Spain" in problem["message"] and "lacks its subject" in problem["message"]
    assert "claim_ids" in problem["hint"]


def test_a_claim_naming_the_ends_but_another_relation_does_not_state_it(session: SessionPaths) -> None:
    _agent(session, "mapper", {"id": "R1", "subject": "E1", "predicate": "borders", "object": "E2",
                               "claim_ids": ["C1"]}, ["Lisbon is the capital of Portugal."], ENTITIES)
    assert merge_pending(session) == {"mapper": "rejected"}
    message = _problems(session, "mapper")[0]["message"]
    assert "lacks the relation" in message


def test_a_stated_relationship_merges_by_alias_and_across_agents(session: SessionPaths) -> None:
    _agent(session, "mapper", {"id": "R1", "subject": "E1", "predicate": "capital_of", "object": "E2",
                               "claim_ids": ["C2", "C1"]},
           ["The sky is blue on clear days.", "Lisbon is the capital of Portugal."], ENTITIES)
    assert merge_pending(session) == {"mapper": "merged"}
    write_artifacts(session, "linker", {"relationships.json": {"relationships": [
        {"id": "R1", "subject": "mapper:E1", "predicate": "is the capital of", "object": "mapper:E2",
         "claim_ids": ["mapper:C2"]},
        {"id": "R2", "subject": "mapper:E1", "predicate": "capital of", "object": "mapper:E3",
         "claim_ids": ["mapper:C2"]}]}})
    assert merge_pending(session) == {"linker": "rejected"}  # R2: the claim names Portugal, not Spain
    problems = _problems(session, "linker")
    assert [(p["rule"], p["pointer"]) for p in problems] == [("relationship.unsupported", "/relationships/1")]
