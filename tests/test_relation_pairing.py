"""A relation word joins the names it stands between, not every name of its sentence (graph/relation_pairing.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from orchestrator.cli import main
from orchestrator.graph.relation_support import support
from orchestrator.session.record import create_session
from tests.conftest import store_text, write_artifacts

TWO_CAPITALS = "Paris is the capital of France and Berlin is the capital of Germany."
NOT_STATED = [
    (TWO_CAPITALS, "Paris", "capital of", "Germany"),
    (TWO_CAPITALS, "Berlin", "capital of", "France"),
    ("Paris is the capital of France and Berlin is a city in Germany.", "Berlin", "capital of", "Germany"),
    ("Madrid is the capital of Spain, and Toledo is an old city of Portugal.", "Madrid", "capital of", "Portugal"),
    ("Madrid is the capital of Spain, and Lisbon of Portugal.", "Madrid", "capital of", "Portugal"),
    ("Lisbon is a city. Portugal has a capital.", "Lisbon", "capital of", "Portugal"),
    ("BERT outperforms ELMo on GLUE, and GPT outperforms BERT on SQuAD.", "GPT", "outperforms", "ELMo"),
    ("Aspirin reduced pain in adults, and statins reduced mortality in the elderly.", "Aspirin", "reduces",
     "mortality"),
    ("Berlin wanted to become the capital of France in 1940.", "Berlin", "capital of", "France"),
    ("The city planned to become the capital of Portugal; Lisbon tried to be the capital of Portugal.", "Lisbon",
     "capital of", "Portugal"),
    # a "that" clause its verb denies or doubts
    ("Critics deny that Berlin is the capital of Germany.", "Berlin", "capital of", "Germany"),
    ("Critics disputed that Berlin was the capital of Germany.", "Berlin", "capital of", "Germany"),
    ("Some scholars question that Berlin is the capital of Germany.", "Berlin", "capital of", "Germany"),
]
STATED = [
    (TWO_CAPITALS, "Paris", "capital of", "France"),
    (TWO_CAPITALS, "Berlin", "capital of", "Germany"),
    ("BERT outperforms ELMo on GLUE, and GPT outperforms BERT on SQuAD.", "GPT", "outperforms", "BERT"),
    ("BERT outperforms ELMo on GLUE, and GPT outperforms BERT on SQuAD.", "BERT", "outperforms", "ELMo"),
    ("Lisbon, which lies on the Tagus, is the capital of Portugal.", "Lisbon", "capital of", "Portugal"),
    ("Lisbon lies on the Tagus. It is the capital of Portugal.", "Lisbon", "capital of", "Portugal"),
    ("The capital of Portugal is Lisbon.", "Lisbon", "capital of", "Portugal"),
    ("Lisbon is the capital and largest city of Portugal.", "Lisbon", "capital of", "Portugal"),
    ("Lisbon is not the capital of Spain but of Portugal.", "Lisbon", "capital of", "Portugal"),
    ("Lisbon is the capital of the country, Portugal.", "Lisbon", "capital of", "Portugal"),
    ("We evaluate BERT on the GLUE benchmark.", "BERT", "evaluated on", "GLUE"),
    ("Aspirin reduced mortality in the trial.", "Aspirin", "reduces", "mortality"),
    # the denial denied asserts it
    ("Nobody denies that Berlin is the capital of Germany.", "Berlin", "capital of", "Germany"),
    ("Few historians doubt that Berlin is the capital of Germany.", "Berlin", "capital of", "Germany"),
    ("No one disputes that Berlin is the capital of Germany.", "Berlin", "capital of", "Germany"),
    ("The report does not dispute that Berlin is the capital of Germany.", "Berlin", "capital of", "Germany"),
    ("Reports show that Berlin is the capital of Germany.", "Berlin", "capital of", "Germany"),
]


@pytest.mark.parametrize(("text", "subject", "predicate", "obj"), NOT_STATED)
def test_names_joined_by_another_relation_word_do_not_state_it(text: str, subject: str, predicate: str,
                                                               obj: str) -> None:
    found = support(text, predicate, [subject], [obj])
    assert not found.states and found.unasserted, found


@pytest.mark.parametrize(("text", "subject", "predicate", "obj"), STATED)
def test_the_names_a_relation_word_joins_state_it(text: str, subject: str, predicate: str, obj: str) -> None:
    assert support(text, predicate, [subject], [obj]).states


def test_the_merge_says_which_pair_the_sentence_joins(tmp_path: Path) -> None:
    sessions = tmp_path / "sessions"
    session = create_session(sessions, "capitals", "test-mission")
    sha = store_text(session, TWO_CAPITALS + " Berlin wanted to become the capital of France in 1940.\n")
    entities = [{"id": f"E{n}", "name": name, "type": "place"}
                for n, name in enumerate(("Paris", "France", "Berlin", "Germany"), 1)]
    write_artifacts(session, "geo", {
        "sources.json": {"sources": [{"id": "S1", "type": "book", "title": "Atlas", "year": 2020,
                                      "url": "https://example.org/atlas", "content_sha256": sha}]},
        "claims.json": {"claims": [
            {"id": "C1", "statement": TWO_CAPITALS, "priority": "medium", "confidence": 0.8,
             "evidence": [{"source_id": "S1", "snippet": TWO_CAPITALS.rstrip("."), "locator": {"page": 1}}]},
            {"id": "C2", "statement": "Berlin wanted to become the capital of France.", "priority": "medium",
             "confidence": 0.8, "evidence": [{"source_id": "S1", "locator": {"page": 1},
                                              "snippet": "Berlin wanted to become the capital of France in 1940"}]}]},
        "entities.json": {"entities": entities},
        "relationships.json": {"relationships": [
            {"id": f"R{n}", "subject": s, "predicate": "capital of", "object": o, "claim_ids": [c]}
            for n, (s, o, c) in enumerate((("E1", "E2", "C1"), ("E1", "E4", "C1"), ("E3", "E4", "C1"),
                                           ("E3", "E2", "C2")), 1)]}})
    result = CliRunner().invoke(main, ["--sessions-dir", str(sessions), "process", str(session.root)])
    assert result.exit_code == 1, result.output
    doc = json.loads(session.retry_instructions("geo").read_text())
    problems = {p["pointer"]: p["message"] for f in doc["files"] for p in f["problems"]
                if p["rule"] == "relationship.unsupported"}
    assert sorted(problems) == ["/relationships/1", "/relationships/3"]  # Paris-France and Berlin-Germany stand
    assert "Paris --capital of--> Germany" in problems["/relationships/1"]
    assert "other names of the sentence" in problems["/relationships/1"]
    assert "wanted or tried ('wanted to')" in problems["/relationships/3"]
