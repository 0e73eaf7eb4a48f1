"""Cases from a review briefed to break issue #21 (a researcher's first hour): each was a defect first."""

from __future__ import annotations

import pytest

from orchestrator.graph.citations import Citation, Ref
from orchestrator.report.answer import direct_answer
from orchestrator.report.model import Cite, Document, Para, Section, Text

TITLES = {1: "S2ORC: The Semantic Scholar Open Research Corpus", 2: "LONGEVAL: Guidelines for Human Evaluation"}


def _cite(number: int, page: int) -> Cite:
    return Cite(Citation(("a:C1",), (Ref(number, f"S{number}", (page,)),)))


def _first(*parts: str | Cite) -> str:
    line = tuple(Text(p) if isinstance(p, str) else p for p in parts)
    found = direct_answer(Document("T", (), [], [Section("Answer", "answer", [Para(line)])], None, None,
                                   titles=TITLES))
    assert found is not None
    return found.first_sentence


@pytest.mark.parametrize(("parts", "first"), [
    (("Models, e.g. BERT and GPT, work well. ", _cite(1, 2), " Next one."),
     "Models, e.g. BERT and GPT, work well. [S2ORC, p. 2]"),
    (("As Fig. 2 shows, it works. ", _cite(1, 2), " Next one."), "As Fig. 2 shows, it works. [S2ORC, p. 2]"),
    (("Smith et al. Found it first. ", _cite(1, 3), " Then more."), "Smith et al. Found it first. [S2ORC, p. 3]"),
    (("The U.S. Army used it. ", _cite(1, 3), " Then more."), "The U.S. Army used it. [S2ORC, p. 3]"),
    (("It is 3.5 times faster than v. 2 of it. ", _cite(1, 4), " Then."),
     "It is 3.5 times faster than v. 2 of it. [S2ORC, p. 4]"),
    (("The effect was significant (p < 0.05). ", _cite(1, 5), " Then."),
     "The effect was significant (p < 0.05). [S2ORC, p. 5]"),
    # a citation written before the full stop, as Claude's synthesis does ("... rose [@C1].")
    (("Accuracy rose to 81.1%", _cite(1, 6), ". Recall fell", _cite(2, 7), "."),
     "Accuracy rose to 81.1% [S2ORC, p. 6]."),
    (("It holds 81.1M papers. ", _cite(1, 1), " ", _cite(2, 2), " It is large."),
     "It holds 81.1M papers. [S2ORC, p. 1] [LONGEVAL, p. 2]"),
    (("One sentence only", _cite(1, 1)), "One sentence only [S2ORC, p. 1]"),
])
def test_the_first_sentence_of_the_answer_is_a_whole_sentence_with_its_citations(
        parts: tuple[str | Cite, ...], first: str) -> None:
    assert _first(*parts) == first


@pytest.mark.parametrize(("text", "kept"), [
    ("a probability in [0, 1] was assigned", "a probability in [0, 1] was assigned"),
    ("values in [0,1] only", "values in [0,1] only"),
    ("the array x[0] is empty", "the array x[0] is empty"),
    ("the entry A[1,2] is zero", "the entry A[1,2] is zero"),
    ("see Table [1] for the doses", "see Table [1] for the doses"),
    ("as Eq. [3] gives", "as Eq. [3] gives"),
    ("over the interval [1, 10] of days", "over the interval [1, 10] of days"),
    ("in [2020] we", "in [2020] we"),
    ("[3H]thymidine uptake rose", "[3H]thymidine uptake rose"),
    ("[Ca2+] rose", "[Ca2+] rose"),
    ("a[1][2] was read", "a[1][2] was read"),
])
def test_real_content_in_brackets_is_not_taken_for_a_source_reference_marker(text: str, kept: str) -> None:
    from orchestrator.report.model import quote_without_source_markers, without_source_markers

    assert without_source_markers(text) == kept
    assert quote_without_source_markers(text) == kept


@pytest.mark.parametrize(("text", "plain"), [
    ("quality improvement [79].", "quality improvement."),
    ("shown before [4, 12] and since [3-5].", "shown before and since."),
    ("as described in [12], the", "as described in, the"),
    ("as shown[7] by", "as shown by"),
])
def test_the_sources_own_reference_markers_still_leave_the_report(text: str, plain: str) -> None:
    from orchestrator.report.model import without_source_markers

    assert without_source_markers(text) == plain
