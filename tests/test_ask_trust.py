"""`ask` cites only what answers: a relationship's passage must state it, a passage must answer the question."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from orchestrator.answers.graph import NodeIndex
from orchestrator.answers.relevance import focus_of
from orchestrator.answers.validate import Validator
from orchestrator.cli import main
from orchestrator.model.layout import SessionPaths
from orchestrator.session.record import create_session
from tests.conftest import merge_pending, store_text, write_artifacts
from tests.helpers.ask_session import A, reactor_session

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning:rdflib.*")


def _claim(cid: str, text: str, entity_ids: list[str]) -> dict[str, Any]:
    return {"id": cid, "statement": text, "entity_ids": entity_ids,
            "evidence": [{"source_id": "s:S1", "verification": {"verified": True, "matched_text": text}}]}


def _graph(relationship_claim: str) -> NodeIndex:
    """A view as an older version (or a hand edit) could leave it: the merge check never ran on it."""
    return NodeIndex.build({
        "session": "s",
        "sources": [{"id": "s:S1", "title": "Atlas"}],
        "entities": [{"id": "s:E1", "name": "Lisbon", "aliases": ["Lisboa"]}, {"id": "s:E2", "name": "Spain"},
                     {"id": "s:E3", "name": "Portugal"}],
        "claims": [_claim("s:C1", relationship_claim, ["s:E1", "s:E2"]),
                   _claim("s:C2", "Lisbon has about 545,000 inhabitants.", ["s:E1"])],
        "relationships": [{"id": "s:R1", "subject": "s:E1", "predicate": "capital of", "object": "s:E2",
                           "claim_ids": ["s:C1"]}],
    })


@pytest.mark.parametrize("passage, confidence, status", [
    ("The sky is blue on clear days.", 0.0, "dropped"),  # the case: cited at 1.00 before
    ("Lisbon is a large city close to Spain.", 0.4, "flagged"),  # both ends, but not the relation
    ("Lisboa is the capital of Spain, the atlas says.", 1.0, "ok"),  # by an alias, relation said
])
def test_a_relationship_citation_needs_a_passage_that_states_it(passage: str, confidence: float, status: str) -> None:
    [sentence] = Validator(_graph(passage)).check("Lisbon is the capital of Spain [@s:R1].")
    [citation] = sentence.citations
    assert (citation.confidence, sentence.status) == (confidence, status)
    stated = next(p for p in citation.parts if p.check == "stated")
    assert stated.confidence == confidence and citation.passage is not None and citation.passage.text == passage


def test_a_relation_inferred_between_entities_rests_only_on_stated_relationships() -> None:
    [unstated] = Validator(_graph("The sky is blue on clear days.")).check("Lisbon is in Spain [@s:E1; @s:E2].")
    [stated] = Validator(_graph("Lisbon is the capital of Spain.")).check("Lisbon is in Spain [@s:E1; @s:E2].")
    assert unstated.status == "dropped" and "no chain" in unstated.citations[1].parts[-1].detail
    assert stated.citations[1].trace[0].rests_on == "s:R1"


def test_the_question_has_a_topic_and_a_focus() -> None:
    index = _graph("Lisbon is the capital of Spain.")
    focus = focus_of("What is Lisbon the capital of?", index)
    assert focus.topics == (("Lisbon", "Lisboa"),) and focus.terms == {"capit"}
    assert focus.part("Lisbon has about 545,000 inhabitants.").confidence == 0.0
    assert focus.part("Madrid is the capital of Spain.").confidence == 0.0  # not about Lisbon
    assert focus.part("Lisboa is the capital of Portugal.").confidence == 1.0
    many = focus_of("How many residents does Lisbon have?", index)
    assert many.terms == {"peopl"} and many.part("Lisbon has about 545,000 inhabitants.").confidence == 1.0


def test_an_exact_quote_that_does_not_answer_is_dropped() -> None:
    index = _graph("Lisbon is the capital of Spain.")
    [answer] = Validator(index, "What is Lisbon the capital of?").check("Lisbon has about 545,000 inhabitants [@s:C2].")
    [citation] = answer.citations
    assert answer.status == "dropped" and citation.match == "not-found"
    assert [p.check for p in citation.parts] == ["evidence", "support", "relevance"]
    assert citation.parts[1].confidence == 1.0 and citation.parts[2].confidence == 0.0


def _ask(sessions: Path, session: SessionPaths, question: str) -> dict[str, Any]:
    result = CliRunner().invoke(main, ["--sessions-dir", str(sessions), "ask", str(session.root), question, "--json"],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return dict(json.loads(result.stdout))


def test_naming_an_entity_is_not_an_answer_end_to_end(tmp_path: Path) -> None:
    sessions = tmp_path / "sessions"
    session = create_session(sessions, "Lisbon", "test-mission")
    text = "Atlas of Iberia.\fLisbon has about 545,000 inhabitants. Lisbon lies on the Tagus estuary."
    sha = store_text(session, text)
    claims = [{"id": f"C{n}", "statement": s, "priority": "medium", "confidence": 0.8, "entity_ids": ["E1"],
               "evidence": [{"source_id": "S1", "snippet": s.rstrip("."), "locator": {"page": 2}}]}
              for n, s in enumerate(["Lisbon has about 545,000 inhabitants.", "Lisbon lies on the Tagus estuary."], 1)]
    write_artifacts(session, "atlas", {
        "sources.json": {"sources": [{"id": "S1", "type": "book", "title": "Atlas of Iberia", "content_sha256": sha}]},
        "claims.json": {"claims": claims},
        "entities.json": {"entities": [{"id": "E1", "name": "Lisbon", "type": "city"}]}})
    assert merge_pending(session) == {"atlas": "merged"}
    doc = _ask(sessions, session, "What is Lisbon the capital of?")
    assert (doc["found"], doc["answer"], doc["confidence"]) == (False, "Not found in this session.", 0.0)
    doc = _ask(sessions, session, "How many inhabitants does Lisbon have?")
    assert doc["found"] is True and "545,000" in doc["answer"] and doc["confidence"] == 1.0


def test_a_reactor_question_the_notes_do_not_answer_is_not_found(tmp_path: Path) -> None:
    sessions = tmp_path / "sessions"
    reactor = reactor_session(sessions)
    doc = _ask(sessions, reactor, "What is the top speed of the Lumen reactor?")
    assert doc["found"] is False and doc["answer"] == "Not found in this session."
    doc = _ask(sessions, reactor, "How is the Lumen reactor cooled?")
    assert doc["found"] is True and {c["node_id"] for c in doc["citations"] if c["number"]} == {f"{A}:C2"}


IBERIA = ("Lisboa is the capital of Portugal and its largest city. Lisbon is not the capital of Spain. "
          "Madrid is the capital of Spain. The sky is blue on clear days. Portugal borders Spain to the east. "
          "Porto is a city in the north of Portugal and Spain is a large country.")


@pytest.fixture(scope="module")
def iberia(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, SessionPaths]:
    """The reviewer's session (issue 23): claims about Lisbon, Portugal and Spain, one relationship."""
    sessions = tmp_path_factory.mktemp("iberia") / "sessions"
    session = create_session(sessions, "Iberia", "test-mission")
    sha = store_text(session, IBERIA)
    sentences = [s + "." for s in IBERIA.rstrip(".").split(". ")]
    claims = [{"id": f"C{n}", "statement": s, "priority": "high", "confidence": 0.9,
               "evidence": [{"source_id": "S1", "snippet": s.rstrip(".")}]} for n, s in enumerate(sentences, 1)]
    write_artifacts(session, "geo", {
        "sources.json": {"sources": [{"id": "S1", "type": "web-page", "title": "Geo", "url": "https://example.org/geo",
                                      "content_sha256": sha}]},
        "claims.json": {"claims": claims},
        "entities.json": {"entities": [
            {"id": "E1", "name": "Lisbon", "type": "city", "aliases": ["Lisboa"]},
            {"id": "E2", "name": "Spain", "type": "country"}, {"id": "E3", "name": "Portugal", "type": "country"},
            {"id": "E4", "name": "Madrid", "type": "city"}, {"id": "E5", "name": "Porto", "type": "city"}]},
        "relationships.json": {"relationships": [
            {"id": "R1", "subject": "E1", "predicate": "capital of", "object": "E3", "claim_ids": ["C1"]}]}})
    assert merge_pending(session) == {"geo": "merged"}
    return sessions, session


@pytest.mark.parametrize("question", [
    "What is the capital of France?",  # a place the session has nothing on: named, not an entity
    "Which city is the capital of Italy?",
    "What does Portugal border to the west?",  # the passage says east
    "Is Porto in the south of Portugal?",  # the passage says north
    "What is the population of Toledo?",
])
def test_a_question_whose_focus_no_passage_says_is_not_found(iberia: tuple[Path, SessionPaths],
                                                             question: str) -> None:
    doc = _ask(*iberia, question)
    assert (doc["found"], doc["answer"], doc["confidence"]) == (False, "Not found in this session.", 0.0)


@pytest.mark.parametrize("question, quoted", [
    ("What is the capital of Portugal?", "Lisboa is the capital of Portugal"),
    ("What is the capital of Spain?", "Madrid is the capital of Spain"),
    ("What does Portugal border to the east?", "Portugal borders Spain to the east"),
    ("Where is Porto?", "Porto is a city in the north of Portugal"),
    ("Is Porto in the north of Portugal?", "Porto is a city in the north of Portugal"),
])
def test_a_question_the_session_answers_stays_answered(iberia: tuple[Path, SessionPaths], question: str,
                                                       quoted: str) -> None:
    doc = _ask(*iberia, question)
    assert doc["found"] is True and quoted in doc["answer"] and doc["confidence"] >= 0.8


def test_required_focus_words_are_names_outside_the_graph_and_qualifiers() -> None:
    index = _graph("Lisbon is the capital of Spain.")
    focus = focus_of("What is the capital of France?", index)
    assert focus.required == (("France",),)
    assert focus.part("Lisbon is the capital of Spain.").confidence == 0.0
    assert "'France'" in focus.part("Lisbon is the capital of Spain.").detail
    west = focus_of("What does Portugal border to the west?", index)
    assert west.part("Portugal borders Spain to the east.").confidence == 0.0
    assert west.part("Portugal borders the Atlantic to the west.").confidence == 1.0
    assert west.part("Its western border is the Atlantic, Portugal says.").confidence > 0.0  # same side
    assert focus_of("What Is The Capital Of Portugal?", index).required == ()  # a title: no names read
    assert focus_of("What is Lisbon the capital of?", index).required == ()  # Lisbon is an entity


def test_a_relationship_whose_passage_says_it_the_other_way_round_is_flagged() -> None:
    index = NodeIndex.build({
        "session": "s", "sources": [{"id": "s:S1", "title": "Atlas"}],
        "entities": [{"id": "s:E1", "name": "Lisbon"}, {"id": "s:E3", "name": "Portugal"}],
        "claims": [_claim("s:C1", "Lisbon is the capital of Portugal.", ["s:E1", "s:E3"])],
        "relationships": [{"id": "s:R1", "subject": "s:E3", "predicate": "capital of", "object": "s:E1",
                           "claim_ids": ["s:C1"]}]})
    [sentence] = Validator(index).check("Portugal is the capital of Lisbon [@s:R1].")
    stated = next(p for p in sentence.citations[0].parts if p.check == "stated")
    assert stated.confidence == 0.4 and "other way round" in stated.detail and sentence.status == "flagged"
