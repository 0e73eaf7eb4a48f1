"""Documents without pages (Markdown, HTML) are cited by section ("§ Fleet"); PDFs keep their pages.

The offline researcher puts the heading a quote stands under in the evidence locator; the merge
checks that heading holds the quote in the stored text (graph/section_check.py); reports and
``ask`` show it instead of "p. 1".
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from orchestrator.graph.citations import Citer
from orchestrator.graph.section_check import section_problems
from orchestrator.model.layout import SessionPaths
from orchestrator.viewer.evidence import passage
from tests.helpers.data import COMPANY, PAPERS

TEXT = ("# Annual Report 2024\n\nIntro line.\n\n## Highlights of the year\n\nRevenue grew 22% in 2024.\n\n"
        "## Fleet\n\nAt December 31, 2024 the fleet consisted of 212 drones.\n")
SNIPPET = "At December 31, 2024 the fleet consisted of 212 drones."


def _contribution(section: str, source: dict[str, Any]) -> dict[str, Any]:
    evidence = {"source_id": "a:S1", "snippet": SNIPPET, "locator": {"page": 1, "section": section},
                "verification": {"verified": True, "page": 1, "char_start": TEXT.index(SNIPPET),
                                 "char_end": TEXT.index(SNIPPET) + len(SNIPPET)}}
    claim = {"id": "a:C1", "local_id": "C1", "evidence": [evidence],
             "provenance": {"file": "artifacts/a/claims.json", "pointer": "/claims/0"}}
    return {"items": {"sources": [{"id": "a:S1", "content_sha256": "f" * 64, **source}], "claims": [claim]}}


def _check(section: str, source: dict[str, Any] | None = None) -> list[Any]:
    contribution = _contribution(section, source or {"local_path": "/docs/report.md"})
    return section_problems(contribution, lambda gid: None, lambda sha: TEXT)


def test_the_section_a_quote_stands_under_passes() -> None:
    assert _check("Fleet") == [] and _check("## Fleet") == [] and _check("fleet:") == []
    assert _check("Annual Report 2024") == []  # the document's own heading holds every section


def test_a_wrong_heading_is_rejected_with_the_file_pointer_and_the_heading_to_cite() -> None:
    [problem] = _check("Outlook")
    assert problem.is_error and problem.rule == "evidence.section_mismatch"
    assert (problem.file, problem.pointer) == ("artifacts/a/claims.json", "/claims/0/evidence/0/locator/section")
    assert "cites section 'Outlook' of 'a:S1'" in problem.message
    assert "no heading line of that name stands before the quoted passage" in problem.message
    assert "set locator.section to the heading it stands under, 'Fleet'" in problem.hint


def test_a_section_that_ended_before_the_quote_is_rejected() -> None:
    [problem] = _check("Highlights of the year")
    assert "that section ends before the quoted passage, at the heading 'Fleet'" in problem.message


def test_a_wrong_section_of_a_pdf_is_a_warning_its_pages_are_cited() -> None:
    [problem] = _check("Outlook", {"local_path": "/docs/paper.pdf"})
    assert problem.severity == "warning"


def test_citations_name_the_section_of_a_document_without_pages_and_the_page_of_a_pdf() -> None:
    def claim(cid: str, source: str, section: str) -> dict[str, Any]:
        locator = {"page": 1, **({"section": section} if section else {})}
        return {"id": cid, "evidence": [{"source_id": source, "snippet": "x", "locator": locator,
                                         "verification": {"verified": True, "page": 3 if source == "P" else 1}}]}
    graph = {"sources": [{"id": "M", "local_path": "/d/a.md"}, {"id": "P", "local_path": "/d/p.pdf"}],
             "claims": [claim("C1", "M", "Fleet"), claim("C2", "M", "Outlook"), claim("C3", "P", "Methods")]}
    citer = Citer(graph)
    assert citer.cite("C1").label() == "[1, § Fleet]"  # type: ignore[union-attr]
    assert citer.cite("C1", "C2", "C3").label() == "[1, §§ Fleet, Outlook; 2, p. 3]"  # type: ignore[union-attr]


def test_an_offline_run_cites_markdown_by_section_and_a_pdf_by_page(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    for path in (COMPANY / "annual-report-2024.md", PAPERS / "acl-2020-main-447_s2orc.pdf"):
        shutil.copy(path, docs)
    env = {**os.environ, "CCONDUCTOR_SESSIONS_DIR": str(tmp_path / "sessions"), "HOME": str(tmp_path)}
    env.pop("ANTHROPIC_API_KEY", None)
    question = "How many drones were in the fleet at the end of 2024, and how many papers does S2ORC contain?"
    out = subprocess.run([sys.executable, "-m", "orchestrator", "run", question, "--input-dir", str(docs), "--json"],
                         capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    session = Path(json.loads(out.stdout.splitlines()[-1])["session"])
    report = (session / "mission-report.md").read_text(encoding="utf-8")
    # the sentence stands under "## Fleet" of the Markdown file: cited so, never "p. 1"
    assert re.search(r"212 drones operating from 14 hubs\. \[\d+, § Fleet\]", report)
    assert re.search(r"S2ORC[^\n]*\[\d+, p\. 49\d\d\]", report)  # the PDF keeps its printed pages
    markdown_ref = re.search(r"14 hubs\. \[(\d+), § Fleet\]", report).group(1)  # type: ignore[union-attr]
    assert f"[{markdown_ref}, p. 1]" not in report
    html = (session / "mission-report.html").read_text(encoding="utf-8")
    assert f'<a href="#ref-{markdown_ref}">{markdown_ref}</a>, § Fleet]' in html
    graph = json.loads((session / "knowledge-graph.json").read_text(encoding="utf-8"))
    cited = [e for c in graph["claims"] for e in c["evidence"] if "212 drones" in e["snippet"]]
    assert {e["locator"].get("section") for e in cited} == {"Fleet"}
    source = next(s for s in graph["sources"] if s["id"] == cited[0]["source_id"])
    shown = passage(SessionPaths(session), source, cited[0])  # the viewer's evidence panel
    assert shown["section"] == "Fleet" and "## Fleet" in shown["page_text"]
    asked = subprocess.run([sys.executable, "-m", "orchestrator", "ask", str(session),
                            "How many drones were in the fleet at the end of 2024?", "--backend", "offline"],
                           capture_output=True, text=True, env=env, timeout=120)
    assert asked.returncode == 0, asked.stderr[-2000:]
    assert re.search(r"\[\d+\] Northwind Aerial Logistics Annual Report 2024, § Fleet - claim", asked.stdout)
