"""Printed page numbers: read from the papers' running headers and footers, cited in reports, linked to the PDF page."""

from __future__ import annotations

import copy
import logging
from typing import Any

import pytest

from agents.offline.ingest import ingest_file
from agents.offline.pagelabels import printed_labels
from orchestrator.graph.citations import Citer
from orchestrator.report.html import render_html
from orchestrator.report.sections import PRINTED_PAGES_NOTE
from tests.helpers.data import PAPERS
from tests.test_report import AR, OUTLINE, make_graph, render


@pytest.fixture(scope="module")
def labels() -> dict[str, list[str] | None]:
    logging.getLogger("pypdf").setLevel(logging.ERROR)
    found = {}
    for name in ("acl-2020-main-447_s2orc.pdf", "bmc-health-serv-res-2014-14-1.pdf",
                 "clin-sci-2014-cs20130403.pdf", "eacl-2023-main-121_longeval.pdf"):
        doc = ingest_file(PAPERS / name)
        found[name] = doc.source.get("page_labels")
        assert found[name] is None or len(found[name]) == len(doc.pages)
    return found


def test_printed_numbers_come_from_the_running_header_or_footer(labels: dict[str, list[str] | None]) -> None:
    acl = labels["acl-2020-main-447_s2orc.pdf"]
    assert acl is not None and acl[0] == "4969" and acl[2] == "4971" and acl[-1] == "4983"  # "pages 4969-4983"
    assert labels["clin-sci-2014-cs20130403.pdf"][:2] == ["305", "306"]  # "Clinical Science (2014) 126, 305-313"
    assert labels["eacl-2023-main-121_longeval.pdf"][0] == "1650"


def test_the_printed_page_wins_over_wrong_pdf_page_labels(labels: dict[str, list[str] | None]) -> None:
    # BioMed Central's /PageLabels start at 0; the page itself says "Page 1 of 10".
    assert labels["bmc-health-serv-res-2014-14-1.pdf"][:3] == ["1", "2", "3"]


def test_no_running_number_means_no_labels_and_pdf_labels_are_the_fallback() -> None:
    pages = ["Some prose about a topic.\nMore prose here."] * 4
    assert printed_labels(pages) is None
    assert printed_labels(pages, ["i", "ii", "1", "2"]) == ["i", "ii", "1", "2"]
    assert printed_labels(["only one page"]) is None
    footers = [f"Body text of page {n}.\nJournal of Things 12 ({n + 99})\n{n + 99}" for n in range(1, 5)]
    assert printed_labels(footers) == ["100", "101", "102", "103"]


def _labelled_graph() -> dict[str, Any]:
    graph = make_graph()
    source = graph["sources"][0]
    source["page_labels"] = [str(n) for n in range(301, 311)]
    source["local_path"] = "/papers/engines of analysis.pdf"
    return graph


def test_report_cites_the_printed_page_and_says_so_once() -> None:
    markdown = render(_labelled_graph(), outline=OUTLINE)
    assert "[1, p. 304]" in markdown and "[1, p. 4]" not in markdown  # PDF page 4 is printed 304
    assert markdown.count(PRINTED_PAGES_NOTE) == 1
    assert "p. 304 (PDF page 4)" in markdown  # the quoted snippet says where it stands in the PDF
    plain = render(make_graph(), outline=OUTLINE)
    assert PRINTED_PAGES_NOTE not in plain and "[1, p. 4]" in plain


def test_html_links_each_printed_page_to_its_pdf_page() -> None:
    from tests.test_report import LEDGER, SESSION, mission_dict

    html = render_html(_labelled_graph(), session=SESSION, quality=None, mission=mission_dict(),
                       outline=OUTLINE, ledger=LEDGER)
    assert 'href="file:///papers/engines%20of%20analysis.pdf#page=4">304</a>' in html


def test_citer_keeps_pdf_pages_for_verification_and_printed_ones_for_readers() -> None:
    graph = _labelled_graph()
    citer = Citer(copy.deepcopy(graph))
    citation = citer.cite(f"{AR}:C1")
    assert citation is not None
    ref = citation.refs[0]
    assert ref.pages == (4,) and ref.printed == ("304",) and citation.label() == "[1, p. 304]"
    assert citer.printed_pages()
