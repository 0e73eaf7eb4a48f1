"""`cconductor ask`: grounded answers from a session built by the real pipeline (offline backend)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from orchestrator.answers.data import Draft
from orchestrator.answers.graph import NodeIndex, load_graph
from orchestrator.answers.ground import ground
from orchestrator.answers.render import render
from orchestrator.answers.retrieve import GraphRetriever
from orchestrator.answers.store import list_answers
from orchestrator.answers.validate import Validator
from orchestrator.cli import main
from orchestrator.contract.schemas import SchemaRegistry
from orchestrator.model.layout import SessionPaths
from orchestrator.session.record import create_session
from tests.conftest import merge_pending, store_text, write_artifacts
from tests.helpers.agent_writer import artifact_files, source_text
from tests.helpers.ask_session import PAGE_2, A, B, reactor_session

COOLED = "How is the Lumen reactor cooled?"
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning:rdflib.*")


@pytest.fixture
def sessions(tmp_path: Path) -> Path:
    return tmp_path / "sessions"


@pytest.fixture
def reactor(sessions: Path) -> SessionPaths:
    return reactor_session(sessions)


def ask(sessions: Path, *args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["--sessions-dir", str(sessions), "ask", *args], catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def schema_problems(document: dict[str, Any]) -> list[str]:
    return [p.render() for p in SchemaRegistry.default().validate_document("answer", document, None)]


def validator(paths: SessionPaths) -> Validator:
    return Validator(NodeIndex.build(load_graph(paths)))


def test_a_question_answered_by_a_claim_is_cited_exactly(sessions: Path, reactor: SessionPaths) -> None:
    code, out, _ = ask(sessions, str(reactor.root), COOLED, "--json")
    assert code == 0
    doc = json.loads(out)
    assert schema_problems(doc) == []
    assert doc["found"] is True and doc["backend"] == "offline"
    cited = {c["node_id"]: c for c in doc["citations"] if c["number"]}
    assert f"{A}:C2" in cited
    c2 = cited[f"{A}:C2"]
    assert (c2["match"], c2["confidence"], c2["status"]) == ("exact", 1.0, "ok")
    assert c2["source"] == {"id": f"{A}:S1", "title": "Lumen reactor field notes", "page": 2}
    assert "cooled by molten salt" in c2["passage"] and c2["passage"] in PAGE_2
    assert f"[{c2['number']}]" in doc["answer"] and "[@" not in doc["answer"]
    assert doc["confidence"] == 1.0 and doc["flagged"] == doc["dropped"] == 0
    # the draft was written from retrieved nodes only, and every marker resolved
    assert set(cited) <= set(doc["retrieval"]["items"])
    assert doc["retrieval"]["store"] == "pyoxigraph"


def test_the_terminal_shows_numbered_citations_with_title_page_and_passage(
        sessions: Path, reactor: SessionPaths) -> None:
    code, out, _ = ask(sessions, str(reactor.root), COOLED)
    assert code == 0
    assert "Citations:" in out
    assert "[1] Lumen reactor field notes, p. 2 - claim" in out
    assert '"The Lumen reactor is cooled by molten salt' in out
    assert "confidence: 1.00" in out


def test_every_answer_is_kept_in_the_answers_folder(sessions: Path, reactor: SessionPaths) -> None:
    _, out, _ = ask(sessions, str(reactor.root), COOLED, "--json")
    ask(sessions, str(reactor.root), "What is the capital of France?", "--json")
    doc = json.loads(out)
    kept = list_answers(reactor)
    assert len(kept) == 2
    first = json.loads((reactor.root / doc["record"]).read_text())
    assert doc["record"].startswith("answers/") and first == {k: v for k, v in doc.items() if k != "record"}
    assert {"question", "answer", "citations", "confidence", "sentences", "draft"} <= first.keys()
    assert any(c["parts"] for c in first["citations"])
    second = json.loads(kept[1].read_text()) if kept[0].name == Path(doc["record"]).name else json.loads(
        kept[0].read_text())
    assert second["found"] is False and schema_problems(second) == []


def test_an_out_of_scope_question_is_not_found_and_exits_0(sessions: Path, reactor: SessionPaths) -> None:
    code, out, _ = ask(sessions, str(reactor.root), "What is the capital of France?", "--json")
    assert code == 0
    doc = json.loads(out)
    assert doc["found"] is False
    assert doc["answer"] == "Not found in this session."
    assert doc["citations"] == [] and doc["confidence"] == 0.0 and doc["draft"] is None
    assert schema_problems(doc) == []
    code, out, _ = ask(sessions, str(reactor.root), "What is the capital of France?")
    assert code == 0 and "Not found in this session." in out and "found: false" in out


def test_a_fabricated_sentence_is_dropped_and_the_answer_says_so(reactor: SessionPaths) -> None:
    draft = (f"The Lumen reactor is cooled by molten salt that circulates through the core [@{A}:C2]. "
             f"The Lumen reactor produces 90 megawatts of electric power [@{A}:C1]. "
             f"The Lumen reactor runs on coal and emits smoke over the city [@{A}:C2]. "
             f"Molten salt cooling does require high pressure in the primary loop [@{A}:C3].")
    index = NodeIndex.build(load_graph(reactor))
    checked = Validator(index).check(draft)
    assert [s.status for s in checked] == ["ok", "dropped", "dropped", "dropped"]
    details = [c.parts[-1].detail for s in checked[1:] for c in s.citations]
    assert "the number 90" in details[0] and "similarity" in details[1] and "negation" in details[2]
    retrieved = GraphRetriever(reactor, index).retrieve(COOLED)
    doc = ground(index.session, retrieved, Draft(draft, "offline"), checked, index)
    assert doc["dropped"] == 3 and doc["confidence"] == 1.0
    assert "3 unsupported sentence(s) were dropped" in doc["answer"]
    assert "90 megawatts" not in doc["answer"] and "coal" not in doc["answer"]
    assert sum(1 for n in doc["notes"] if n.startswith("dropped")) == 3
    assert schema_problems(doc) == []


def test_an_approximate_paraphrase_scores_between_half_and_0_9(reactor: SessionPaths) -> None:
    [sentence] = validator(reactor).check(
        f"The Lumen reactor is cooled with molten salt circulating through its core [@{A}:C2].")
    [citation] = sentence.citations
    assert citation.match == "approximate" and 0.5 <= citation.confidence <= 0.9
    assert sentence.status == "ok"


def test_an_unknown_node_scores_0_and_its_citation_is_dropped(reactor: SessionPaths) -> None:
    [sentence] = validator(reactor).check(
        f"The Lumen reactor is cooled by molten salt that circulates through the core [@{A}:C2; @{A}:C99].")
    good, bad = sentence.citations
    assert (bad.match, bad.confidence, bad.status) == ("unknown-node", 0.0, "dropped")
    assert "no node reactor-notes:C99" in bad.parts[0].detail
    assert good.confidence == 1.0 and sentence.status == "ok"  # the sentence keeps its valid citation
    alone, uncited = validator(reactor).check(f"The Lumen reactor is cooled by molten salt [@{A}:C99]. No marker here.")
    assert alone.status == uncited.status == "dropped" and uncited.citations == []


def test_a_relation_inferred_through_a_chain_scores_lower_with_depth_and_has_a_trace(reactor: SessionPaths) -> None:
    check = validator(reactor).check
    [direct] = check(f"The Lumen reactor is cooled by molten salt [@{A}:E-lumen; @{A}:E-salt].")
    [two] = check(f"The Lumen reactor operates without high pressure [@{A}:E-lumen; @{A}:E-pressure].")
    [five] = check(f"The Lumen reactor is finally checked by inspection crews [@{A}:E-lumen; @{A}:E-crews].")
    [none] = check(f"The Lumen reactor has a harbour crane [@{A}:E-lumen; @{A}:E-crane].")
    assert direct.confidence == 1.0 and direct.citations[1].match == "exact"
    assert two.confidence == 0.9 and two.citations[1].match == "inferred"
    assert [(s.source, s.relation, s.target, s.rests_on) for s in two.citations[1].trace] == [
        (f"{A}:E-lumen", "cooled-by", f"{A}:E-salt", f"{A}:R1"),
        (f"{A}:E-salt", "does-not-require", f"{A}:E-pressure", f"{A}:R2")]
    assert five.confidence < two.confidence and five.status == "flagged"
    assert [s.rests_on for s in five.citations[1].trace] == [f"{A}:R{i}" for i in range(1, 6)]
    assert none.status == "dropped" and "no chain of at most 5" in none.citations[1].parts[-1].detail


def test_an_alias_of_a_merged_entity_is_an_inferred_step(reactor: SessionPaths) -> None:
    [sentence] = validator(reactor).check(f"The Lumen reactor runs on molten salt [@{B}:E-lumen].")
    [citation] = sentence.citations
    assert citation.node_id == f"{A}:E-lumen" and citation.match == "inferred"
    assert 0.5 <= citation.confidence < 1.0
    assert citation.trace[0].to_dict() == {"from": f"{B}:E-lumen", "relation": "same-as", "to": f"{A}:E-lumen",
                                           "rests_on": f"{A}:E-lumen"}


def test_flagged_sentences_are_marked_in_the_answer(reactor: SessionPaths) -> None:
    index = NodeIndex.build(load_graph(reactor))
    draft = f"The Lumen reactor is finally checked by inspection crews [@{A}:E-lumen; @{A}:E-crews]."
    doc = ground(index.session, GraphRetriever(reactor, index).retrieve(COOLED), Draft(draft, "offline"),
                 Validator(index).check(draft), index)
    assert doc["flagged"] == 1 and "(low confidence)" in doc["answer"]
    assert doc["confidence"] == pytest.approx(0.461, abs=0.001)
    assert any(len(c["trace"]) == 5 for c in doc["citations"])
    shown = render(doc)
    assert f"via Lumen reactor --cooled-by--> molten salt  [{A}:R1]" in shown
    assert "(low confidence)" in shown and "confidence: 0.46" in shown
    assert schema_problems(doc) == []


def test_contradictions_touching_cited_claims_are_listed(sessions: Path, reactor: SessionPaths) -> None:
    _, out, _ = ask(sessions, str(reactor.root), "How much electric power does the Lumen reactor produce?", "--json")
    doc = json.loads(out)
    assert f"{A}:C1" in {c["node_id"] for c in doc["citations"]}
    assert [c["id"] for c in doc["contradictions"]] == [f"{B}:X1"]
    _, out, _ = ask(sessions, str(reactor.root), COOLED, "--json")
    assert json.loads(out)["contradictions"] == []


def test_all_asks_every_session(sessions: Path, reactor: SessionPaths) -> None:
    other = create_session(sessions, "facts", "test-mission")
    store_text(other, source_text("fact-agent"))
    write_artifacts(other, "fact-agent", artifact_files("fact-agent", claims=3))
    assert merge_pending(other) == {"fact-agent": "merged"}
    code, out, _ = ask(sessions, "--all", COOLED, "--json")
    assert code == 0
    doc = json.loads(out)
    assert doc["found"] is True
    by_session = {d["session"]: d for d in doc["answers"]}
    assert by_session[reactor.root.name]["found"] is True
    assert by_session[other.root.name]["found"] is False
    assert all(schema_problems(d) == [] for d in doc["answers"])
    empty = create_session(sessions, "nothing merged yet")
    code, out, _ = ask(sessions, "--all", "Is fact 2 about fact-agent true?", "--json")
    doc = json.loads(out)
    assert code == 0
    assert {d["session"]: d["found"] for d in doc["answers"]} == {reactor.root.name: False, other.root.name: True}
    assert [s["session"] for s in doc["skipped"]] == [empty.root.name]
    assert "no knowledge graph yet" in doc["skipped"][0]["reason"]


def test_rdflib_and_pyoxigraph_retrieve_the_same_nodes(reactor: SessionPaths) -> None:
    index = NodeIndex.build(load_graph(reactor))
    question = "What does high pressure enable?"
    ox = GraphRetriever(reactor, index, "pyoxigraph").retrieve(question)
    rl = GraphRetriever(reactor, index, "rdflib").retrieve(question)
    assert [i.id for i in ox.items] == [i.id for i in rl.items]
    assert f"{A}:C4" in {i.id for i in ox.items}


def test_usage_errors_are_clear(sessions: Path, reactor: SessionPaths) -> None:
    code, _, err = ask(sessions, str(reactor.root))
    assert code == 2 and 'cconductor ask SESSION "question"' in err
    code, _, err = ask(sessions, str(reactor.root), "  ")
    assert code == 2 and "the question is empty" in err
    empty = create_session(sessions, "nothing yet")
    code, _, err = ask(sessions, str(empty.root), COOLED)
    assert code == 2 and "has no knowledge graph yet" in err and "Traceback" not in err


def test_help_imports_no_heavy_library() -> None:
    probe = ("import sys; from click.testing import CliRunner; from orchestrator.cli import main; "
             "r = CliRunner().invoke(main, ['ask', '--help']); assert r.exit_code == 0, r.output; "
             "print(sorted(m for m in ('rdflib', 'pyshacl', 'jsonschema', 'pyoxigraph', 'bm25s', 'anthropic') "
             "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_contradictions_are_read_tolerantly() -> None:
    base = {"session": "s", "claims": [{"id": "a:C1", "statement": "x"}, {"id": "a:C2", "statement": "y"}]}
    assert NodeIndex.build(base).contradictions_of({"a:C1"}) == []  # no key at all
    assert NodeIndex.build({**base, "contradictions": None}).contradictions_of({"a:C1"}) == []
    detected = {"id": "detected:contradiction-1", "detected": True, "kind": "numeric", "claim_ids": ["a:C1", "a:C2"],
                "description": "12% against 30%", "resolved": False}
    damaged = {"id": "x", "claim_ids": "a:C2"}  # not a list: never read character by character
    index = NodeIndex.build({**base, "contradictions": [detected, "junk", damaged, {"claim_ids": ["b:C9"]}]})
    assert index.contradictions_of({"a:C2"}) == [
        {"claim_ids": ["a:C1", "a:C2"], "id": "detected:contradiction-1", "kind": "numeric",
         "description": "12% against 30%", "resolved": False}]
    assert index.contradictions_of({"a:C3"}) == []
