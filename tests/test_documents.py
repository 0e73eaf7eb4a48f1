"""Papers as documents: sections, figures, tables and captions extracted, merged, checked and citable."""

from __future__ import annotations

import copy
import json
import logging
from pathlib import Path
from typing import Any

import pytest

from agents.offline.docstructure import Structure, caption_pages, extract_structure
from agents.offline.document_parts import document_passages, search_parts
from agents.offline.ingest import Document, ingest_file
from orchestrator.model.layout import SessionPaths
from tests.conftest import merge_pending, store_text, write_artifacts
from tests.helpers.data import PAPERS

ACL = PAPERS / "acl-2020-main-447_s2orc.pdf"
TEXT_ONLY = PAPERS / "j-trauma-manag-outcomes-2010-4-1.pdf"


@pytest.fixture(scope="module")
def acl() -> tuple[Document, Structure]:
    logging.getLogger("pypdf").setLevel(logging.ERROR)
    doc = ingest_file(ACL)
    return doc, extract_structure(doc, ACL)


def _by_label(items: list[dict[str, Any]], label: str) -> dict[str, Any]:
    return next(i for i in items if i["label"] == label)


def test_figures_have_their_page_region_and_rendered_image(acl: tuple[Document, Structure]) -> None:
    _, found = acl
    assert [f["label"] for f in found.figures] == ["Figure 1", "Figure 2", "Figure 3", "Figure 4"]
    assert [f["page"] for f in found.figures] == [1, 5, 7, 14]
    for figure in found.figures:
        data, suffix = found.objects[figure["image_sha256"]]
        assert suffix == ".png" and data.startswith(b"\x89PNG\r\n\x1a\n") and len(data) > 2000
        x0, y0, x1, y1 = figure["bbox"]
        assert 0 <= x0 < x1 <= 612 and 0 <= y0 < y1 <= 842


def test_tables_have_their_cells_and_header(acl: tuple[Document, Structure]) -> None:
    _, found = acl
    assert len(found.tables) == 9
    filters = _by_label(found.tables, "Table 2")
    assert filters["page"] == 4 and filters["columns"] == ["Filter", "Number of papers"]
    cells = json.loads(found.objects[filters["data_sha256"]][0])
    assert cells["header"] == ["Filter", "Number of papers"]
    assert ["No title", "20k"] in cells["rows"] and ["No authors", "0.3M"] in cells["rows"]
    clustering = json.loads(found.objects[_by_label(found.tables, "Table 6")["data_sha256"]][0])
    assert clustering["header"] == ["Evaluated task", "Title", "Authors"]
    assert clustering["rows"][0] == ["Paper clustering", "0.93", "0.89"]


def test_each_caption_describes_its_own_part_and_stands_on_its_page(acl: tuple[Document, Structure]) -> None:
    doc, found = acl
    parts = {p["id"]: p for p in found.figures + found.tables}
    assert len(found.captions) == len(parts) == 13
    for caption in found.captions:
        part = parts[caption["describes"]]
        assert caption["page"] == part["page"]
        assert caption["text"].startswith(part["label"])  # "Table 1: A comparison of S2ORC ..."
        assert doc.text[caption["char_start"]:caption["char_end"]] == caption["text"]
        assert caption["text"] in doc.pages[caption["page"] - 1]


def test_sections_come_from_the_headings(acl: tuple[Document, Structure]) -> None:
    _, found = acl
    titles = [s["title"] for s in found.sections]
    assert titles[:3] == ["Abstract", "1 Introduction", "2 Constructing the corpus"]
    assert "2.1 Processing PDFs" in titles
    nested = next(s for s in found.sections if s["title"] == "2.1 Processing PDFs")
    assert nested["number"] == "2.1" and nested["level"] == 2 and nested["page"] == 3
    assert all(f.get("section_id", "").startswith("src-") for f in found.figures)


def test_a_text_only_paper_is_never_laid_out(monkeypatch: pytest.MonkeyPatch) -> None:
    import agents.offline.pdflayout as layout

    def refuse(path: Path) -> Any:
        raise AssertionError("a paper without captions must not be opened a second time")

    monkeypatch.setattr(layout, "open_pdf", refuse)
    doc = ingest_file(TEXT_ONLY)
    assert caption_pages(doc) == []
    found = extract_structure(doc, TEXT_ONLY)
    assert found.figures == found.tables == found.captions == [] and found.sections


# --- merged and checked by the orchestrator ---------------------------------------------------------

def _ingested(session: SessionPaths, doc: Document, found: Structure) -> dict[str, Any]:
    assert store_text(session, doc.text) == doc.content_sha256
    for sha, (data, suffix) in found.objects.items():
        session.stored_object(sha, suffix).write_bytes(data)
    files: dict[str, Any] = {"sources.json": {"sources": [dict(doc.source)]}}
    for name in ("sections", "figures", "tables", "captions"):
        files[f"{name}.json"] = {name: copy.deepcopy(getattr(found, name))}
    return files


@pytest.fixture()
def session(tmp_path: Path, acl: tuple[Document, Structure]) -> SessionPaths:
    from orchestrator.session.record import create_session

    paths = create_session(tmp_path / "sessions", "What does S2ORC filter out?", "m")
    write_artifacts(paths, "pdf-analyzer", _ingested(paths, *acl))
    assert merge_pending(paths) == {"pdf-analyzer": "merged"}
    return paths


def _claim(snippet: str, locator: dict[str, Any], cid: str = "C1") -> dict[str, Any]:
    return {"id": cid, "statement": "S2ORC removed 20k papers without a title.", "confidence": 0.8,
            "priority": "medium", "evidence": [{"source_id": "pdf-analyzer:" + ACL_ID[0], "snippet": snippet,
                                                "locator": locator}]}


ACL_ID: list[str] = []


def _verification(session: SessionPaths, claims: list[dict[str, Any]]) -> list[dict[str, Any]]:
    write_artifacts(session, "reader", {"claims.json": {"claims": claims}})
    assert merge_pending(session) == {"reader": "merged"}
    graph = json.loads(session.kg_json.read_text())
    return [c["evidence"][0]["verification"] for c in sorted(graph["claims"], key=lambda c: c["id"])]


def test_the_graph_holds_the_document_and_its_objects(session: SessionPaths, acl: tuple[Document, Structure]) -> None:
    graph = json.loads(session.kg_json.read_text())
    assert {k: len(graph[k]) for k in ("figures", "tables", "captions")} == {"figures": 4, "tables": 9,
                                                                             "captions": 13}
    caption = graph["captions"][0]
    assert caption["describes"].startswith("pdf-analyzer:") and caption["describes_kind"] in ("figure", "table")
    trig = session.kg_trig.read_text()
    assert "cc:Caption" in trig and "cc:describes" in trig and "cc:Table" in trig


def test_table_and_figure_evidence_verify_against_cells_and_captions(
        session: SessionPaths, acl: tuple[Document, Structure]) -> None:
    doc, found = acl
    ACL_ID[:] = [doc.id]
    table = "pdf-analyzer:" + _by_label(found.tables, "Table 2")["id"]
    figure = "pdf-analyzer:" + _by_label(found.figures, "Figure 2")["id"]
    claims = [
        _claim("No title | 20k", {"page": 4, "table": table, "rows": [1, 1]}, "C1"),
        _claim("No title | 25k", {"page": 4, "table": table}, "C2"),  # a changed value
        _claim("No title | 20k", {"page": 5, "table": table}, "C3"),  # the table is on page 4
        _claim("Distribution of papers by Microsoft Academic field of study", {"figure": figure}, "C4"),
        _claim("Distribution of papers by Microsoft Academic field of citations", {"figure": figure}, "C5"),
        _claim("Post-processing data quality filters for papers", {"table": table}, "C6"),  # its caption
    ]
    c1, c2, c3, c4, c5, c6 = _verification(session, claims)
    assert c1["verified"] and c1["reason"] == "found in Table 2 (row 1)" and c1["page"] == 4
    assert c1["data_sha256"] == _by_label(found.tables, "Table 2")["data_sha256"]
    assert not c2["verified"] and "not found in the cells or caption of Table 2" in c2["reason"]
    assert not c3["verified"] and "is on page 4, not on the cited page 5" in c3["reason"]
    assert c4["verified"] and c4["page"] == 5 and "caption of Figure 2" in c4["reason"]
    assert not c5["verified"]
    assert c6["verified"] and "its caption" in c6["reason"]


def test_a_caption_not_on_its_page_is_rejected_with_the_fix(tmp_path: Path, acl: tuple[Document, Structure]) -> None:
    from orchestrator.session.record import create_session

    paths = create_session(tmp_path / "sessions", "q", "m")
    files = _ingested(paths, *acl)
    files["captions.json"]["captions"][1]["page"] = 3  # Table 1's caption is on page 2
    write_artifacts(paths, "pdf-analyzer", files)
    assert merge_pending(paths) == {"pdf-analyzer": "rejected"}
    retry = json.loads((paths.root / "pdf-analyzer.retry-instructions.json").read_text())
    problem = retry["files"][0]["problems"][0]
    assert problem["rule"] == "caption.not_found" and problem["pointer"] == "/captions/1/text"
    assert "is not on page 3" in problem["message"] and "quote the caption verbatim from page 3" in problem["hint"]


def test_a_missing_or_misnamed_stored_object_is_rejected(tmp_path: Path, acl: tuple[Document, Structure]) -> None:
    from orchestrator.session.record import create_session

    paths = create_session(tmp_path / "sessions", "q", "m")
    files = _ingested(paths, *acl)
    figure = files["figures.json"]["figures"][0]
    paths.stored_object(figure["image_sha256"], ".png").unlink()
    table = files["tables.json"]["tables"][0]
    paths.stored_object(table["data_sha256"], ".json").write_text('{"header": "x", "rows": []}')
    write_artifacts(paths, "pdf-analyzer", files)
    assert merge_pending(paths) == {"pdf-analyzer": "rejected"}
    retry = json.loads((paths.root / "pdf-analyzer.retry-instructions.json").read_text())
    problems = {p["pointer"]: p for f in retry["files"] for p in f["problems"]}
    assert "does not exist" in problems["/figures/0/image_sha256"]["message"]
    assert "does not match its name" in problems["/tables/0/data_sha256"]["message"]
    assert all(p["rule"] == "stored_object.invalid" for p in problems.values())


def test_a_caption_describing_something_else_is_a_shacl_violation_saying_the_fix(
        tmp_path: Path, acl: tuple[Document, Structure]) -> None:
    from orchestrator.session.record import create_session

    paths = create_session(tmp_path / "sessions", "q", "m")
    files = _ingested(paths, *acl)
    captions = files["captions.json"]["captions"]
    captions[1]["describes"] = captions[0]["describes"]  # two captions for Figure 1, none for Table 1
    write_artifacts(paths, "pdf-analyzer", files)
    assert merge_pending(paths) == {"pdf-analyzer": "rejected"}
    retry = json.loads((paths.root / "pdf-analyzer.retry-instructions.json").read_text())
    messages = [v["message"] for v in retry["shacl_violations"]]
    assert any("is described by more than one caption" in m for m in messages)


def test_table_rows_and_captions_are_searchable_passages(session: SessionPaths) -> None:
    graph = json.loads(session.kg_json.read_text())
    passages = document_passages(graph, lambda sha: session.stored_object(sha, ".json").read_text())
    assert {p.kind for p in passages} == {"caption", "table-row"}
    (best, _), *_ = search_parts(passages, "How many papers have PubMed IDs?")
    assert best.kind == "table-row" and best.label == "Table 3" and best.page == 5
    assert best.text == "Papers w/ Pubmed IDs | 21.5M (26.5%)"
    assert best.statement("4973") == "Table 3 (p. 4973), Papers w/ Pubmed IDs: 21.5M (26.5%)."
    assert best.evidence()["locator"] == {"page": 5, "table": best.part_id, "rows": [best.row, best.row]}
    assert search_parts(passages, "Who won the 2018 FIFA World Cup?") == []


def test_ask_answers_from_a_table_with_the_same_citation_checks(session: SessionPaths) -> None:
    from agents.ask.offline import OfflineComposer
    from orchestrator.answers.service import ask

    answer = ask(session, "How many papers have DOIs?", OfflineComposer(), keep=False)
    assert answer["found"] is True
    assert "52.2M (64.3%)" in answer["answer"]
    (citation,) = answer["citations"]
    assert citation["node_id"].endswith("-tab3") and citation["match"] == "exact"
    assert citation["source"]["page"] == 5 and citation["passage"] == "Table 3, Papers w/ DOIs: 52.2M (64.3%)."
    none = ask(session, "Who won the 2018 FIFA World Cup?", OfflineComposer(), keep=False)
    assert none["found"] is False


def test_a_table_row_answers_a_sub_question_with_its_headers_and_printed_page(
        session: SessionPaths, acl: tuple[Document, Structure]) -> None:
    from types import SimpleNamespace

    from agents.offline.researcher import _part_claims

    graph = json.loads(session.kg_json.read_text())
    passages = document_passages(graph, lambda sha: session.stored_object(sha, ".json").read_text())
    source = next(s for s in graph["sources"])
    corpus: Any = SimpleNamespace(documents={source["id"]: SimpleNamespace(source=source)})
    question = {"id": "research-planner:Q1", "question": "How many papers have PubMed IDs?", "facet": "finding"}
    used: set[str] = set()
    (claim,) = _part_claims(passages, question, "S2ORC", corpus, "Q1", used)
    assert claim["statement"] == "Table 3 (p. 4973), Papers w/ Pubmed IDs: 21.5M (26.5%)."
    assert claim["evidence"][0]["locator"]["table"].endswith("-tab3") and "table" in claim["tags"]
    assert _part_claims(passages, question, "S2ORC", corpus, "Q1", used) == []  # quoted once
    off_topic = {"id": "research-planner:Q2", "question": "What is the boiling point of water?"}
    assert _part_claims(passages, off_topic, "S2ORC", corpus, "Q2", set()) == []


def test_the_report_shows_the_cited_figures_and_tables(session: SessionPaths, acl: tuple[Document, Structure]) -> None:
    from orchestrator.contract.stored_objects import object_reader
    from orchestrator.report.document import build_document
    from orchestrator.report.html import to_html
    from orchestrator.report.markdown import to_markdown

    doc, found = acl
    ACL_ID[:] = [doc.id]
    table = _by_label(found.tables, "Table 2")
    figure = _by_label(found.figures, "Figure 2")
    _verification(session, [
        _claim("No title | 20k", {"page": 4, "table": "pdf-analyzer:" + table["id"], "rows": [1, 1]}, "C1"),
        _claim("Distribution of papers by Microsoft Academic field of study",
               {"figure": "pdf-analyzer:" + figure["id"]}, "C2")])
    graph = json.loads(session.kg_json.read_text())
    outline = {"title": "Filters", "sections": [{"heading": "Key Findings", "paragraphs": [
        {"text": "Papers without a title were removed [@reader:C1]; fields are shown [@reader:C2]."}]}]}
    document = build_document(graph, session={"id": "s", "query": "q"}, quality=None, mission=None,
                              outline=outline, ledger=[], objects=object_reader(session))
    markdown, html = to_markdown(document), to_html(document)
    assert "## Figures and Tables" in markdown
    assert f"![Figure 2](sources/{figure['image_sha256']}.png)" in markdown
    assert "| Filter | Number of papers |" in markdown and "| No title | 20k |" in markdown
    assert "Table 2: Post-processing data quality filters for papers" in markdown and "p. 4972" in markdown
    assert html.count('<img src="data:image/png;base64,') == 1
    assert '<tr class="cited"><td>No title</td><td>20k</td></tr>' in html


FIGURE_PROBE = (
    "<script>const img = document.querySelector('figure.document-part img');"
    " const cited = document.querySelector('tr.cited');"
    " document.title = 'figure:' + (img ? img.naturalWidth : -1) + ':' + (img ? Math.ceil("
    "img.getBoundingClientRect().right) : -1) + ':' + (cited ? cited.textContent : '');</script>"
)


def test_the_cited_figure_shows_in_a_real_browser_on_a_phone_screen(
        session: SessionPaths, acl: tuple[Document, Structure], tmp_path: Path) -> None:
    import re

    from orchestrator.contract.stored_objects import object_reader
    from orchestrator.report.document import build_document
    from orchestrator.report.html import CSP, to_html
    from tests.browser import run_chromium

    doc, found = acl
    ACL_ID[:] = [doc.id]
    figure, table = _by_label(found.figures, "Figure 2"), _by_label(found.tables, "Table 2")
    _verification(session, [
        _claim("Distribution of papers by Microsoft Academic field of study",
               {"figure": "pdf-analyzer:" + figure["id"]}, "C1"),
        _claim("No title | 20k", {"table": "pdf-analyzer:" + table["id"], "rows": [1, 1]}, "C2")])
    outline = {"sections": [{"heading": "Key Findings", "paragraphs": [{"text": "See [@reader:C1; @reader:C2]."}]}]}
    page = to_html(build_document(json.loads(session.kg_json.read_text()), session={"id": "s", "query": "q"},
                                  quality=None, mission=None, outline=outline, ledger=[],
                                  objects=object_reader(session)))
    assert "img-src data:" in CSP  # the page's policy lets the embedded image load, and nothing else
    probe = re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", page)  # a test copy: scripts run
    probe = probe.replace("</head>", "<style>html { width: 390px; }</style></head>")
    copy = tmp_path / "probe.html"
    copy.write_text(probe.replace("</body>", FIGURE_PROBE + "</body>"), encoding="utf-8")
    result = run_chromium(copy, tmp_path / "profile", "--dump-dom", "--window-size=390,800",
                          "--virtual-time-budget=2000")
    shown = re.search(r"<title>figure:(-?\d+):(-?\d+):([^<]*)</title>", result.stdout.decode("utf-8"))
    assert shown, result.stderr.decode()[-2000:]
    assert int(shown.group(1)) > 100  # the PNG decoded
    assert 0 < int(shown.group(2)) <= 390  # and fits the phone screen
    assert shown.group(3) == "No title20k"  # the cited row is marked


def test_captions_left_unchecked_by_the_work_limit_warn_instead_of_rejecting() -> None:
    from orchestrator.graph.document_evidence import Lookups, caption_problems
    from orchestrator.graph.evidence_budget import Budget

    text = "Page one.\fFigure 1: A caption that stands on page two of the text."
    contribution = {"agent": "a", "items": {
        "sources": [{"id": "a:S1", "content_sha256": "x"}],
        "captions": [{"id": "a:C1", "source_id": "a:S1", "page": 2, "describes": "a:F1",
                      "text": "Figure 1: A caption that stands on page two of the text.",
                      "provenance": {"file": "artifacts/a/captions.json", "pointer": "/captions/0"}}]}}
    lookups = Lookups(contribution, lambda c, g: None, lambda sha: text, lambda sha: None, lambda owner: [])
    assert caption_problems(contribution, lookups, Budget()) == []
    (late,) = caption_problems(contribution, lookups, Budget(0))  # spent before
    assert late.severity == "warning" and late.rule == "caption.unchecked" and late.pointer == "/captions/0/text"
    contribution["items"]["captions"][0]["page"] = 1
    (wrong,) = caption_problems(contribution, lookups, Budget())
    assert wrong.is_error and wrong.rule == "caption.not_found" and "found on page 2" in wrong.message
