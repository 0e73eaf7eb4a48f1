"""A passage supports a relationship only where it asserts it (issue 23): not negated, not said of another
entity with this one set apart ("Madrid, not Lisbon, is ..."), not asked, supposed or relegated to the past.
Both sides are tested: each refused wording has a sibling that truly states the relation and must still count.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from orchestrator.answers.graph import NodeIndex
from orchestrator.answers.validate import Validator
from orchestrator.cli import main
from orchestrator.graph.relation_support import support
from orchestrator.session.record import create_session
from tests.conftest import store_text, write_artifacts

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning:rdflib.*")

LISBON, MADRID, PORTO, TOLEDO = ["Lisbon", "Lisboa"], ["Madrid"], ["Porto"], ["Toledo"]
SPAIN, PORTUGAL = ["Spain"], ["Portugal"]
METFORMIN, PLACEBO, HBA1C, MORTALITY = ["metformin"], ["placebo"], ["HbA1c"], ["mortality"]
WEIGHT = ["body weight"]
REACTOR, SALT, WATER = ["Lumen reactor"], ["molten salt"], ["water"]
DIET, SMOKING, CANCER, ASPIRIN, STROKE = ["diet"], ["smoking"], ["lung cancer"], ["aspirin"], ["stroke"]

REFUSED = [
    # said of another entity, this one set apart
    ("Madrid, not Lisbon, is the capital of Spain.", LISBON, "capital of", SPAIN),
    ("Madrid and not Lisbon is the capital of Spain.", LISBON, "capital of", SPAIN),
    ("Madrid rather than Lisbon is the capital of Spain.", LISBON, "capital of", SPAIN),
    ("Madrid, instead of Lisbon, became the capital of Spain.", LISBON, "capital of", SPAIN),
    ("Unlike Lisbon, Madrid is the capital of Spain.", LISBON, "capital of", SPAIN),
    ("Neither Lisbon nor Porto is the capital of Spain.", LISBON, "capital of", SPAIN),
    ("Neither Lisbon nor Porto is the capital of Spain.", PORTO, "capital of", SPAIN),
    ("The capital of Spain is Madrid, not Lisbon.", LISBON, "capital of", SPAIN),
    ("The capital of Spain is not Lisbon but Madrid.", LISBON, "capital of", SPAIN),
    ("Lisbon is the capital not of Spain but of Portugal.", LISBON, "capital of", SPAIN),
    ("Lisbon is the capital of Portugal, not of Spain.", LISBON, "capital of", SPAIN),
    ("Metformin, but not placebo, reduced HbA1c.", PLACEBO, "reduces", HBA1C),
    ("Metformin, as opposed to placebo, reduced HbA1c.", PLACEBO, "reduces", HBA1C),
    ("The Lumen reactor is cooled by molten salt rather than water.", REACTOR, "cooled-by", WATER),
    # negated
    ("Lisbon is not the capital of Spain.", LISBON, "capital of", SPAIN),
    ("Lisbon isn't the capital of Spain.", LISBON, "capital of", SPAIN),
    ("Lisbon has never been the capital of Spain.", LISBON, "capital of", SPAIN),
    ("Lisbon is not, and never was, the capital of Spain.", LISBON, "capital of", SPAIN),
    ("Metformin did not significantly reduce mortality.", METFORMIN, "reduces", MORTALITY),
    ("Metformin was not found to reduce mortality in this cohort.", METFORMIN, "reduces", MORTALITY),
    ("Compared with metformin, placebo did not reduce HbA1c.", PLACEBO, "reduces", HBA1C),
    ("Metformin did not increase body weight but reduced HbA1c.", METFORMIN, "increases", WEIGHT),
    ("It is false that Lisbon is the capital of Spain.", LISBON, "capital of", SPAIN),
    ("It is not true that Lisbon is the capital of Spain.", LISBON, "capital of", SPAIN),
    ("It is a common misconception that Lisbon is the capital of Spain.", LISBON, "capital of", SPAIN),
    ("Lisbon was wrongly believed to be the capital of Spain.", LISBON, "capital of", SPAIN),
    ("It was wrongly reported that Lisbon is the capital of Spain.", LISBON, "capital of", SPAIN),
    ("It is not the case that Lisbon is the capital of Spain.", LISBON, "capital of", SPAIN),
    ("Madrid is hardly the capital of Portugal.", MADRID, "capital of", PORTUGAL),
    ("Madrid is by no means the capital of Portugal.", MADRID, "capital of", PORTUGAL),
    ("Madrid is far from being the capital of Portugal.", MADRID, "capital of", PORTUGAL),
    ("Metformin failed to reduce mortality.", METFORMIN, "reduces", MORTALITY),
    ("Diet is unlikely to cause lung cancer.", DIET, "causes", CANCER),
    ("There is no evidence that diet causes lung cancer.", DIET, "causes", CANCER),
    ("We could not confirm that diet causes lung cancer.", DIET, "causes", CANCER),
    ("It is not clear that metformin reduces mortality.", METFORMIN, "reduces", MORTALITY),
    ("Lisbon is not the capital of Spain but of Portugal.", LISBON, "capital of", SPAIN),
    # denied by an elided clause after the mention
    ("Lisbon is the capital of Portugal, whereas Madrid is not.", MADRID, "capital of", PORTUGAL),
    ("Lisbon is the capital of Portugal. Madrid is not.", MADRID, "capital of", PORTUGAL),
    # a generic predicate is said by naming both ends, but not where the link is denied
    ("Diet was not associated with lung cancer.", DIET, "associated with", CANCER),
    ("Smoking, but not diet, was linked to lung cancer.", DIET, "related-to", CANCER),
    # only of the past
    ("Lisbon is no longer the capital of Spain.", LISBON, "capital of", SPAIN),
    ("Toledo was formerly the capital of Spain.", TOLEDO, "capital of", SPAIN),
    ("Toledo was once the capital of Spain.", TOLEDO, "capital of", SPAIN),
    ("Toledo, the former capital of Spain, lies on the Tagus.", TOLEDO, "capital of", SPAIN),
    ("Toledo used to be the capital of Spain.", TOLEDO, "capital of", SPAIN),
    ("The capital of Spain is no longer Toledo.", TOLEDO, "capital of", SPAIN),
    # supposed or asked
    ("If Lisbon were the capital of Spain, the border would move.", LISBON, "capital of", SPAIN),
    ("Were Lisbon the capital of Spain, trade would shift west.", LISBON, "capital of", SPAIN),
    ("Under the plan, Lisbon would be the capital of Spain.", LISBON, "capital of", SPAIN),
    ("It is unclear whether Lisbon is the capital of Spain.", LISBON, "capital of", SPAIN),
    ("Suppose Lisbon is the capital of Spain.", LISBON, "capital of", SPAIN),
    ("Is Lisbon the capital of Spain?", LISBON, "capital of", SPAIN),
    # only someone's claim, a rumour, or a belief few hold
    ("Critics claimed that Porto is the capital of Portugal.", PORTO, "capital of", PORTUGAL),
    ("Rumours that Porto is the capital of Portugal were false.", PORTO, "capital of", PORTUGAL),
    ("Few believe that Porto is the capital of Portugal.", PORTO, "capital of", PORTUGAL),
    ("Porto is allegedly the capital of Portugal.", PORTO, "capital of", PORTUGAL),
    ("No survey has shown that aspirin reduces the risk of stroke.", ASPIRIN, "reduces", STROKE),
    # a passage that denies in one sentence and says something else in another still does not state it
    ("Madrid, not Lisbon, is the capital of Spain. Lisbon is the capital of Portugal.", LISBON, "capital of", SPAIN),
]

STATED = [
    ("Lisbon, not Madrid, is the capital of Portugal.", LISBON, "capital of", PORTUGAL),
    ("Madrid, not Lisbon, is the capital of Spain.", MADRID, "capital of", SPAIN),
    ("Lisbon, and not Madrid, is the capital of Portugal.", LISBON, "capital of", PORTUGAL),
    ("Madrid and not Lisbon is the capital of Spain.", MADRID, "capital of", SPAIN),
    ("Lisbon is the capital of Portugal, not Spain.", LISBON, "capital of", PORTUGAL),
    ("Lisbon is the capital not of Spain but of Portugal.", LISBON, "capital of", PORTUGAL),
    ("The capital of Spain is Madrid, not Lisbon.", MADRID, "capital of", SPAIN),
    ("The capital of Spain is not Lisbon but Madrid.", MADRID, "capital of", SPAIN),
    ("Unlike Porto, Lisbon is the capital of Portugal.", LISBON, "capital of", PORTUGAL),
    ("Neither Porto nor Braga is the capital of Portugal; Lisbon is the capital of Portugal.", LISBON,
     "capital of", PORTUGAL),
    ("Madrid, rather than Toledo, became the capital of Spain in 1561.", MADRID, "capital of", SPAIN),
    ("Lisbon is not only the capital of Portugal but also its largest city.", LISBON, "capital of", PORTUGAL),
    ("Although Porto is older, Lisbon is the capital of Portugal.", LISBON, "capital of", PORTUGAL),
    ("Lisbon, which is not far from the coast, is the capital of Portugal.", LISBON, "capital of", PORTUGAL),
    ("Toledo was formerly the capital of Spain; Madrid is the capital of Spain today.", MADRID, "capital of", SPAIN),
    ("Lisbon was the capital of Portugal in 1900.", LISBON, "capital of", PORTUGAL),  # the past tense alone
    ("Lisbon is not the capital of Spain but of Portugal.", LISBON, "capital of", PORTUGAL),
    ("Lisbon is the capital of Portugal, whereas Madrid is not.", LISBON, "capital of", PORTUGAL),
    ("There is no doubt that smoking causes lung cancer.", SMOKING, "causes", CANCER),
    ("It is not surprising that metformin reduces HbA1c.", METFORMIN, "reduces", HBA1C),
    ("Studies that did not include children found that aspirin reduces stroke risk.", ASPIRIN, "reduces", STROKE),
    ("Diet was associated with lung cancer.", DIET, "associated with", CANCER),
    ("False positives were reduced by the new test.", ["new test"], "reduces", ["false positives"]),
    ("It was wrongly reported that Madrid is small; Madrid is the capital of Spain.", MADRID, "capital of", SPAIN),
    ("Diet and lung cancer appear together in the cohort.", DIET, "associated with", CANCER),
    ("Smoking, but not diet, was linked to lung cancer.", SMOKING, "related-to", CANCER),
    # hedged: a source's own hedge still states the relation (its claim's confidence carries the doubt)
    ("Lisbon may be the capital of Portugal.", LISBON, "capital of", PORTUGAL),
    ("Metformin probably reduces mortality in older patients.", METFORMIN, "reduces", MORTALITY),
    ("Our results suggest that metformin reduces mortality.", METFORMIN, "reduces", MORTALITY),
    # paper-like sentences
    ("Metformin significantly reduced HbA1c compared with placebo (p < 0.001).", METFORMIN, "reduces", HBA1C),
    ("In contrast to placebo, metformin reduced HbA1c by 1.2%.", METFORMIN, "reduces", HBA1C),
    ("Metformin, but not placebo, reduced HbA1c.", METFORMIN, "reduces", HBA1C),
    ("Metformin did not increase body weight but reduced HbA1c.", METFORMIN, "reduces", HBA1C),
    ("Not surprisingly, metformin reduced HbA1c in all arms.", METFORMIN, "reduces", HBA1C),
    ("Patients without diabetes who took metformin had reduced mortality.", METFORMIN, "reduces", MORTALITY),
    ("We found that the Lumen reactor is cooled by molten salt rather than water.", REACTOR, "cooled-by", SALT),
    ("Unlike water-cooled designs, the Lumen reactor is cooled by molten salt.", REACTOR, "cooled-by", SALT),
    ("Molten salt cooling does not require high pressure.", ["molten salt cooling"], "does-not-require",
     ["high pressure"]),
]


@pytest.mark.parametrize("text, subject, predicate, obj", REFUSED)
def test_a_passage_that_does_not_assert_the_relation_does_not_state_it(text: str, subject: list[str],
                                                                      predicate: str, obj: list[str]) -> None:
    found = support(text, predicate, subject, obj)
    assert not found.states, found
    assert found.missing(), "a refusal says what is missing"


@pytest.mark.parametrize("text, subject, predicate, obj", STATED)
def test_a_passage_that_asserts_the_relation_states_it(text: str, subject: list[str], predicate: str,
                                                       obj: list[str]) -> None:
    found = support(text, predicate, subject, obj)
    assert found.states, found


@pytest.mark.parametrize("text, why", [
    ("Madrid, not Lisbon, is the capital of Spain.", "names 'Lisbon' only to set it apart ('not lisbon')"),
    ("Lisbon is no longer the capital of Spain.", "says it only negated ('no longer')"),
    ("Is Lisbon the capital of Spain?", "only asks it"),
    ("If Lisbon were the capital of Spain, trade would move.", "only supposes it ('if')"),
    ("Toledo was formerly the capital of Spain.", "says it only of the past ('formerly')"),
])
def test_a_refusal_says_why(text: str, why: str) -> None:
    subject = TOLEDO if text.startswith("Toledo") else LISBON
    assert why in " ".join(support(text, "capital of", subject, SPAIN).missing())


# -- black-box: the merge (`cconductor process`) and `ask` ----------------------------------------------------------

ATLAS = ("Atlas notes.\fMadrid, not Lisbon, is the capital of Spain. Lisbon, and not Porto, is the capital of "
         "Portugal. Toledo was formerly the capital of Spain.")
CLAIMS = ["Madrid, not Lisbon, is the capital of Spain", "Lisbon, and not Porto, is the capital of Portugal",
          "Toledo was formerly the capital of Spain"]
ENTITIES = [{"id": "E1", "name": "Lisbon", "type": "city"}, {"id": "E2", "name": "Spain", "type": "country"},
            {"id": "E3", "name": "Portugal", "type": "country"}, {"id": "E4", "name": "Madrid", "type": "city"},
            {"id": "E5", "name": "Toledo", "type": "city"}]


def _submit(tmp_path: Path, relationships: list[dict[str, Any]]) -> tuple[Path, Any]:
    sessions = tmp_path / "sessions"
    session = create_session(sessions, "Iberian capitals", "test-mission")
    sha = store_text(session, ATLAS)
    write_artifacts(session, "geo", {
        "sources.json": {"sources": [{"id": "S1", "type": "book", "title": "Atlas", "year": 2020,
                                      "url": "https://example.org/atlas", "content_sha256": sha}]},
        "claims.json": {"claims": [{"id": f"C{n}", "statement": s + ".", "priority": "medium", "confidence": 0.8,
                                    "evidence": [{"source_id": "S1", "snippet": s, "locator": {"page": 2}}]}
                                   for n, s in enumerate(CLAIMS, 1)]},
        "entities.json": {"entities": ENTITIES},
        "relationships.json": {"relationships": relationships}})
    return sessions, session


def _rel(rid: str, subject: str, obj: str, claim: str) -> dict[str, Any]:
    return {"id": rid, "subject": subject, "predicate": "capital of", "object": obj, "claim_ids": [claim]}


def test_the_merge_rejects_a_relationship_its_passage_only_contrasts_and_says_why(tmp_path: Path) -> None:
    sessions, session = _submit(tmp_path, [_rel("R1", "E4", "E2", "C1"), _rel("R2", "E1", "E2", "C1"),
                                           _rel("R3", "E1", "E3", "C2"), _rel("R4", "E5", "E2", "C3")])
    result = CliRunner().invoke(main, ["--sessions-dir", str(sessions), "process", str(session.root)])
    assert result.exit_code == 1, result.output
    doc = json.loads(session.retry_instructions("geo").read_text())
    problems = {p["pointer"]: p for f in doc["files"] for p in f["problems"] if p["rule"] == "relationship.unsupported"}
    assert sorted(problems) == ["/relationships/1", "/relationships/3"]  # R1 and R3 are stated
    lisbon = problems["/relationships/1"]
    assert [f["path"] for f in doc["files"] if lisbon in f["problems"]] == ["artifacts/geo/relationships.json"]
    assert "Lisbon --capital of--> Spain" in lisbon["message"]
    assert "C1" in lisbon["message"] and "names 'Lisbon' only to set it apart ('not lisbon')" in lisbon["message"]
    assert "negated, contrasted" in lisbon["hint"] and "claim_ids" in lisbon["hint"]
    assert "says it only of the past ('formerly')" in problems["/relationships/3"]["message"]
    # the fix the instruction asks for merges: drop the relationships no passage asserts
    write_artifacts(session, "geo", {"relationships.json": {"relationships": [
        _rel("R1", "E4", "E2", "C1"), _rel("R3", "E1", "E3", "C2")]}}, lock=False)
    for command in ("retry", "process"):
        args = [str(session.root), "geo"] if command == "retry" else [str(session.root)]
        result = CliRunner().invoke(main, ["--sessions-dir", str(sessions), command, *args])
        assert result.exit_code == 0, result.output
    graph = json.loads(session.kg_json.read_text())
    assert sorted(r["id"] for r in graph["relationships"]) == ["geo:R1", "geo:R3"]


def _claim(cid: str, text: str) -> dict[str, Any]:
    return {"id": cid, "statement": text, "entity_ids": ["s:E1", "s:E2"],
            "evidence": [{"source_id": "s:S1", "verification": {"verified": True, "matched_text": text}}]}


@pytest.mark.parametrize("passage, confidence", [
    ("Madrid, not Lisbon, is the capital of Spain.", 0.0),
    ("Lisbon is no longer the capital of Spain.", 0.0),
    ("Is Lisbon the capital of Spain?", 0.0),
    ("Lisbon, and not Madrid, is the capital of Spain.", 1.0),
])
def test_ask_does_not_cite_a_relationship_its_passage_contrasts_or_negates(passage: str, confidence: float) -> None:
    """A graph merged before the check (or by an older version): `ask` judges the passage itself."""
    index = NodeIndex.build({
        "session": "s", "sources": [{"id": "s:S1", "title": "Atlas"}],
        "entities": [{"id": "s:E1", "name": "Lisbon"}, {"id": "s:E2", "name": "Spain"}],
        "claims": [_claim("s:C1", passage)],
        "relationships": [{"id": "s:R1", "subject": "s:E1", "predicate": "capital of", "object": "s:E2",
                           "claim_ids": ["s:C1"]}]})
    [sentence] = Validator(index).check("Lisbon is the capital of Spain [@s:R1].")
    stated = next(p for p in sentence.citations[0].parts if p.check == "stated")
    assert stated.confidence == confidence, stated
    assert sentence.confidence == confidence or confidence == 1.0
    if not confidence:
        assert sentence.status == "dropped" and "does not assert" in stated.detail
    [inferred] = Validator(index).check("Lisbon is in Spain [@s:E1; @s:E2].")  # no chain rests on it either
    assert (inferred.status == "dropped") is (confidence == 0.0)


@pytest.fixture(scope="module")
def contrasted(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any]:
    sessions, session = _submit(tmp_path_factory.mktemp("contrast"), [_rel("R1", "E4", "E2", "C1")])
    result = CliRunner().invoke(main, ["--sessions-dir", str(sessions), "process", str(session.root)])
    assert result.exit_code == 0, result.output
    return sessions, session


@pytest.mark.parametrize("question, found, quoted", [
    ("What is Lisbon the capital of?", True, "Lisbon, and not Porto, is the capital of Portugal"),
    ("What is Porto the capital of?", False, ""),  # the only passage naming Porto sets it apart
    ("what is porto the capital of?", False, ""),
    ("Is Lisbon the capital of Spain?", True, "Madrid, not Lisbon, is the capital of Spain"),  # a denial answers
    ("What is Madrid the capital of?", True, "Madrid, not Lisbon, is the capital of Spain"),
    ("What is the capital of Portugal?", True, "Lisbon, and not Porto, is the capital of Portugal"),
])
def test_ask_answers_with_a_passage_that_speaks_of_the_topic_not_one_that_sets_it_apart(
        contrasted: tuple[Path, Any], question: str, found: bool, quoted: str) -> None:
    sessions, session = contrasted
    result = CliRunner().invoke(main, ["--sessions-dir", str(sessions), "ask", str(session.root), question, "--json"],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["found"] is found and quoted in doc["answer"], doc["answer"]
    if question.startswith("What is Lisbon"):
        assert "Madrid, not Lisbon" not in doc["answer"]
    if not found:
        assert (doc["answer"], doc["confidence"]) == ("Not found in this session.", 0.0)
