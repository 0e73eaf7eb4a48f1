"""Ingestion: the 8 real open-access PDFs, text-like files, skips, and arXiv metadata libraries."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pytest
from pypdf import PdfWriter

from agents.offline.ingest import Document, IngestResult, ingest_dirs, ingest_file, read_library
from agents.offline.text import normalize_ws
from tests.helpers.data import ARXIV_LIBRARY, PAPERS

PDF_DIR = PAPERS
ARXIV_FILE = ARXIV_LIBRARY

# file -> (real title, year, first author, pages, DOI or None); from SOURCES.md and the PDFs.
PAPERS = {
    "acl-2020-main-447_s2orc.pdf": (
        "S2ORC: The Semantic Scholar Open Research Corpus", 2020, "Kyle Lo", 15, None,
    ),
    "bmc-health-serv-res-2014-14-1.pdf": (
        "Understanding the barriers to setting up a healthcare quality improvement process in "
        "resource-limited settings: a situational analysis at the Medical Department of Kamuzu "
        "Central Hospital in Lilongwe, Malawi",
        2014, "Josephine Nana Afrakoma Agyeman-Duah", 10, "10.1186/1472-6963-14-1",
    ),
    "clin-sci-2014-cs20130403.pdf": (
        "Fragment-based design for the development of N-domain-selective angiotensin-1-converting "
        "enzyme inhibitors",
        2014, "Ross G. Douglas", 13, "10.1042/CS20130403",
    ),
    "eacl-2023-main-121_longeval.pdf": (
        "LongEval: Guidelines for Human Evaluation of Faithfulness in Long-form Summarization",
        2023, "Kalpesh Krishna", 20, None,
    ),
    "j-trauma-manag-outcomes-2010-4-1.pdf": (
        "Complications related to deep venous thrombosis prophylaxis in trauma: a systematic review "
        "of the literature",
        2010, "Indraneel Datta", 4, "10.1186/1752-2897-4-1",
    ),
    "peerj-cs-118_vespa.pdf": (
        "VESPA: Very large-scale Evolutionary and Selective Pressure Analyses",
        2017, "Andrew E. Webb", 16, "10.7717/peerj-cs.118",
    ),
    "plos-one-2018-0197919.pdf": (
        "Comparative physiological and metabolomics analysis of wheat (Triticum aestivum L.) "
        "following post-anthesis heat stress",
        2018, "Kayla Thomason", 21, "10.1371/journal.pone.0197919",
    ),
    "rehabil-res-pract-2010-157939.pdf": (
        "Patient Experiences of Structured Heart Failure Programmes", 2010, "Nuala E. Tully", 6,
        "10.1155/2010/157939",
    ),
}  # fmt: skip


@pytest.fixture(scope="module")
def pdfs() -> dict[str, Document]:
    result = ingest_dirs([PDF_DIR])
    # the dataset's own notes are not a research source
    assert [(s.path.name, s.reason.split(",")[0]) for s in result.skipped] == [("SOURCES.md", "dataset notes")]
    return {Path(d.source["local_path"]).name: d for d in result.documents}


def _by_name(result: IngestResult) -> dict[str, Document]:
    return {Path(d.source["local_path"]).name: d for d in result.documents}


def _reasons(result: IngestResult) -> dict[str, str]:
    return {s.path.name: s.reason for s in result.skipped}


# --- the shared PDFs -------------------------------------------------------------------------


def test_all_papers_are_ingested_and_the_sources_note_is_not(pdfs: dict[str, Document]) -> None:
    assert set(PAPERS) == set(pdfs)
    notes = ingest_dirs([PDF_DIR], include_notes=True)  # unless asked for
    assert {Path(d.source["local_path"]).name for d in notes.documents} == set(PAPERS) | {"SOURCES.md"}


@pytest.mark.parametrize("name", sorted(PAPERS))
def test_pdf_bibliographic_fields(pdfs: dict[str, Document], name: str) -> None:
    title, year, first_author, _, doi = PAPERS[name]
    source = pdfs[name].source
    assert source["title"].casefold() == title.casefold()
    assert source["year"] == year
    assert source["authors"][0] == first_author
    assert source.get("doi") == doi
    if doi:
        assert source["type"] == "journal-article" and source["peer_reviewed"] is True
        assert source["url"] == f"https://doi.org/{doi}"
    else:
        assert source["type"] == "conference-paper" and source["venue"].startswith("Proceedings of the")


def test_full_author_lists(pdfs: dict[str, Document]) -> None:
    assert pdfs["peerj-cs-118_vespa.pdf"].source["authors"] == [
        "Andrew E. Webb", "Thomas A. Walsh", "Mary J. O\u2019Connell",
    ]  # fmt: skip
    assert pdfs["bmc-health-serv-res-2014-14-1.pdf"].source["authors"] == [
        "Josephine Nana Afrakoma Agyeman-Duah", "Antje Theurer", "Charles Munthali", "Noor Alide",
        "Florian Neuhann",
    ]  # fmt: skip
    assert pdfs["clin-sci-2014-cs20130403.pdf"].source["authors"][-1] == "Edward D. Sturrock"
    assert len(pdfs["eacl-2023-main-121_longeval.pdf"].source["authors"]) == 7


@pytest.mark.parametrize("name", sorted(PAPERS))
def test_pages_follow_the_store_convention(pdfs: dict[str, Document], name: str) -> None:
    doc = pdfs[name]
    n_pages = PAPERS[name][3]
    assert len(doc.pages) == n_pages > 1
    assert doc.text.count("\f") == n_pages - 1
    assert doc.text.split("\f") == list(doc.pages)
    sha = hashlib.sha256(doc.text.encode("utf-8")).hexdigest()
    assert doc.content_sha256 == doc.source["content_sha256"] == sha
    assert doc.source["id"] == f"src-{sha[:12]}"
    assert all(p.strip() for p in doc.pages)


def test_stored_text_is_normalised(pdfs: dict[str, Document]) -> None:
    text = "\f".join(d.text for d in pdfs.values())
    assert not re.search("[\ufb00-\ufb06\u00ad\r]", text)  # ligatures, soft hyphens
    assert not re.search(r"[a-z]-\n[a-z]", text)  # every line-break hyphen was resolved
    acl = pdfs["acl-2020-main-447_s2orc.pdf"].text
    assert "The corpus consists of rich metadata" in normalize_ws(acl)  # "cor-\npus" rejoined
    assert "automatically-detected" in acl  # a real compound keeps its hyphen
    assert "artificial" in acl.casefold()  # "ﬁ" ligature expanded


def test_pdf_abstracts(pdfs: dict[str, Document]) -> None:
    assert pdfs["acl-2020-main-447_s2orc.pdf"].source["abstract"].startswith("We introduce S2ORC")
    assert pdfs["plos-one-2018-0197919.pdf"].source["abstract"].endswith("genetic improvement.")
    assert "abstract" not in pdfs["rehabil-res-pract-2010-157939.pdf"].source  # no clear heading


def test_pdf_ingest_is_deterministic() -> None:
    path = PDF_DIR / "j-trauma-manag-outcomes-2010-4-1.pdf"
    assert ingest_file(path) == ingest_file(path)


# --- text-like files and skips -------------------------------------------------------------


def test_markdown(tmp_path: Path) -> None:
    (tmp_path / "notes.md").write_text(
        "# My **Research** Notes\n\nSome **bold** and _emphasis_ with a [link](http://x.org) and `code`.\n"
        "\n## Section\n\n* item one\n* item two\n\nCall `f(*args, **kwargs)` or `<div>` or ``a `b` c``.\n"
        "\n```\nprint(1)\n```\n",
        encoding="utf-8",
    )
    doc = ingest_dirs([tmp_path]).documents[0]
    assert doc.source["title"] == "My Research Notes"
    assert len(doc.pages) == 1
    assert "Some bold and emphasis with a link and `code`." in doc.text
    assert "- item one" in doc.text and "print(1)" in doc.text
    # headings keep their level marks (a claim cites its section by them); code spans stay verbatim
    assert doc.text.startswith("# My Research Notes\n") and "\n## Section\n" in doc.text
    assert "Call `f(*args, **kwargs)` or `<div>` or ``a `b` c``." in doc.text
    assert not re.search(r"\*\*(?!kwargs)|\]\(|```", doc.text)


def test_markdown_front_matter_and_setext(tmp_path: Path) -> None:
    (tmp_path / "a.markdown").write_text(
        "---\ntitle: Field notes\nauthor: Ada Lovelace, Charles Babbage\ndate: 1843-07-01\n---\n"
        "Heading\n=======\n\nBody text.\n",
        encoding="utf-8",
    )
    doc = ingest_dirs([tmp_path]).documents[0]
    assert doc.source["title"] == "Field notes"
    assert doc.source["authors"] == ["Ada Lovelace", "Charles Babbage"]
    assert doc.source["year"] == 1843
    assert "title:" not in doc.text and "===" not in doc.text
    assert doc.text.startswith("# Heading\n")


def test_html(tmp_path: Path) -> None:
    (tmp_path / "page.html").write_text(
        "<html><head><title>Page  Title</title><style>.x{color:red}</style>"
        '<meta name="citation_author" content="Grace Hopper">'
        '<meta name="citation_doi" content="10.1000/xyz1">'
        "<script>var secret = 1;</script></head><body><nav>Home | Menu</nav><h1>Heading</h1>"
        "<p>Hello &amp; welcome.</p><p>Second   paragraph.</p></body></html>",
        encoding="utf-8",
    )
    (tmp_path / "other.htm").write_text("<body><h1>Only a heading</h1><p>Text here.</p></body>")
    docs = _by_name(ingest_dirs([tmp_path]))
    page = docs["page.html"]
    assert page.source["title"] == "Page Title"
    assert page.source["authors"] == ["Grace Hopper"]
    assert page.source["doi"] == "10.1000/xyz1" and page.source["type"] == "journal-article"
    assert "Hello & welcome." in page.text and "Second paragraph." in page.text
    assert "\n# Heading\n" in f"\n{page.text}"  # an HTML heading reads as a Markdown heading line
    assert "secret" not in page.text and "Menu" not in page.text and "color" not in page.text
    assert docs["other.htm"].source["title"] == "Only a heading"


def test_txt_pages_and_uppercase_extensions(tmp_path: Path) -> None:
    (tmp_path / "NOTES.TXT").write_text("Plain title\n\nFirst page.\fSecond page.\n", encoding="utf-8")
    (tmp_path / "Upper.MD").write_text("# Upper\n\ntext\n", encoding="utf-8")
    docs = _by_name(ingest_dirs([tmp_path]))
    assert docs["NOTES.TXT"].pages == ("Plain title\n\nFirst page.", "Second page.")
    assert docs["NOTES.TXT"].source["title"] == "Plain title"
    assert docs["Upper.MD"].source["title"] == "Upper"


def test_skips_with_reasons(tmp_path: Path) -> None:
    (tmp_path / "data.csv").write_text("a,b\n")
    (tmp_path / "noext").write_text("x")
    (tmp_path / "empty.txt").write_bytes(b"")
    (tmp_path / "blank.md").write_text("  \n\n")
    (tmp_path / "bin.txt").write_bytes(b"abc\x00def")
    (tmp_path / ".secret.txt").write_text("hidden")
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "config.txt").write_text("never read")
    (tmp_path / "corrupt.pdf").write_bytes(b"%PDF-1.4 not really a pdf")
    writer = PdfWriter()
    writer.add_blank_page(200, 200)
    writer.write(tmp_path / "scan.pdf")
    locked = PdfWriter()
    locked.add_blank_page(200, 200)
    locked.encrypt("secret", algorithm="RC4-128")
    locked.write(tmp_path / "locked.pdf")
    result = ingest_dirs([tmp_path, tmp_path / "missing"])
    assert result.documents == []
    reasons = _reasons(result)
    assert reasons["data.csv"] == "unsupported file type '.csv'"
    assert reasons["noext"] == "unsupported file type 'noext'"
    assert reasons["empty.txt"] == "empty file"
    assert reasons["blank.md"] == "no text"
    assert reasons["bin.txt"].startswith("binary content")
    assert reasons[".secret.txt"] == "hidden file"
    assert reasons[".git"] == "hidden folder" and "config.txt" not in reasons
    assert reasons["corrupt.pdf"].startswith("unreadable PDF (")
    assert reasons["scan.pdf"] == "no extractable text (scanned PDF?)"
    assert reasons["locked.pdf"] == "encrypted PDF (password required)"
    assert reasons["missing"] == "not found"


def test_recursive_sorted_and_deduplicated(tmp_path: Path) -> None:
    for rel in ("b/z.txt", "a/y.txt", "a/sub/x.txt", "c.txt"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(f"Text of {rel}.\n")
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "copy.txt").write_text("Text of c.txt.\n")
    first, second = ingest_dirs([tmp_path]), ingest_dirs([tmp_path])
    names = [Path(d.source["local_path"]).relative_to(tmp_path).as_posix() for d in first.documents]
    assert names == ["a/sub/x.txt", "a/y.txt", "b/z.txt", "c.txt"]
    assert _reasons(first)["copy.txt"].startswith("duplicate of ")
    assert first == second


def test_text_files_are_normalised_before_hashing(tmp_path: Path) -> None:
    (tmp_path / "n.txt").write_bytes("Ligature \ufb01le, infor-\nmation\r\nand   spaces.\n".encode())
    doc = ingest_dirs([tmp_path]).documents[0]
    assert doc.pages == ("Ligature file, information\nand spaces.",)
    assert doc.source["content_sha256"] == hashlib.sha256(doc.text.encode()).hexdigest()


# --- arXiv metadata libraries --------------------------------------------------------------


def test_shared_oai_library() -> None:
    result = read_library(ARXIV_FILE)
    lines = [x for x in ARXIV_FILE.read_text(encoding="utf-8").splitlines() if x.strip()]
    assert result.skipped == []
    assert len(result.documents) == len(lines) == 937
    assert len({d.id for d in result.documents}) == len(lines)
    brewin = next(d.source for d in result.documents if d.source["arxiv_id"] == "0903.5365")
    assert brewin["title"] == (
        "Deriving the ADM 3+1 evolution equations from the second variation of arc length"
    )
    assert brewin["authors"] == ["Leo Brewin"]
    assert brewin["year"] == 2009 and brewin["published"] == "2009-03-31"
    assert brewin["doi"] == "10.1103/PhysRevD.80.084030"
    assert brewin["type"] == "journal-article" and brewin["peer_reviewed"] is True
    assert brewin["url"] == "https://arxiv.org/abs/0903.5365"
    assert brewin["abstract"].startswith("We will show that the ADM 3+1 evolution equations")
    doc = next(d for d in result.documents if d.source["arxiv_id"] == "1001.5087")
    assert doc.source["type"] == "preprint" and doc.source["peer_reviewed"] is False
    assert doc.source["authors"] == ["Lin-Tian Luh"]
    assert doc.pages[0].startswith("The Mystery of the Shape Parameter\n\nIn this paper")


def test_snapshot_format_and_bad_lines(tmp_path: Path) -> None:
    snapshot = {
        "id": "0704.0001", "submitter": "Pavel Nadolsky",
        "authors": "C. Bal\\'azs, E. L. Berger, P. M. Nadolsky and C.-P. Yuan",
        "title": "Calculation of prompt diphoton production cross sections at Tevatron and\n  LHC energies",
        "comments": "37 pages, 15 figures", "journal-ref": "Phys.Rev.D76:013009,2007",
        "doi": "10.1103/PhysRevD.76.013009", "categories": "hep-ph",
        "abstract": "  A fully differential calculation in perturbative\nQCD is presented.\n",
        "versions": [{"version": "v1", "created": "Mon, 2 Apr 2007 19:18:42 GMT"}],
        "update_date": "2008-11-13",
        "authors_parsed": [["Balázs", "C.", ""], ["Berger", "E. L.", ""], ["Nadolsky", "P. M.", ""],
                           ["Yuan", "C. -P.", ""]],
    }  # fmt: skip
    plain = {"id": "2101.00001", "title": "A  preprint", "authors": "Ann Lee, Bo Chen and Cy Diaz",
             "abstract": "Short.", "categories": "cs.CL", "update_date": "2021-01-05"}  # fmt: skip
    lines = [
        json.dumps(snapshot), "", "{not json", json.dumps({"unexpected": True}), json.dumps(plain),
        json.dumps({"id": "2101.00002", "title": ""}), json.dumps(["0710.1248", {"title": ["T"]}]),
    ]  # fmt: skip
    path = tmp_path / "lib.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = read_library(path)
    by_id = {d.source["arxiv_id"]: d.source for d in result.documents}
    assert list(by_id) == ["0704.0001", "2101.00001", "0710.1248"]
    s = by_id["0704.0001"]
    assert (
        s["title"] == "Calculation of prompt diphoton production cross sections at Tevatron and LHC energies"
    )
    assert s["authors"] == ["C. Balázs", "E. L. Berger", "P. M. Nadolsky", "C. -P. Yuan"]
    assert s["year"] == 2007 and s["published"] == "2007-04-02"
    assert s["type"] == "journal-article" and s["peer_reviewed"] is True
    assert s["id"].startswith("src-") and s["url"] == "https://arxiv.org/abs/0704.0001"
    assert s["extra"]["journal_ref"] == "Phys.Rev.D76:013009,2007"
    p = by_id["2101.00001"]
    assert p["authors"] == ["Ann Lee", "Bo Chen", "Cy Diaz"] and p["year"] == 2021
    assert p["type"] == "preprint" and p["title"] == "A preprint"
    assert [(s.line, s.reason.split(" ")[0]) for s in result.skipped] == [
        (3, "invalid"), (4, "unrecognised"), (6, "record"),
    ]  # fmt: skip
    assert by_id["0710.1248"]["title"] == "T"
