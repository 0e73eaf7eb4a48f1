"""A run over the shared papers opens its report with a cited answer and prints it in the terminal."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from typing import Any

import pytest

from orchestrator.graph.citations import Citation, Ref
from orchestrator.report.answer import direct_answer, short_title
from orchestrator.report.blocks import Cite, Document, Para, Section, Text
from tests.helpers.data import PAPERS

QUESTION = "How many papers does the S2ORC corpus contain?"


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    sessions = tmp_path_factory.mktemp("sessions")
    env = {**os.environ, "CCONDUCTOR_SESSIONS_DIR": str(sessions), "COLUMNS": "120"}
    out = subprocess.run([sys.executable, "-m", "orchestrator.cli", "run", QUESTION, "--mission", "academic-research",
                          "--input-dir", str(PAPERS)],
                         capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    root = next(p for p in sessions.iterdir() if (p / "mission-report.md").exists())
    return {"stdout": out.stdout, "root": root, "markdown": (root / "mission-report.md").read_text()}


def test_the_report_opens_with_a_cited_answer(run: dict[str, Any]) -> None:
    sections = re.findall(r"(?m)^## (.+)$", run["markdown"])
    assert sections[0] == "Answer" and sections[1] == "Abstract"
    answer = run["markdown"].split("## Answer", 1)[1].split("\n## ", 1)[0]
    cited = re.findall(r"[^.]+?\.\s\[\d+, p\. \d+\]", " ".join(answer.split()))
    assert 1 <= len(cited) <= 5 and "81.1M" in answer
    assert "key concepts" not in run["markdown"]


def test_no_sentence_is_cited_twice_in_the_prose(run: dict[str, Any]) -> None:
    prose = run["markdown"].split("## Evidence", 1)[0] + run["markdown"].split("## Conclusion", 1)[1]
    sentences = re.findall(r"([A-Z][^\[\]]{40,}?) \[\d+, p\. \d+\]", prose)
    assert sentences and len(sentences) == len(set(sentences))


def test_the_terminal_prints_the_answer_with_short_titles_and_pages(run: dict[str, Any]) -> None:
    lines = run["stdout"].splitlines()
    answer = next(line for line in lines if line.startswith("answer: "))
    assert "[S2ORC, p. " in answer and "81.1M" in answer and "[1, p." not in answer
    assert lines.index(answer) < next(i for i, line in enumerate(lines) if line.startswith("report: "))


def test_json_mode_carries_the_answer_in_the_result_event(
    run: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    from orchestrator.cli.research_commands import _finish

    _finish({"session": str(run["root"]), "status": "partial"}, "json")
    event = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert event["type"] == "run.result" and "[S2ORC, p. " in event["answer"]


def test_citations_resolve_to_short_titles() -> None:
    def cite(*refs: tuple[int, tuple[int, ...]]) -> Cite:
        return Cite(Citation(("a:C1",), tuple(Ref(n, f"S{n}", pages) for n, pages in refs)))

    answer = Section("Answer", "answer", [Para((Text("It holds 81.1M papers [79]. "), cite((1, (1,))),
                                                Text(" It is large. "), cite((1, (2,)), (2, (3, 4)))))])
    document = Document("T", (), [], [answer], None, None, titles={
        1: "S2ORC: The Semantic Scholar Open Research Corpus",
        2: "Patient Experiences of Structured Heart Failure Programmes in Ireland"})
    found = direct_answer(document)
    assert found is not None
    assert found.text == ("It holds 81.1M papers. [S2ORC, p. 1] It is large. [S2ORC, p. 2; "
                          "Patient Experiences of Structured Heart Failure\u2026, pp. 3, 4]")
    assert found.first_sentence == "It holds 81.1M papers. [S2ORC, p. 1]" and found.top_citation == "S2ORC, p. 1"
    assert direct_answer(Document("T", (), [], [Section("Abstract", "summary", [])], None, None)) is None
    assert short_title("LONGEVAL: Guidelines for Human Evaluation") == "LONGEVAL"


def test_the_answer_takes_the_best_new_sentence_of_each_part() -> None:
    from agents.offline.synthesis import Synthesis

    def claim(cid: str, question: str, text: str, confidence: float) -> dict[str, Any]:
        return {"id": cid, "statement": text, "confidence": confidence, "sub_question_id": question,
                "evidence": [{"source_id": "S1", "snippet": text, "verification": {"verified": True}}]}

    small = "The small size of the focus groups limits generalisation to all patients."
    graph = {"sources": [{"id": "S1", "title": "T"}], "claims": [
        claim("a:Q1-C1", "p:Q1", small, 0.8), claim("a:Q1-C2", "p:Q1", "Participants valued the programme.", 0.6),
        claim("a:Q1-C3", "p:Q1", "Sessions took place in quiet rooms.", 0.55),
        claim("b:Q2-C1", "p:Q2", small, 0.79), claim("b:Q2-C2", "p:Q2", "Exercise sessions built confidence.", 0.7),
        claim("c:Q3-C1", "p:Q3", "Assertive members may have dominated the groups.", 0.75)]}
    questions = [{"id": f"p:Q{n}", "question": f"Q{n}?"} for n in (1, 2, 3)]
    synthesis = Synthesis(graph, questions, "What are the results and limitations?")
    chosen = [c["id"] for c in synthesis.answer_claims()]
    # Q1's two best (its third is too far behind), then each part's best sentence not already chosen
    assert chosen == ["a:Q1-C1", "a:Q1-C2", "b:Q2-C2", "c:Q3-C1"]
    outline = synthesis.outline(["Abstract", "Key Findings", "Conclusion"])
    assert outline["sections"][0]["heading"] == "Answer"
    texts = " ".join(p["text"] for s in outline["sections"] for p in s["paragraphs"])
    assert texts.count(small) == 1 and texts.count("[@a:Q1-C1]") == 1


def test_ask_cites_the_page_number_printed_on_the_paper(run: dict[str, Any]) -> None:
    """S2ORC's pages are numbered 4969-4983 in the proceedings: ask cites the printed number and the PDF page."""
    env = {**os.environ, "CCONDUCTOR_SESSIONS_DIR": str(run["root"].parent)}
    out = subprocess.run([sys.executable, "-m", "orchestrator.cli", "ask", str(run["root"]), QUESTION, "--json"],
                         capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    kept = [c for c in json.loads(out.stdout)["citations"] if c["number"]]
    assert kept and any("81.1M" in c["passage"] for c in kept)
    for citation in kept:
        source = citation["source"]
        assert int(source["printed_page"]) == 4968 + source["page"]
    text = subprocess.run([sys.executable, "-m", "orchestrator.cli", "ask", str(run["root"]), QUESTION],
                          capture_output=True, text=True, env=env, timeout=300).stdout
    first = kept[0]["source"]
    assert f"p. {first['printed_page']} (PDF page {first['page']})" in text


def test_gaps_and_contradictions_are_said_once_each() -> None:
    """A "Contradictions" heading gets the open contradictions only; nothing to say leaves the report's own line."""
    from agents.offline.synthesis import Synthesis

    def claim(cid: str, text: str) -> dict[str, Any]:
        return {"id": cid, "statement": text, "confidence": 0.8, "sub_question_id": "p:Q1",
                "evidence": [{"source_id": "S1", "snippet": text, "verification": {"verified": True}}]}

    claims = [claim("a:Q1-C1", "The trial enrolled 120 patients."),
              claim("b:Q1-C1", "The trial enrolled 210 patients.")]
    questions = [{"id": "p:Q1", "question": "How many patients?"}]
    headings = ["Gaps", "Contradictions", "Gaps and Contradictions"]

    def said(graph: dict[str, Any]) -> dict[str, list[str]]:
        outline = Synthesis(graph, questions, "How many patients?").outline(headings)
        return {s["heading"]: [p["text"] for p in s["paragraphs"]] for s in outline["sections"]}

    quiet = said({"sources": [{"id": "S1", "title": "T"}], "claims": claims})
    assert quiet["Gaps"] == quiet["Contradictions"] == quiet["Gaps and Contradictions"] == []
    conflict = {"id": "X1", "claim_ids": ["a:Q1-C1", "b:Q1-C1"], "status": "open"}
    loud = said({"sources": [{"id": "S1", "title": "T"}], "claims": claims, "contradictions": [conflict]})
    assert loud["Gaps"] == []
    assert len(loud["Contradictions"]) == 1 and loud["Contradictions"][0].startswith("Open contradiction")
    assert len(loud["Gaps and Contradictions"]) == 1


def test_no_paragraph_of_the_report_is_repeated(run: dict[str, Any]) -> None:
    paragraphs = [" ".join(p.split()) for p in run["markdown"].split("\n\n")]
    prose = [p for p in paragraphs if len(p) > 40 and not p.startswith(("|", "#", "-", "*", "["))]
    assert prose and len(prose) == len(set(prose)), [p for p in prose if prose.count(p) > 1][:3]
