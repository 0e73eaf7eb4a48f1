"""Answer retrieval over the shared papers: splitting, sections, expansion, answer types, dedup, accuracy."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from agents.offline.corpus import Corpus
from agents.offline.expansion import find_abbreviations, lay_expansions
from agents.offline.ingest import ingest_dirs
from agents.offline.qtype import classify, fit
from agents.offline.retrieval import Answer, Retriever, dedupe, retriever_for
from agents.offline.sections import detect_sections, heading_kind
from agents.offline.sentences import Sentence
from agents.offline.text import normalize_pages, split_sentences
from agents.offline.textindex import PassageIndex
from tests.helpers.data import PAPERS

EVAL = Path(__file__).resolve().parents[1] / "benchmarks" / "eval" / "questions.jsonl"


@pytest.fixture(scope="module")
def corpus() -> Corpus:
    docs = ingest_dirs([PAPERS]).documents
    return Corpus({d.id: d for d in docs}, PassageIndex.build(docs))


@pytest.fixture(scope="module")
def retriever(corpus: Corpus) -> Retriever:
    return retriever_for(corpus)


def _doc(corpus: Corpus, name: str) -> str:
    return next(sid for sid, d in corpus.documents.items() if name in str(d.source.get("local_path", "")))


# --- sentence splitting -------------------------------------------------------------------------------

def test_a_footnote_glued_to_its_number_is_not_merged_into_the_sentence_above() -> None:
    page = ("Unfortunately, none of the surveyed papers\nthat reported human evaluation results on PubMed\n"
            "7We assume all summary units get an equal weight. However,\nsome units matter more.")
    sentences = split_sentences(page)
    assert "We assume all summary units get an equal weight." in sentences
    assert not any("PubMed 7We" in s or "PubMed\n7We" in s for s in sentences)


def test_sentences_join_across_line_breaks_and_hyphenation() -> None:
    (page,) = normalize_pages(["The informa-\ntion was collected from\nall participants. Next, the data were cleaned."])
    assert split_sentences(page) == ["The information was collected from all participants.",
                                     "Next, the data were cleaned."]


def test_a_decimal_that_extraction_cut_with_a_space_does_not_end_a_sentence() -> None:
    assert split_sentences("N-domain 21. 03 +- 0.27 2896 11.21 +- 0.74 927. The dose was 5. 12 patients died.") == [
        "N-domain 21. 03 +- 0.27 2896 11.21 +- 0.74 927.", "The dose was 5.", "12 patients died."]


def test_a_numbered_heading_is_not_glued_to_the_first_sentence() -> None:
    page = ("The protocol was approved by the ethics committee.\n3. Results\nThemes identified from the focus\n"
            "groups included confidence and morale.")
    assert split_sentences(page)[1:] == ["3. Results", "Themes identified from the focus groups included "
                                                       "confidence and morale."]


def test_a_real_footnote_is_cut_off_in_the_longeval_paper(corpus: Corpus) -> None:
    doc = corpus.documents[_doc(corpus, "longeval")]
    sentences = [s for page in doc.pages for s in split_sentences(page)]
    assert "We assume all summary units get an equal weight." in sentences
    assert not any("PubMed 7We" in s for s in sentences)


# --- sections and abbreviations ------------------------------------------------------------------------

def test_headings_are_recognised_in_their_usual_forms() -> None:
    assert heading_kind("2.1 Methods") == "methods"
    assert heading_kind("MATERIALS AND METHODS") == "methods"
    assert heading_kind("Limitations") == "limitations"
    assert heading_kind("Methods are described in the appendix of this long sentence.") is None


def test_sections_of_a_real_paper_come_in_reading_order(corpus: Corpus) -> None:
    sections = detect_sections(corpus.documents[_doc(corpus, "vespa")].pages)
    kinds = list(sections.kinds)
    for earlier, later in [("abstract", "introduction"), ("introduction", "methods"), ("methods", "results"),
                           ("results", "discussion"), ("discussion", "references")]:
        assert kinds.index(earlier) < kinds.index(later)
    assert sections.at(1, 0) == "front"


def test_abbreviations_defined_in_a_paper_expand_the_query(corpus: Corpus, retriever: Retriever) -> None:
    found = find_abbreviations([corpus.documents[_doc(corpus, "trauma")].text])
    assert found["ivc"] == "inferior vena cava" and found["dvt"] == "deep venous thrombosis"
    assert all(ch != "(" for ch in "".join(found.values()))
    groups = dict(retriever.expand("What does IVC mean?"))
    assert {"inferior", "vena", "cava"} <= groups["ivc"]
    reverse = dict(retriever.expand("How often does deep venous thrombosis occur?"))
    assert "dvt" in reverse  # the long form brings its abbreviation along


def test_lay_words_reach_the_papers_vocabulary(retriever: Retriever) -> None:
    assert "renal" in lay_expansions("kidney") and "kidney" in lay_expansions("renal")
    groups = dict(retriever.expand("Does hot weather after flowering cut kidney function?"))
    assert "anthesi" in groups["flower"] and "heat" in groups["hot"]
    assert groups["kidney"] == set()  # only words some paper uses are added


# --- answer types and dedup ------------------------------------------------------------------------------

def test_question_types_decide_which_sentence_fits() -> None:
    many = classify("How many patients were enrolled in the trial?")
    assert many.numeric and many.counted == "patie"
    assert fit(many, "In total 120 patients were enrolled.", "results", "") > fit(
        many, "Patients were enrolled at two sites.", "results", "")
    # a count of the noun outranks a share of it: "(7.2%) papers" does not say how many papers there are
    papers = classify("How many papers does the corpus contain?")
    assert fit(papers, "It holds 81.1M English-language academic papers.", "results", "") > fit(
        papers, "Biomedical (42.7%) and computer science (7.2%) papers make up half of it.", "results", "")
    assert fit(papers, "About 8 million papers were parsed.", "results", "") == fit(
        papers, "It holds 81.1M papers.", "results", "")
    share = classify("What percentage of respondents were satisfied?")
    assert share.unit == "percent" and fit(share, "Of them 59% were satisfied.", "results", "") > fit(
        share, "Of them 59 were satisfied.", "results", "")
    limits = classify("What are the limitations of the study?")
    assert limits.limitation and fit(limits, "The small size of the sample limits generalisation.",
                                     "limitations", "") > fit(limits, "The sample was recruited in 2010.",
                                                              "methods", "")
    assert classify("What does ESRD stand for?").definition == "esrd"
    assert classify("Where do people sleep?").label == "open"


@pytest.mark.parametrize("question", [
    "How common is DVT after trauma?", "How likely is a relapse?", "How similar must two titles be to match?",
    "What's the Ki of 33RE?", "How frequently did patients return?"])
def test_questions_in_a_readers_words_still_ask_for_a_value(question: str) -> None:
    assert classify(question).numeric


@pytest.mark.parametrize("question", [
    "What is still missing from the research on retrievable filters?", "Which gaps in the evidence remain?",
    "What does the benchmark leave out?", "Why can't the results be applied to every patient?"])
def test_a_gap_asked_for_in_a_readers_words_is_a_limitations_question(question: str) -> None:
    assert classify(question).limitation


def test_a_why_question_prefers_the_sentence_that_gives_a_cause() -> None:
    why = classify("Why is the homology search left partly manual?")
    assert why.reason and classify("What's the reason for the delay?").reason
    assert classify("Explain why the search is manual.").reason and classify("What\u2019s the Ki of 33RE?").numeric
    assert fit(why, "The searches are not automated because they need a cluster.", "discussion", "") > fit(
        why, "The searches are not automated.", "discussion", "")


def test_a_when_question_prefers_a_time_and_how_many_counts_whatever_else_it_names() -> None:
    when = classify("When did they begin the heat treatments?")
    assert when.timing and fit(when, "Heat stress was started 10 days after anthesis.", "methods", "") > fit(
        when, "Heat stress was applied in growth chambers.", "methods", "")
    assert classify("In which year did the trial start?").timing and classify("How long after the injury?").timing
    assert not classify("When VESPA was run on the masked alignments, how did its results compare?").timing
    assert classify("How many varieties did they test at high temperatures?").unit == ""
    assert classify("What temperature did the plants get?").unit == "temperature"


def test_a_yes_no_question_over_a_long_paper_is_not_answered_by_its_results_section_alone() -> None:
    asked = classify("Did they use a cryoprotectant?")
    methods, results = "No cryoprotectant was used.", "Crystals appeared within 3 days."
    assert fit(asked, results, "results", "") > fit(asked, methods, "methods", "")  # an abstract: its results
    assert fit(asked, results, "results", "", abstract=False) == fit(asked, methods, "methods", "", abstract=False)


def test_near_duplicate_sentences_are_quoted_once() -> None:
    def answer(text: str, page: int) -> Answer:
        return Answer(Sentence("S1", page, 0, len(text), text), 1.0, 1.0, "results")

    kept = dedupe([answer("We introduce S2ORC, a large corpus of 81.1M English-language academic papers.", 1),
                   answer("We introduce S2ORC, a large corpus of 81.1M English-language academic papers!", 2),
                   answer("The corpus is distributed under an open license for research use.", 3)], 5, set())
    assert [a.sentence.page for a in kept] == [1, 3]
    opposite = [answer("Daily caffeine intake increased total sleep duration in healthy older adults.", 1),
                answer("Daily caffeine intake decreased total sleep duration in healthy older adults.", 2)]
    assert len(dedupe(opposite, 5, set())) == 2  # a contradiction is not a duplicate


def test_a_question_about_these_papers_quotes_several_of_them(retriever: Retriever) -> None:
    answers = retriever.search("What methods do these papers use?", limit=8)
    per_paper = Counter(a.sentence.source_id for a in answers)
    assert len(per_paper) >= 4 and max(per_paper.values()) <= 3


def test_a_numeric_question_gets_a_sentence_with_the_number_and_unit(retriever: Retriever, corpus: Corpus) -> None:
    answers = retriever.search("What percentage of long-form summarization papers do not perform any human "
                               "evaluation?", limit=3)
    assert answers and answers[0].sentence.source_id == _doc(corpus, "longeval")
    assert "73%" in answers[0].sentence.flat


def test_a_yes_no_question_about_a_long_paper_is_answered_from_the_section_that_says_it(
        retriever: Retriever) -> None:
    answers = retriever.search("Does VESPA support both lineage-site and site-specific analyses?", limit=3)
    assert answers and "can perform both lineage-site specific and site-specific" in answers[0].sentence.flat


def test_how_common_asks_for_the_rate(retriever: Retriever) -> None:
    answers = retriever.search("Without thromboprophylaxis, how common is deep venous thrombosis after "
                               "multisystem trauma?", limit=3)
    assert answers and "exceed 50%" in answers[0].sentence.flat


@pytest.mark.parametrize(("domain", "value"), [("N", "11.21"), ("C", "10 395")])
def test_a_table_row_is_chosen_by_the_label_the_question_names(retriever: Retriever, domain: str, value: str) -> None:
    answers = retriever.search(f"What is the Ki of compound 33RE against the {domain}-domain?", limit=3)
    assert answers and answers[0].sentence.flat.startswith(f"{domain}-domain") and value in answers[0].sentence.flat


def test_a_limitations_question_finds_the_limitations_paragraph(retriever: Retriever, corpus: Corpus) -> None:
    answers = retriever.search("What are the limitations of the heart failure focus group study?", limit=3)
    assert any("small size of the focus groups" in a.sentence.flat for a in answers)


def test_an_out_of_scope_question_gets_nothing_to_cite(retriever: Retriever) -> None:
    assert retriever.search("Who won the 2018 FIFA World Cup?") == []
    assert retriever.search("What is the GDP per capita of Norway?") == []
    # the page header near the first sentence names the ACL, but no sentence says anything about a president
    assert retriever.search("Who is the president of the Association for Computational Linguistics?") == []


def test_every_quoted_sentence_is_verbatim_in_its_page(retriever: Retriever, corpus: Corpus) -> None:
    for answer in retriever.search("What are the complications of inferior vena cava filters?", limit=6):
        s = answer.sentence
        assert corpus.documents[s.source_id].pages[s.page - 1][s.start:s.end] == s.text


# --- accuracy on a few eval questions (may fail: it measures retrieval, not plumbing) ------------------------

@pytest.mark.parametrize("qid", ["E05", "E09", "E17", "E26", "E28"])
def test_eval_questions_are_answered_from_the_right_paper(qid: str, retriever: Retriever, corpus: Corpus) -> None:
    question = next(q for q in map(json.loads, EVAL.read_text().splitlines()) if q["id"] == qid)
    answers = retriever.search(question["question"], limit=5)
    expected = _doc(corpus, question["paper"])
    assert any(question["answer"].casefold() in a.sentence.flat.casefold() and a.sentence.source_id == expected
               for a in answers), [a.sentence.flat for a in answers]


def test_the_shared_index_is_json_and_restores_the_same_ranking(corpus: Corpus, tmp_path: Path) -> None:
    built = Retriever.cached(corpus, tmp_path)
    (stored,) = tmp_path.glob("retriever-*.json")
    json.loads(stored.read_text())  # plain data, never a pickle
    loaded = Retriever.cached(corpus, tmp_path)
    question = "What does IVC mean in the trauma thrombosis review?"
    assert [(a.sentence, a.score) for a in loaded.search(question)] == [
        (a.sentence, a.score) for a in built.search(question)]
    stored.write_text("{damaged")
    assert Retriever.cached(corpus, tmp_path).search(question)  # a damaged file is rebuilt


# --- grounding: the question's key term in the passage or its paper (agents/offline/grounding.py) -------------

def test_a_near_topic_question_about_another_papers_subject_is_declined(retriever: Retriever) -> None:
    # the wheat paper reports yield losses under heat, never grain protein (which the ACE and VESPA papers are
    # about): retrieval found the yield sentences, in the reader's words and in the paper's own
    assert retriever.search("How much did heat after flowering cut the protein content of the wheat grain?") == []
    assert retriever.search("By how much did post-anthesis heat stress reduce grain protein content in the "
                            "wheat genotypes?") == []


def test_a_paraphrase_whose_key_word_is_another_papers_subject_is_still_answered(
        retriever: Retriever, corpus: Corpus) -> None:
    # "family" is VESPA's gene families, but "family doctor" is the heart failure paper's "GPs"
    answers = retriever.search("What do heart failure patients think of their family doctor's ability to help "
                               "them?", limit=5)
    assert any("GPs" in a.sentence.flat and a.sentence.source_id == _doc(corpus, "rehabil") for a in answers)
    # "amino acid", asked in a reader's words, is what the ACE paper is about
    answers = retriever.search("Which amino acid seems to be the main reason 33RE prefers the N-terminal domain?")
    assert any("Tyr369" in a.sentence.flat for a in answers)
