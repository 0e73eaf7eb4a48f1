"""BM25 passage index over the shared PDFs, query sanitisation, and the text helpers it uses."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agents.offline.ingest import Document, ingest_dirs
from agents.offline.keyphrases import key_phrases
from agents.offline.text import (
    dehyphenate_pages,
    normalize_page,
    sentence_spans,
    split_sentences,
)
from agents.offline.textindex import MAX_CHARS, Hit, PassageIndex, fts_query, make_passages
from orchestrator.model.terms import search_words
from tests.helpers.data import PAPERS

PDF_DIR = PAPERS


@pytest.fixture(scope="module")
def docs() -> dict[str, Document]:
    return {Path(d.source["local_path"]).name: d for d in ingest_dirs([PDF_DIR]).documents}


@pytest.fixture(scope="module")
def index(docs: dict[str, Document]) -> PassageIndex:
    return PassageIndex.build(docs.values())


# --- search --------------------------------------------------------------------------------

TOPICS = [
    ("effect of post-anthesis heat stress on wheat metabolites", "plos-one-2018-0197919.pdf"),
    ("complications of vena cava filters and heparin prophylaxis", "j-trauma-manag-outcomes-2010-4-1.pdf"),
    ("codeML selective pressure analysis of gene families", "peerj-cs-118_vespa.pdf"),
    ("inter-annotator agreement when judging faithfulness of summaries", "eacl-2023-main-121_longeval.pdf"),
    ("barriers to quality improvement at Kamuzu Central Hospital", "bmc-health-serv-res-2014-14-1.pdf"),
    ("N-domain selective angiotensin converting enzyme inhibitors", "clin-sci-2014-cs20130403.pdf"),
    ("supervised exercise in heart failure rehabilitation programmes", "rehabil-res-pract-2010-157939.pdf"),
    ("PDF parsing of academic papers into structured full text", "acl-2020-main-447_s2orc.pdf"),
]


@pytest.mark.parametrize(("query", "name"), TOPICS)
def test_top_hit_comes_from_the_right_paper(
    docs: dict[str, Document], index: PassageIndex, query: str, name: str
) -> None:
    hits = index.search(query, limit=5)
    assert hits and hits[0].source_id == docs[name].id
    for hit in hits:
        page_text = next(d for d in docs.values() if d.id == hit.source_id).pages[hit.page - 1]
        assert page_text[hit.char_start : hit.char_end] == hit.text  # verbatim, quotable
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


def test_hits_carry_page_numbers(docs: dict[str, Document], index: PassageIndex) -> None:
    hit = index.search("Tyr369 hydroxy group", limit=1)[0]
    doc = docs["clin-sci-2014-cs20130403.pdf"]
    assert hit.source_id == doc.id and 1 <= hit.page <= len(doc.pages)
    assert "Tyr369" in hit.text


def test_source_filter_and_limit(docs: dict[str, Document], index: PassageIndex) -> None:
    only = docs["peerj-cs-118_vespa.pdf"].id
    hits = index.search("heat stress", limit=3, source_ids=[only])
    assert len(hits) <= 3 and all(h.source_id == only for h in hits)
    assert index.search("heat stress", source_ids=[]) == []
    assert index.search("heat stress", limit=0) == []
    assert len(index.search("the analysis of data", limit=7)) == 7


@pytest.mark.parametrize(
    "query",
    ['"', "*", "NEAR", "AND(", "", "   ", 'NEAR(a b, 2) OR "x', "title:foo", "^start", "a -b +c",
     "(((", "{col1 col2}: x", "'; DROP TABLE passages; --", "\u00e9t\u00e9 \u2013 caf\u00e9", "AND OR NOT"],
)  # fmt: skip
def test_nasty_queries_never_raise(index: PassageIndex, query: str) -> None:
    hits = index.search(query)
    assert isinstance(hits, list) and all(isinstance(h, Hit) for h in hits)
    q = fts_query(query)
    assert q.count('"') % 2 == 0 and "*" not in q


def test_fts_query_sanitisation() -> None:
    assert fts_query("What is the S2ORC corpus?") == '"s2orc" OR "corpus"'
    assert fts_query("N-domain ACE, ACE") == '"domain" OR "ace"'
    assert fts_query('"*" AND ( NEAR') == '"near"'  # "and" is a stopword, the rest is syntax
    assert fts_query("the of") == '"the" OR "of"'  # only stopwords: keep them
    assert fts_query("?!") == ""


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=60))
def test_any_text_is_a_valid_query(query: str) -> None:
    with PassageIndex.build([_doc("Alpha beta gamma. Delta epsilon zeta.")]) as small:
        small.search(query)


def test_deterministic_builds(docs: dict[str, Document]) -> None:
    first, second = PassageIndex.build(docs.values()), PassageIndex.build(list(docs.values()))
    for query in ("evaluation", "quality of care", "heat stress", "citation links"):
        assert first.search(query, limit=20) == second.search(query, limit=20)
    for doc in docs.values():
        assert first.passages_for(doc.id) == second.passages_for(doc.id)


def test_build_is_fast(docs: dict[str, Document]) -> None:
    start = time.perf_counter()
    built = PassageIndex.build(docs.values())
    assert time.perf_counter() - start < 2.0
    assert len(built) > 1000 and built.source_ids() == sorted(d.id for d in docs.values())


def test_passages(docs: dict[str, Document], index: PassageIndex) -> None:
    for doc in docs.values():
        passages = index.passages_for(doc.id)
        assert passages == make_passages(doc)
        assert {p.page for p in passages} == set(range(1, len(doc.pages) + 1))
        for p in passages:
            assert doc.pages[p.page - 1][p.char_start : p.char_end] == p.text
            assert p.text == p.text.strip() and "\f" not in p.text
        for page in {p.page for p in passages}:
            numbers = [p.passage for p in passages if p.page == page]
            assert numbers == list(range(1, len(numbers) + 1))
    sizes = [len(p.text) for d in docs.values() for p in index.passages_for(d.id)]
    assert sum(s <= MAX_CHARS for s in sizes) / len(sizes) > 0.95


def test_passages_hold_one_to_three_sentences() -> None:
    doc = _doc(" ".join(f"Sentence number {i} is here." for i in range(10)))
    assert [p.text.count(".") for p in make_passages(doc)] == [3, 3, 3, 1]


def test_file_backed_index(tmp_path: Path) -> None:
    path = tmp_path / "index.sqlite"
    docs = [_doc("Cats purr loudly. Dogs bark."), _doc("Birds sing at dawn.\fCats sleep all day.")]
    built = PassageIndex.build(docs, path)
    expected = built.search("cats")
    built.close()
    with PassageIndex.open(path) as reopened:
        assert reopened.search("cats") == expected
        assert {(h.page, h.text) for h in expected} == {
            (1, "Cats purr loudly. Dogs bark."),
            (2, "Cats sleep all day."),
        }
    PassageIndex.build(docs[:1], path).close()  # rebuilding replaces the file
    with PassageIndex.open(path) as rebuilt:
        assert len(rebuilt) == 1
    with pytest.raises(FileNotFoundError):
        PassageIndex.open(tmp_path / "missing.sqlite")


def test_equal_scores_are_ordered_by_source_page_passage() -> None:
    docs = [_doc(f"Same words here. Marker {i}.") for i in range(4)]
    hits = PassageIndex.build(reversed(docs)).search("same words")
    assert [h.source_id for h in hits] == sorted(d.id for d in docs)


def test_fts5_is_available() -> None:
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE t USING fts5(x, tokenize='porter unicode61')")


# --- text helpers --------------------------------------------------------------------------


def test_sentence_splitting() -> None:
    text = (
        "Lo et al. (2020) built S2ORC. It holds 81.1M papers, e.g. from PubMed, i.e. many. "
        "See Fig. 3 and Mary J. O'Connell's work. This was shown.[12] Next we test [3]. "
        "Is it? Yes! The U.S. Army agreed."
    )
    assert split_sentences(text) == [
        "Lo et al. (2020) built S2ORC.",
        "It holds 81.1M papers, e.g. from PubMed, i.e. many.",
        "See Fig. 3 and Mary J. O'Connell's work.",
        "This was shown.[12]",
        "Next we test [3].",
        "Is it?",
        "Yes!",
        "The U.S. Army agreed.",
    ]


def test_sentence_spans_are_verbatim_and_respect_structure() -> None:
    text = "1 Introduction\nAcademic papers are an important\ndomain. More text.\n\nNew paragraph"
    spans = sentence_spans(text)
    assert [text[a:b] for a, b in spans] == [
        "1 Introduction",
        "Academic papers are an important\ndomain.",
        "More text.",
        "New paragraph",
    ]
    long = "word " * 400
    assert all(b - a <= 800 for a, b in sentence_spans(long))


def test_dehyphenation_uses_the_document_vocabulary() -> None:
    pages = [
        "the informa-\ntion was long-\nform text, and long-form again,\n",
        "an automatically-\ndetected span; COVID-\n19 cases; the corpus and cor-\npus.",
    ]
    assert dehyphenate_pages([normalize_page(p) for p in pages]) == [
        "the information\nwas long-form\ntext, and long-form again,",
        "an automatically-detected\nspan; COVID-19\ncases; the corpus and corpus.",
    ]


def test_normalisation_and_tokens() -> None:
    assert normalize_page("\ufb01ne\u00a0 text\u00ad\r\n\n\n\nnext\fpage ") == "fine text\n\nnext\npage"
    assert search_words("N-domain, S2ORC's 81.1M caf\u00e9", sqlite=True) == [
        "n",
        "domain",
        "s2orc",
        "s",
        "81",
        "1m",
        "caf\u00e9",
    ]


def test_key_phrases() -> None:
    text = (
        "Heat stress reduces wheat yield. Heat stress also changes metabolite levels in flag leaves. "
        "Metabolite levels were measured by mass spectrometry. The heat stress response differs."
    )
    phrases = key_phrases(text, top_n=3)
    assert phrases == key_phrases(text, top_n=3)
    assert phrases[:2] == ["heat stress", "metabolite levels"]
    assert key_phrases("the of and") == []


def _doc(text: str) -> Document:
    from agents.offline.documents import make_document

    pages = text.split("\f")
    return make_document({"type": "local-document", "title": pages[0][:20]}, pages)
