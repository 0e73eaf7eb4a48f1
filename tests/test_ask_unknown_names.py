"""A name the graph lacks, however it is typed, must be said by the passage that answers (issue 23).

Readers type lowercase: "what is france the capital of?" names France as surely as "France" does. A content
word the graph has no entity for and that is no common English word (lowercase proper names, names with
digits, jargon) is the question's focus: a passage without it answers another question. Common words and
other forms of a passage's words ("largest", "cities", "inhabitants") are read as before.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from orchestrator.answers.graph import NodeIndex
from orchestrator.answers.relevance import focus_of
from orchestrator.cli import main
from orchestrator.model.layout import SessionPaths
from orchestrator.session.record import create_session
from tests.conftest import merge_pending, store_text, write_artifacts

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning:rdflib.*")

#: No Lisbon, no France: only other places are entities of this graph.
PLACES = [{"id": "E1", "name": "Madrid", "type": "city"}, {"id": "E2", "name": "Spain", "type": "country"},
          {"id": "E3", "name": "Portugal", "type": "country"}, {"id": "E4", "name": "Porto", "type": "city"}]
INDEX = NodeIndex.build({"session": "s", "sources": [], "claims": [], "relationships": [],
                         "entities": [dict(e, id=f"s:{e['id']}") for e in PLACES]})


@pytest.mark.parametrize("question, required", [
    ("What is france the capital of?", ["france"]),
    ("is lisbon the capital of france", ["lisbon", "france"]),
    ("what is the capital of italy", ["italy"]),
    ("What Is The Capital Of France?", ["France"]),  # a title: its names are read too
    ("how does bm25 rank passages?", ["bm25"]),  # a name with digits
    ("what did the a320 cost spain?", ["a320"]),
    ("how many covid-19 deaths did spain report?", ["covid-19"]),
    ("which graphene cells does porto make?", ["graphene"]),  # a word no dictionary has: the focus
    # common vocabulary, other forms of it, and the graph's own entities are not required
    ("what is the capital of spain", []),
    ("how many residents does madrid have?", []),
    ("which countries border spain?", []),
    ("what are the largest cities of portugal?", []),
    ("where was the biggest harbour built?", []),
    ("is porto in the north of portugal?", ["north"]),  # a qualifier, as before
    ("WHAT IS THE CAPITAL OF SPAIN?", []),
])
def test_a_name_the_graph_lacks_is_required_in_any_case(question: str, required: list[str]) -> None:
    focus = focus_of(question, INDEX)
    assert [group[0] for group in focus.required] == required


def test_a_word_the_sessions_passages_write_in_lower_case_is_its_vocabulary_not_a_name() -> None:
    passage = "The atlas draws on two survey datasets and maps France."
    index = NodeIndex.build({"session": "s", "sources": [{"id": "s:S1", "title": "Atlas"}], "relationships": [],
                             "entities": [dict(e, id=f"s:{e['id']}") for e in PLACES],
                             "claims": [{"id": "s:C1", "statement": passage, "evidence": [
                                 {"source_id": "s:S1", "verification": {"verified": True, "matched_text": passage}}]}]})
    assert focus_of("which dataset does the atlas draw on?", index).required == ()
    assert focus_of("which datasets does the atlas draw on?", INDEX).required == (("datasets",),)  # another session
    assert focus_of("what is france the capital of?", index).required == (("france",),)  # written "France" only


def test_a_required_lowercase_name_is_found_by_its_stems_and_lacking_it_answers_nothing() -> None:
    focus = focus_of("what is france the capital of?", INDEX)
    assert focus.part("Madrid is the capital of Spain.").confidence == 0.0
    assert "'france'" in focus.part("Madrid is the capital of Spain.").detail
    assert focus.part("Paris is the capital of France.").confidence == 1.0
    assert focus_of("how does bm25 rank passages?", INDEX).part("BM25 ranks passages by term weight.").confidence == 1.0
    assert focus_of("how do perovskites age?", INDEX).part("Perovskite cells age fast.").confidence > 0.0


TEXT = ("Atlas of Iberia.\fLisboa is the capital of Portugal and its largest city. Madrid is the capital of Spain. "
        "Portugal borders Spain to the east. Porto is a city in the north of Portugal. "
        "Madrid has about 3.3 million inhabitants. The atlas draws on two survey datasets.")


@pytest.fixture(scope="module")
def atlas(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, SessionPaths]:
    sessions = tmp_path_factory.mktemp("atlas") / "sessions"
    session = create_session(sessions, "Iberia", "test-mission")
    sha = store_text(session, TEXT)
    sentences = [s + "." for s in TEXT.split("\f")[1].rstrip(".").split(". ")]
    write_artifacts(session, "geo", {
        "sources.json": {"sources": [{"id": "S1", "type": "book", "title": "Atlas of Iberia", "year": 2020,
                                      "url": "https://example.org/atlas", "content_sha256": sha}]},
        "claims.json": {"claims": [{"id": f"C{n}", "statement": s, "priority": "high", "confidence": 0.9,
                                    "evidence": [{"source_id": "S1", "snippet": s.rstrip("."), "locator": {"page": 2}}]}
                                   for n, s in enumerate(sentences, 1)]},
        "entities.json": {"entities": PLACES}})
    assert merge_pending(session) == {"geo": "merged"}
    return sessions, session


def _ask(sessions: Path, session: SessionPaths, question: str) -> dict[str, Any]:
    result = CliRunner().invoke(main, ["--sessions-dir", str(sessions), "ask", str(session.root), question, "--json"],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return dict(json.loads(result.stdout))


@pytest.mark.parametrize("question", [
    "What is france the capital of?",
    "is lisbon the capital of france",
    "what is the capital of italy",
    "which city is the capital of germany?",
    "what is the population of toledo",
    "how many inhabitants does lisbon have?",  # Madrid's inhabitants are not Lisbon's
])
def test_a_lowercase_question_about_what_the_session_lacks_is_not_found(atlas: tuple[Path, SessionPaths],
                                                                        question: str) -> None:
    doc = _ask(*atlas, question)
    assert (doc["found"], doc["answer"], doc["confidence"]) == (False, "Not found in this session.", 0.0)


@pytest.mark.parametrize("question, quoted", [
    ("what is the capital of spain", "Madrid is the capital of Spain"),
    ("what is the capital of portugal?", "Lisboa is the capital of Portugal"),
    ("what is lisboa the capital of?", "Lisboa is the capital of Portugal"),  # no entity, but the passage says it
    ("how many inhabitants does madrid have?", "3.3 million"),
    ("what does portugal border to the east?", "Portugal borders Spain to the east"),
    ("what is the largest city of portugal?", "largest city"),
    ("which datasets does the atlas draw on?", "survey datasets"),  # no dictionary word, but the session's
])
def test_a_lowercase_question_the_session_answers_stays_answered(atlas: tuple[Path, SessionPaths], question: str,
                                                                 quoted: str) -> None:
    doc = _ask(*atlas, question)
    assert doc["found"] is True and quoted in doc["answer"] and doc["confidence"] >= 0.8, doc["answer"]


OTHER_POPULATION = [
    ("Does the drug reduce systolic blood pressure in children?", "The drug reduced systolic blood pressure by "
                                                                  "10 mmHg in adults over 65."),
    ("Does the compound extend lifespan in humans?", "In mice, the compound extended lifespan by 20 percent."),
    ("Does the vaccine protect women?", "The vaccine protected 90 percent of the men in the trial."),
    ("Is the treatment safe for infants?", "The treatment was safe in elderly patients."),
]
SAME_OR_NO_POPULATION = [
    ("Does the drug reduce systolic blood pressure in children?", "The drug reduced systolic blood pressure by "
                                                                  "10 mmHg in children aged 6 to 12."),
    ("Does the drug reduce systolic blood pressure?", "The drug reduced systolic blood pressure in adults over 65."),
    ("Does the compound extend lifespan in humans?", "The compound extended lifespan in mice and in humans."),
]


@pytest.mark.parametrize(("question", "passage"), OTHER_POPULATION)
def test_a_finding_in_another_population_does_not_answer(question: str, passage: str) -> None:
    part = focus_of(question, INDEX).part(passage)
    assert part.confidence == 0.0 and "population" in part.detail, part


@pytest.mark.parametrize(("question", "passage"), SAME_OR_NO_POPULATION)
def test_a_finding_in_the_asked_population_or_with_none_asked_still_answers(question: str, passage: str) -> None:
    assert focus_of(question, INDEX).part(passage).confidence >= 0.8
