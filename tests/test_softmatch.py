"""Soft term matching and the second retrieval stage: the reader's words reach the paper's, and a
question the papers do not address still gets nothing."""

from __future__ import annotations

import numpy as np
import pytest

from agents.offline import semantic
from agents.offline.candidates import answerable
from agents.offline.corpus import Corpus
from agents.offline.ingest import ingest_dirs
from agents.offline.retrieval import SUBJECT_WEIGHT, Retriever
from agents.offline.softmatch import SOFT_MIN, SOFT_SHARE, Lexicon, surface_words
from agents.offline.textindex import PassageIndex
from tests.helpers.data import PAPERS


class _Words(semantic.Embedder):
    """A stand-in model: fixed unit vectors per word (no tokenizer, no weights)."""

    VECTORS = {"begin": (1.0, 0.0, 0.0), "started": (0.8, 0.6, 0.0), "clot": (0.0, 0.0, 1.0),
               "cluster": (0.3, 0.0, 0.954), "weather": (0.0, 1.0, 0.0)}

    def __init__(self) -> None:
        pass

    def embed(self, texts: list[str]) -> np.ndarray:
        return np.array([self.VECTORS.get(t, (0.0, 0.0, 0.0)) for t in texts], dtype=np.float32)


def test_surface_words_keep_the_commonest_spelling_of_each_stem_and_drop_numbers_and_short_words() -> None:
    words = surface_words(["The treatments started early; treatment started at 10 days.", "It is ok."])
    assert words["start"] == "started"
    assert words["treatment"] in ("treatments", "treatment")
    assert not any(w[0].isdigit() or len(w) < 3 for w in words.values())
    assert "the" not in words.values()


def test_a_word_counts_for_its_closest_neighbour_above_the_threshold_and_never_as_much_as_itself() -> None:
    lexicon = Lexicon({"start": "started", "cluster": "cluster", "weather": "weather"}, _Words())
    sims = lexicon.similarities(["begin", "clot"])
    credit = Lexicon.credit(sims, lexicon.ids_of(["start", "weather"]))
    assert credit[0] == pytest.approx(SOFT_SHARE * 0.8)  # "begin" ~ "started" at cosine 0.8
    assert credit[1] == 0.0  # nothing near "clot" in this window
    near = Lexicon.credit(sims, lexicon.ids_of(["cluster"]))
    assert SOFT_MIN <= 0.954 and near[1] == pytest.approx(SOFT_SHARE * 0.954)
    assert (credit < 1.0).all() and (near < 1.0).all()
    assert Lexicon.credit(sims, lexicon.ids_of(["unknown"])).tolist() == [0.0, 0.0]


@pytest.fixture(scope="module")
def papers() -> Retriever:
    if semantic.embedder() is None:
        pytest.skip("the static embedding model (wordllama, a default dependency) is not installed")
    docs = ingest_dirs([PAPERS]).documents
    return Retriever(Corpus({d.id: d for d in docs}, PassageIndex.build(docs)))


def test_a_question_in_other_words_reaches_the_sentence_that_answers_it(papers: Retriever) -> None:
    # "picked" / "answered" for the paper's "sampled" / "responded": no exact-coverage gate lets it through
    found = papers.search("For the formal exit interviews at Kamuzu Central Hospital, how many outpatients were "
                          "picked and how many actually answered?", limit=5)
    assert any("98 responded" in a.sentence.flat for a in found)


def test_soft_coverage_credits_neighbours_but_exact_coverage_does_not(papers: Retriever) -> None:
    question = "When did they begin the heat treatments in the wheat experiment?"
    _, groups, weights = papers.lexical_scores(question)
    cover = papers.soft_coverage(question, groups, weights)
    started = next(i for i, u in enumerate(papers.units) if "treatments were initiated" in u.sentence.flat)
    soft_w, soft_s, exact_w, exact_s = cover(started)
    assert soft_w >= exact_w and soft_s >= exact_s
    assert 0.0 < exact_w <= 1.0 and soft_w <= 1.0


def test_the_abstention_rule_needs_closeness_and_shared_words(papers: Retriever) -> None:
    model = semantic.embedder()
    assert model is not None
    floor = model.answer_floor
    assert answerable(model, floor, 0.0) and answerable(model, floor - 0.2, 0.4)
    assert not answerable(model, floor - 0.2, 0.3)
    for off in ("Who won the 2018 FIFA World Cup?", "What is the interest rate set by the European Central Bank?"):
        assert papers.search(off) == [], off


def test_names_that_chose_the_paper_weigh_less_within_it(papers: Retriever) -> None:
    question = "For the formal exit interviews at Kamuzu Central Hospital, how many outpatients answered?"
    subject = papers.anchors_of(question)
    assert "kamuzu" in subject
    _, _, plain = papers.lexical_scores(question)
    _, _, within = papers.lexical_scores(question, subject=subject)
    assert within["kamuzu"] == pytest.approx(SUBJECT_WEIGHT * plain["kamuzu"])
    assert within["outpati"] == plain["outpati"]
