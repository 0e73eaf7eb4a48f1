"""Citation data read from the real shared PDFs: venue, volume, issue, pages and DOI reach BibTeX and CSL."""

from __future__ import annotations

from pathlib import Path

import pytest

from agents.offline.citemeta import publication_fields
from agents.offline.pdfmeta import read_pdf
from orchestrator.report.bibliography import to_bibtex, to_csl_json
from orchestrator.report.publication import publication
from tests.helpers.data import PAPERS


@pytest.fixture(scope="module")
def papers() -> Path:
    return PAPERS


def _source(path: Path) -> dict[str, object]:
    fields, _ = read_pdf(path)
    return {"id": path.stem, **{k: v for k, v in fields.items() if v is not None}}


def test_a_journal_pdf_gives_venue_volume_pages_and_doi_to_bibtex(papers: Path) -> None:
    from pybtex.database import parse_string
    from pybtex.plugin import find_plugin

    source = _source(papers / "clin-sci-2014-cs20130403.pdf")
    assert source["venue"] == "Clinical Science" and source["doi"] == "10.1042/CS20130403"
    bib = parse_string(to_bibtex([source]), "bibtex")
    entry = next(iter(bib.entries.values()))
    assert entry.type == "article"
    assert (entry.fields["journal"], entry.fields["volume"], entry.fields["pages"]) == (
        "Clinical Science", "126", "305--313")
    assert entry.fields["doi"] == "10.1042/CS20130403"
    style = find_plugin("pybtex.style.formatting", "plain")()
    text = next(iter(style.format_bibliography(bib))).text.render_as("text")
    assert "Clinical Science" in text and "126" in text and "305" in text


def test_acl_and_eacl_proceedings_carry_their_venue_and_page_range(papers: Path) -> None:
    acl = _source(papers / "acl-2020-main-447_s2orc.pdf")
    eacl = _source(papers / "eacl-2023-main-121_longeval.pdf")
    assert acl["type"] == eacl["type"] == "conference-paper"
    bib = to_bibtex([acl, eacl])
    acl_venue = "Proceedings of the 58th Annual Meeting of the Association for Computational Linguistics"
    assert f"booktitle = {{{acl_venue}}}" in bib
    assert "pages = {4969--4983}" in bib and "pages = {1650--1669}" in bib
    assert "European Chapter of the Association for Computational Linguistics" in bib


@pytest.mark.parametrize(("name", "venue", "volume", "pages"), [
    ("bmc-health-serv-res-2014-14-1.pdf", "BMC Health Services Research", "14", "1"),
    ("j-trauma-manag-outcomes-2010-4-1.pdf", "Journal of Trauma Management & Outcomes", "4", "1"),
    ("plos-one-2018-0197919.pdf", "PLoS ONE", "13", "e0197919"),
    ("rehabil-res-pract-2010-157939.pdf", "Rehabilitation Research and Practice", "2010", "157939"),
    ("peerj-cs-118_vespa.pdf", "PeerJ Comput. Sci", "3", "e118"),
])
def test_publication_lines_in_each_house_style_are_read(papers: Path, name: str, venue: str, volume: str,
                                                       pages: str) -> None:
    from pypdf import PdfReader

    texts = [page.extract_text() or "" for page in PdfReader(papers / name).pages[:4]]
    found = publication_fields(texts)
    assert (found["venue"], found["volume"], found["pages"]) == (venue, volume, pages)


def test_csl_json_carries_volume_issue_and_page(papers: Path) -> None:
    (item,) = to_csl_json([_source(papers / "plos-one-2018-0197919.pdf")])
    assert (item["volume"], item["issue"], item["page"]) == ("13", "6", "e0197919")
    assert item["DOI"] == "10.1371/journal.pone.0197919"


def test_an_arxiv_journal_reference_is_split_into_venue_volume_and_pages() -> None:
    ref = {"extra": {"journal_ref": "European Journal of Combinatorics 31 (2010) 379-400"}}
    assert publication(ref) == {"venue": "European Journal of Combinatorics", "volume": "31", "pages": "379--400"}
    assert publication({"extra": {"journal_ref": "Phys.Rev.D80:084030,2009"}})["volume"] == "80"
    assert publication({"extra": {"journal_ref": "Talk given at a workshop"}}) == {}
