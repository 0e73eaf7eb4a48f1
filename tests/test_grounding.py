"""The grounding part: a passage whose window and paper never speak of the question's key term is no answer."""

from __future__ import annotations

from collections import Counter

from agents.offline.grounding import PAPER_MENTIONS, SUBJECT_MIN, Grounding, Term, noun_only

#: Eight documents: "protein" is the subject of "ace" and "vespa"; "treatment" is the collection's common word.
COUNTS = {
    "ace": Counter({"protein": 16, "inhibitor": 30, "treatment": 3}),
    "vespa": Counter({"protein": 20, "gene": 60, "famili": 39, "treatment": 1}),
    "wheat": Counter({"protein": 1, "heat": 160, "grain": 70, "content": 11, "treatment": 18}),
    "rehab": Counter({"heart": 71, "gp": 5, "treatment": 9}),
    "malawi": Counter({"hospit": 49, "qualiti": 61}),
    "s2orc": Counter({"paper": 90}), "longeval": Counter({"summari": 188}), "dvt": Counter({"filter": 20}),
}
UNITS = ["wheat", "wheat", "ace", "rehab"]
WINDOWS = [{"heat", "grain", "reduc"}, {"protein", "grain"}, {"protein", "inhibitor"}, {"heart", "gp"}]


def _grounding(*terms: Term) -> Grounding:
    return Grounding(list(terms), COUNTS, UNITS, WINDOWS, None)


def test_a_term_another_paper_is_about_and_this_one_mentions_in_passing_makes_the_passage_no_answer() -> None:
    assert COUNTS["wheat"]["protein"] < PAPER_MENTIONS <= SUBJECT_MIN <= COUNTS["vespa"]["protein"]
    grounding = _grounding(Term("protein", "protein", set()), Term("heat", "heat", set()))
    assert [k.word for k in grounding.keys] == ["protein"]  # "heat" is the wheat paper's alone, and said anyway
    part = grounding.part(0)
    assert (part.check, part.confidence) == ("grounding", 0.0)
    assert "'protein'" in part.detail and "subject of 2 document(s)" in part.detail
    assert grounding.part(1).confidence == 1.0  # the window says it
    assert grounding.part(2).confidence == 1.0  # a paper about it


def test_the_collections_common_words_and_words_that_may_be_verbs_are_not_key_terms() -> None:
    # "treatment" is used by 4 of 8 documents: shared vocabulary, however often one uses it
    assert _grounding(Term("treatment", "treatment", set())).keys == []
    # "feed" may be a verb and "everyone" is a pronoun: the reader's way of asking, not a thing asked about
    assert not noun_only("feed") and not noun_only("everyone") and noun_only("protein")
    assert _grounding(Term("feed", "feed", set()), Term("everyone", "everyon", set())).keys == []
    assert _grounding(Term("versus", "versus", set())).keys == []  # no dictionary word


def test_a_population_no_document_names_is_grounded_nowhere() -> None:
    grounding = _grounding(Term("animals", "anim", set()))
    assert [(k.word, k.why) for k in grounding.keys] == [("animals", "no document names it")]
    assert {grounding.part(i).confidence for i in range(len(UNITS))} == {0.0}
    # a singular the documents never write is as likely the reader's word as a thing (a PubMedQA title's
    # "virus" where its abstract writes "HBV")
    assert _grounding(Term("virus", "virus", set()), Term("ear", "ear", set())).keys == []


def test_a_relative_of_a_word_does_not_make_it_a_documents_subject() -> None:
    # "agent" is a lay term of "drug", which the ACE paper is about; "agent" itself is no document's subject
    counts = {**COUNTS, "ace": COUNTS["ace"] + Counter({"drug": 75, "agent": 1})}
    assert Grounding([Term("agent", "agent", {"drug"})], counts, UNITS, WINDOWS, None).keys == []


def test_a_compound_is_said_by_the_papers_word_for_its_head_but_not_by_the_head_itself() -> None:
    # "family doctor": "family" is VESPA's gene families; the rehab window's "GP" (the lay expansion of
    # "doctor") says the whole compound
    family = _grounding(Term("family", "famili", set(), frozenset({"gp", "physician"})))
    assert [k.word for k in family.keys] == ["family"] and family.part(3).confidence == 1.0
    # built from the question, the head's words include an acronym's plural, which keeps its s when stemmed
    of = Grounding.of("What do patients think of their family doctor?", [("famili", set()), ("doctor", {"gp"})],
                      COUNTS, [*UNITS, "rehab"], [*WINDOWS, {"gps", "patient"}], None)
    assert [k.word for k in of.keys] == ["family"] and of.part(4).confidence == 1.0
    # "protein content" is not said by a window that says "content" of something else: the head itself
    # is not passed as the papers' word for it
    protein = _grounding(Term("protein", "protein", set(), frozenset()))
    assert protein.part(0).confidence == 0.0
