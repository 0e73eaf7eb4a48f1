"""`ask` answers the question the right way round (answers/direction.py, issue 23).

"What is the capital of Lisbon?" and "What is Portugal the capital of?" were both answered "Lisbon is the
capital of Portugal" at confidence 1.00: the passage names the question's entity and says "capital", but
answers another question. "Is Madrid the capital of Portugal?" was answered with a passage that never
names Portugal.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from orchestrator.answers.direction import turned_round
from orchestrator.cli import main
from orchestrator.session.record import create_session
from tests.conftest import store_text, write_artifacts

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning:rdflib.*")

ATLAS = "Lisbon is the capital of Portugal. Madrid is the capital of España. Porto lies on the Douro.\n"
CLAIMS = ["Lisbon is the capital of Portugal", "Madrid is the capital of España", "Porto lies on the Douro"]
ENTITIES = [{"id": "E1", "name": "Lisbon", "type": "city"}, {"id": "E2", "name": "Portugal", "type": "country"},
            {"id": "E3", "name": "Madrid", "type": "city"},
            {"id": "E4", "name": "Spain", "type": "country", "aliases": ["España"]},
            {"id": "E5", "name": "Porto", "type": "city"}]


@pytest.fixture(scope="module")
def atlas(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any]:
    sessions = tmp_path_factory.mktemp("direction") / "sessions"
    session = create_session(sessions, "Iberian capitals", "test-mission")
    sha = store_text(session, ATLAS)
    write_artifacts(session, "geo", {
        "sources.json": {"sources": [{"id": "S1", "type": "book", "title": "Atlas", "year": 2020,
                                      "url": "https://example.org/atlas", "content_sha256": sha}]},
        "claims.json": {"claims": [{"id": f"C{n}", "statement": s + ".", "priority": "medium", "confidence": 0.8,
                                    "evidence": [{"source_id": "S1", "snippet": s, "locator": {"page": 1}}]}
                                   for n, s in enumerate(CLAIMS, 1)]},
        "entities.json": {"entities": ENTITIES},
        "relationships.json": {"relationships": []}})
    result = CliRunner().invoke(main, ["--sessions-dir", str(sessions), "process", str(session.root)])
    assert result.exit_code == 0, result.output
    return sessions, session


@pytest.mark.parametrize("question, quoted", [
    ("What is the capital of Lisbon?", None),
    ("What is Portugal the capital of?", None),
    ("what is portugal the capital of?", None),
    ("Is Madrid the capital of Portugal?", None),
    ("What is the capital of Portugal?", "Lisbon is the capital of Portugal"),
    ("What is Lisbon the capital of?", "Lisbon is the capital of Portugal"),
    ("what is the capital of portugal?", "Lisbon is the capital of Portugal"),
    ("Is Lisbon the capital of Portugal?", "Lisbon is the capital of Portugal"),
])
def test_ask_answers_the_question_the_right_way_round(atlas: tuple[Path, Any], question: str,
                                                      quoted: str | None) -> None:
    sessions, session = atlas
    result = CliRunner().invoke(main, ["--sessions-dir", str(sessions), "ask", str(session.root), question, "--json"],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    if quoted is None:
        assert (doc["found"], doc["answer"], doc["confidence"]) == (False, "Not found in this session.", 0.0), doc
    else:
        assert doc["found"] and quoted in doc["answer"], doc


@pytest.mark.parametrize("question, passage, reverse", [
    ("What is the capital of Lisbon?", "Lisbon is the capital of Portugal.", True),
    ("What is Portugal the capital of?", "Lisbon is the capital of Portugal.", True),
    ("What is the capital of Portugal?", "The capital of Portugal is Lisbon.", False),
    ("What is the effect of aspirin on mortality?", "The effect of treatment on mortality was small.", False),
    ("What is one of the ports of Portugal?", "Porto is one of the ports of Portugal.", False),
    ("What is the population of Lisbon?", "Lisbon has a population of 500,000.", False),
])
def test_a_passage_turned_round_is_told_from_one_that_is_not(question: str, passage: str, reverse: bool) -> None:
    topics = [("Lisbon",), ("Portugal",), ("aspirin",)]
    assert (turned_round(question, passage, topics) is not None) is reverse
