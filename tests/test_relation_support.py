"""A relationship must be stated by a claim it rests on: both ends named (or aliased) and the relation said."""

from __future__ import annotations

import json
from typing import Any

import pytest

from orchestrator.graph.relation_support import support
from orchestrator.graph.relation_words import carries, names, relation_terms
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


# -- issue 23: support is read from the verified passage, in its direction, and kept across retries ---------------

IBERIA = ("Iberia notes.\fLisboa is the capital of Portugal and its largest city. Lisbon is not the capital of Spain. "
          "Madrid is the capital of Spain. The sky is blue on clear days. Portugal borders Spain to the east. "
          "Spain is bordered by France to the north. The capital of France is Paris.")
PLACES = [{"id": "E1", "name": "Lisbon", "type": "city", "aliases": ["Lisboa"]},
          {"id": "E2", "name": "Spain", "type": "country"}, {"id": "E3", "name": "Portugal", "type": "country"},
          {"id": "E4", "name": "France", "type": "country"}, {"id": "E5", "name": "Paris", "type": "city"}]


def _geo(session: SessionPaths, agent: str, claims: list[tuple[str, str, str]],
         relationships: list[dict[str, Any]], entities: list[dict[str, Any]] | None = None) -> None:
    """(id, statement, snippet) claims quoting IBERIA at page 2."""
    sha = store_text(session, IBERIA)
    files: dict[str, Any] = {
        "sources.json": {"sources": [{"id": "S1", "type": "book", "title": "Iberia", "year": 2020,
                                      "url": "https://example.org/iberia", "content_sha256": sha}]},
        "claims.json": {"claims": [{"id": i, "statement": s, "priority": "medium", "confidence": 0.8,
                                    "evidence": [{"source_id": "S1", "snippet": q, "locator": {"page": 2}}]}
                                   for i, s, q in claims]},
        "entities.json": {"entities": PLACES if entities is None else entities}}
    if relationships:
        files["relationships.json"] = {"relationships": relationships}
    write_artifacts(session, agent, files)


def _rel(subject: str, predicate: str, obj: str, claim_ids: list[str] | None = None) -> dict[str, Any]:
    rel: dict[str, Any] = {"id": "R1", "subject": subject, "predicate": predicate, "object": obj}
    if claim_ids is not None:
        rel["claim_ids"] = claim_ids
    return rel


@pytest.mark.parametrize("claim, rel, merged", [
    # the claim's statement says it, its verified passage does not: an agent's words are not evidence
    (("C1", "Lisbon is the capital of Spain.", "Portugal borders Spain to the east"),
     _rel("E1", "capital of", "E2", ["C1"]), False),
    # the passage says it the other way round
    (("C1", "Lisboa is the capital of Portugal.", "Lisboa is the capital of Portugal and its largest city"),
     _rel("E3", "capital of", "E1", ["C1"]), False),
    (("C1", "Portugal borders Spain to the east.", "Portugal borders Spain to the east"),
     _rel("E2", "borders", "E3", ["C1"]), False),
    # the same passages in the direction they say it
    (("C1", "Lisboa is the capital of Portugal.", "Lisboa is the capital of Portugal and its largest city"),
     _rel("E1", "capital of", "E3", ["C1"]), True),
    (("C1", "Portugal borders Spain to the east.", "Portugal borders Spain to the east"),
     _rel("E3", "borders", "E2", ["C1"]), True),
    # passive and "the capital of X is Y" forms read the right way round
    (("C1", "France borders Spain.", "Spain is bordered by France to the north"),
     _rel("E4", "borders", "E2", ["C1"]), True),
    (("C1", "France borders Spain.", "Spain is bordered by France to the north"),
     _rel("E2", "borders", "E4", ["C1"]), False),
    (("C1", "Paris is the capital of France.", "The capital of France is Paris"),
     _rel("E5", "capital of", "E4", ["C1"]), True),
    (("C1", "Paris is the capital of France.", "The capital of France is Paris"),
     _rel("E4", "capital of", "E5", ["C1"]), False),
])
def test_support_is_the_verified_passage_in_its_direction(session: SessionPaths, claim: tuple[str, str, str],
                                                          rel: dict[str, Any], merged: bool) -> None:
    _geo(session, "geo", [claim], [rel])
    assert merge_pending(session) == {"geo": "merged" if merged else "rejected"}
    if not merged:
        doc = json.loads(session.retry_instructions("geo").read_text())
        [problem] = _problems(session, "geo")
        assert problem["rule"] == "relationship.unsupported" and doc["error_class"] == "evidence"


def test_direction_reads_possessive_and_apposition_forms() -> None:
    from orchestrator.graph.relation_words import direction

    lisbon, portugal = ["Lisbon", "Lisboa"], ["Portugal"]
    assert direction("Portugal's capital, Lisbon, is large.", "capital of", lisbon, portugal) == "forward"
    assert direction("Portugal's capital, Lisbon, is large.", "capital of", portugal, lisbon) == "reversed"
    assert direction("Lisbon, the capital of Portugal, is old.", "capital_of", lisbon, portugal) == "forward"
    # a wording the rule does not read is not held against a relationship
    assert direction("Portugal, which has Lisbon as its capital, is small.", "capital of", lisbon,
                     portugal) == "unknown"
    assert support("Portugal, which has Lisbon as its capital, is small.", "capital of", lisbon, portugal).states


@pytest.mark.parametrize("claim_ids", [None, []])
def test_a_relationship_between_entities_without_claims_is_rejected(session: SessionPaths,
                                                                    claim_ids: list[str] | None) -> None:
    _geo(session, "geo", [("C1", "Madrid is the capital of Spain.", "Madrid is the capital of Spain")],
         [_rel("E1", "capital of", "E2", claim_ids)])
    assert merge_pending(session) == {"geo": "rejected"}
    [problem] = _problems(session, "geo")
    assert problem["rule"] == "relationship.unsupported" and "lists no supporting claim" in problem["message"]
    assert "claim_ids" in problem["hint"] and problem["pointer"] == "/relationships/0"


def test_a_relationship_with_a_claim_at_an_end_needs_no_claim_ids(session: SessionPaths) -> None:
    _geo(session, "geo", [("C1", "Madrid is the capital of Spain.", "Madrid is the capital of Spain"),
                          ("C2", "Lisbon is not the capital of Spain.", "Lisbon is not the capital of Spain")],
         [_rel("C1", "supports", "C2"), dict(_rel("C1", "mentions", "E2"), id="R2")])
    assert merge_pending(session) == {"geo": "merged"}


def _linked(session: SessionPaths) -> tuple[str, str, str]:
    """Agent geo's claim C3 (returned) states Lisbon --capital of--> Portugal; agent linker's R1 rests on it."""
    capital = ("C3", "Lisboa is the capital of Portugal.", "Lisboa is the capital of Portugal and its largest city")
    _geo(session, "geo", [capital], [])
    assert merge_pending(session) == {"geo": "merged"}
    write_artifacts(session, "linker", {"relationships.json": {"relationships": [
        _rel("geo:E1", "capital of", "geo:E3", ["geo:C3"])]}})
    assert merge_pending(session) == {"linker": "merged"}
    return capital


def test_a_retry_that_stops_stating_another_agents_relationship_is_rejected(session: SessionPaths) -> None:
    capital = _linked(session)
    sky = ("C3", "The sky is blue on clear days.", "The sky is blue on clear days")
    _geo(session, "geo", [sky], [])  # same id, another passage
    assert merge_pending(session) == {"geo": "rejected"}
    doc = json.loads(session.retry_instructions("geo").read_text())
    [problem] = _problems(session, "geo")
    assert problem["rule"] == "reference.support_lost" and doc["error_class"] == "reference"
    assert "'linker'" in problem["message"] and "artifacts/linker/relationships.json" in problem["message"]
    assert "do not edit 'linker'" in problem["hint"]
    graph = json.loads(session.kg_json.read_text())
    assert [c["statement"] for c in graph["claims"]] == ["Lisboa is the capital of Portugal."]  # nothing lost
    _geo(session, "geo", [capital, ("C4", *sky[1:])], [])  # a retry that keeps C3's passage merges
    assert merge_pending(session) == {"geo": "merged"}


def test_a_predicate_that_reads_backwards_expects_the_other_order() -> None:
    from orchestrator.graph.relation_words import direction

    reactor, salt = ["Lumen reactor"], ["molten salt"]
    text = "The Lumen reactor is cooled by molten salt."
    assert direction(text, "cooled-by", reactor, salt) == "forward"
    assert direction(text, "cools", salt, reactor) == "forward"
    assert direction(text, "cools", reactor, salt) == "reversed"
    assert direction("Lisbon is the capital of Portugal.", "hasCapital", ["Portugal"], ["Lisbon"]) == "forward"
    assert direction("Lisbon is the capital of Portugal.", "has capital", ["Lisbon"], ["Portugal"]) == "reversed"


def test_validate_reports_a_merged_relationship_nothing_states() -> None:
    """A graph merged before the check (or by an older version) is reported by `validate`."""
    from orchestrator.commit.inspection import relationship_support_problems

    passage = {"source_id": "geo:S1", "verification": {"verified": True, "matched_text": "Portugal borders Spain"}}
    items = {"claims": [{"id": "geo:C1", "statement": "Lisbon is the capital of Spain.", "evidence": [passage]}],
             "entities": [{"id": "geo:E1", "name": "Lisbon"}, {"id": "geo:E2", "name": "Spain"},
                          {"id": "geo:E3", "name": "Portugal"}], "relationships": [
        {"id": "geo:R1", "subject": "geo:E1", "predicate": "capital of", "object": "geo:E2", "claim_ids": ["geo:C1"],
         "provenance": {"file": "artifacts/geo/relationships.json", "pointer": "/relationships/0"}},
        {"id": "geo:R2", "subject": "geo:E3", "predicate": "borders", "object": "geo:E2", "claim_ids": ["geo:C1"]}]}
    [problem] = relationship_support_problems({"geo": {"contribution": {"items": items}}})
    assert (problem.rule, problem.file, problem.pointer, problem.is_error) == (
        "relationship.unsupported", "artifacts/geo/relationships.json", "/relationships/0", True)


@pytest.mark.parametrize("text, predicate, held", [
    ("Porto is a city in the north of Portugal and Spain is a large country.", "in", False),
    ("Porto is a city in the north of Portugal and Spain is a large country.", "is", False),
    ("Porto is a city in the north of Portugal and Spain is a large country.", "of", False),
    ("Porto is in Spain, the atlas says.", "in", True),
    ("Porto is a Spain, the atlas says.", "is-a", True),
])
def test_a_predicate_of_function_words_is_said_only_plainly(text: str, predicate: str, held: bool) -> None:
    assert support(text, predicate, ["Porto"], ["Spain"]).states is held


def test_a_retry_that_renames_an_entity_another_agents_relationship_names_is_rejected(session: SessionPaths) -> None:
    capital = _linked(session)
    renamed = [dict(e, name="Oporto", aliases=[]) if e["id"] == "E1" else e for e in PLACES]
    _geo(session, "geo", [capital], [], renamed)
    assert merge_pending(session) == {"geo": "rejected"}
    [problem] = _problems(session, "geo")
    assert problem["rule"] == "reference.support_lost" and "lacks its subject" in problem["message"]
    _geo(session, "geo", [capital], [], [dict(e, aliases=["Lisboa", "Lisbon"]) if e["id"] == "E1" else e
                                         for e in PLACES])  # another alias changes nothing it rests on
    assert merge_pending(session) == {"geo": "merged"}
