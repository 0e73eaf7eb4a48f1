"""`cconductor ask` over a session made by a real offline mission (`cconductor run` on a tiny folder).

The graph has the shapes research runs produce (claims from several researchers quoting the same
passages, entities merged across agents, co-occurrence relationships, fact-checker assessments).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from orchestrator.contract.schemas import SchemaRegistry

NOTES = {
    "cooling.md": "# Reactor cooling\n\nThe Lumen reactor is cooled by molten salt that circulates through the core. "
                  "Molten salt cooling does not require high pressure in the primary loop. The salt loop is drained "
                  "into a storage tank when the reactor stops.\n",
    "grid.md": "# Grid connection\n\nThe Lumen reactor produces 40 megawatts of electric power for the regional grid. "
               "The grid operator schedules maintenance of the reactor every spring.\n",
    "staff.md": "# Staff\n\nThe Lumen reactor employs 85 people, including 12 licensed operators who work in shifts.\n",
}


def cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "orchestrator.cli", *args], capture_output=True, text=True,
                          env=env, timeout=240)


@pytest.fixture(scope="module")
def mission(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    base = tmp_path_factory.mktemp("mission")
    docs = base / "docs"
    docs.mkdir()
    for name, text in NOTES.items():
        (docs / name).write_text(text, encoding="utf-8")
    env = {**os.environ, "CCONDUCTOR_SESSIONS_DIR": str(base / "sessions"), "HOME": str(base)}
    env.pop("ANTHROPIC_API_KEY", None)
    out = cli(env, "run", "How is the Lumen reactor cooled?", "--mission", "general-research", "--input-dir",
              str(docs), "--json")
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    return {"env": env, "root": Path(json.loads(out.stdout.splitlines()[-1])["session"])}


def test_ask_latest_answers_from_the_mission_graph(mission: dict[str, Any]) -> None:
    out = cli(mission["env"], "ask", "latest", "How is the Lumen reactor cooled?", "--json")
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert SchemaRegistry.default().validate_document("answer", doc, None) == []
    assert doc["found"] is True and doc["backend"] == "offline"
    kept = [c for c in doc["citations"] if c["number"]]
    assert kept and all(c["kind"] == "claim" and c["match"] == "exact" for c in kept)
    assert any("molten salt" in c["passage"] for c in kept)
    assert all(c["source"]["title"] for c in kept)
    graph = json.loads((mission["root"] / "knowledge-graph.json").read_text())
    claims = {c["id"]: c for c in graph["claims"]}
    for citation in kept:  # each cited node is a claim of the graph with verified evidence
        assert any(e["verification"]["verified"] for e in claims[citation["node_id"]]["evidence"])
    assert (mission["root"] / doc["record"]).is_file()


def test_a_question_the_mission_never_researched_is_not_found(mission: dict[str, Any]) -> None:
    out = cli(mission["env"], "ask", "latest", "Which football club won the 1998 league?")
    assert out.returncode == 0, out.stderr
    assert "Not found in this session." in out.stdout and "found: false" in out.stdout


def _graph(mission: dict[str, Any]) -> dict[str, Any]:
    return dict(json.loads((mission["root"] / "knowledge-graph.json").read_text()))


def test_a_question_the_run_never_asked_gets_a_newly_verified_passage(mission: dict[str, Any]) -> None:
    before = {c["id"] for c in _graph(mission)["claims"]}
    assert not any("85 people" in c["statement"] for c in _graph(mission)["claims"])  # the run never quoted it
    out = cli(mission["env"], "ask", "latest", "How many people does the Lumen reactor employ?", "--json")
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    kept = [c for c in doc["citations"] if c["number"]]
    assert doc["found"] is True and any("85 people" in c["passage"] for c in kept)
    graph = _graph(mission)
    claims = {c["id"]: c for c in graph["claims"]}
    new = [c["node_id"] for c in kept if c["node_id"] not in before]
    assert new and all(n.startswith("ask-researcher-") for n in new)  # merged through the agent protocol
    for node_id in new:  # ... and checked against the stored text like any claim
        assert all(e["verification"]["verified"] for e in claims[node_id]["evidence"])


def test_a_passage_the_run_already_quoted_is_cited_as_its_claim_and_nothing_unrelated_is_written(
        mission: dict[str, Any]) -> None:
    agents = {k for k in _graph(mission) if k.startswith("ask-researcher-")}
    out = cli(mission["env"], "ask", "latest", "Which football club won the 1998 league?", "--json")
    assert json.loads(out.stdout)["found"] is False
    assert {k for k in _graph(mission) if k.startswith("ask-researcher-")} == agents  # nothing written
    out = cli(mission["env"], "ask", "latest", "How is the Lumen reactor cooled?", "--json")
    cited = [c["node_id"] for c in json.loads(out.stdout)["citations"] if c["number"]]
    assert cited and not any(n.startswith("ask-researcher-") for n in cited)


def test_a_question_naming_an_entity_by_another_name_finds_the_documents_passage(mission: dict[str, Any]) -> None:
    """The documents say "the Lumen reactor"; an agent recorded "LR-40 plant" as its other name: asked by that
    name, ask searches the documents by every name of the entity, and still declines what they do not say."""
    from orchestrator.model.layout import SessionPaths
    from tests.conftest import merge_pending, write_artifacts

    paths = SessionPaths(mission["root"])
    alias = {"id": "E1", "name": "Lumen reactor", "type": "concept", "aliases": ["LR-40 plant"]}
    write_artifacts(paths, "alias-notes", {"entities.json": {"entities": [alias]}})
    assert merge_pending(paths) == {"alias-notes": "merged"}
    out = cli(mission["env"], "ask", "latest", "What cools the LR-40 plant?", "--json")
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert doc["found"] is True, doc["answer"]
    assert any("molten salt" in c["passage"] for c in doc["citations"] if c["number"])
    out = cli(mission["env"], "ask", "latest", "What is the annual budget of the LR-40 plant?", "--json")
    assert json.loads(out.stdout)["found"] is False
