"""A quote cut out of a sentence that negates, denies, asks, supposes or only reports it is not verified evidence:
its words are on the page, but the source does not say what the quote says without them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from orchestrator.graph.evidence import verify_snippet
from orchestrator.graph.relation_scope import quote_reasons
from tests.helpers.one_claim import submit_one_claim

QUOTE = "the drug reduced mortality by 20 percent in older adults"

#: (the source's sentence, the quote taken from it, what governs the quote there)
GOVERNED = [
    ("In the trial, the drug never reduced mortality by 20 percent in older adults.", "reduced mortality", "negated"),
    ("It is false that the drug reduced mortality by 20 percent in older adults.", "the drug", "disbelieved"),
    ("No trial has shown that the drug reduced mortality by 20 percent in older adults.", "the drug", "disbelieved"),
    ("Did the drug reduce mortality by 20 percent in older adults?", "the drug", "asked"),
    ("If the drug reduced mortality by 20 percent in older adults, it would be approved.", "the drug", "supposed"),
    ("Critics claimed that the drug reduced mortality by 20 percent in older adults.", "the drug", "attributed"),
    ("Allegations that the drug reduced mortality by 20 percent in older adults surfaced.", "the drug", "attributed"),
    ("Reports that the drug reduced mortality by 20 percent in older adults were false.", "the drug", "disbelieved"),
    ("Few believe that the drug reduced mortality by 20 percent in older adults.", "the drug", "disbelieved"),
    ("The makers hoped the drug would reduce mortality by 20 percent in older adults.", "reduce mortality",
     "supposed"),
    ("The drug formerly reduced mortality by 20 percent in older adults.", "reduced mortality", "past"),
    ("The drug failed to reduce mortality by 20 percent in older adults.", "reduce mortality", "negated"),
]

#: sentences that assert the quote (from "the drug" on), with what stands around it
ASSERTED = [
    "In 2019, the drug reduced mortality by 20 percent in older adults.",
    "Researchers reported that the drug reduced mortality by 20 percent in older adults.",
    "We found that the drug reduced mortality by 20 percent in older adults, not in children.",
    "Unlike placebo, the drug reduced mortality by 20 percent in older adults.",
    "Nobody denies that the drug reduced mortality by 20 percent in older adults.",
    "The results suggest that the drug reduced mortality by 20 percent in older adults.",
    "Was it safe? The drug reduced mortality by 20 percent in older adults.",
    "The drug did not reduce costs. The drug reduced mortality by 20 percent in older adults.",
    "Studies that did not include children found that the drug reduced mortality by 20 percent in older adults.",
]


def _reasons(sentence: str, quote_from: str) -> list[str]:
    """The reasons of a quote from ``quote_from`` to the end of "older adults"."""
    text = sentence.lower()
    start = text.index(quote_from)
    return [kind for kind, _ in quote_reasons(text, start, text.index("older adults") + len("older adults"))]


@pytest.mark.parametrize(("sentence", "quote_from", "kind"), GOVERNED)
def test_a_quote_the_sentence_governs_is_not_asserted(sentence: str, quote_from: str, kind: str) -> None:
    assert kind in _reasons(sentence, quote_from)


@pytest.mark.parametrize("sentence", ASSERTED)
def test_a_quote_its_sentence_asserts_stands(sentence: str) -> None:
    assert _reasons(sentence, "the drug") == []


def test_a_quote_that_is_a_whole_question_is_the_sources_own_words() -> None:
    text = "did the drug reduce mortality by 20 percent in older adults?"
    assert quote_reasons(text, 0, len(text)) == []


@pytest.mark.parametrize(("sentence", "quote_from", "kind"), GOVERNED)
def test_the_evidence_check_refuses_a_quote_that_leaves_out_what_governs_it(sentence: str, quote_from: str,
                                                                           kind: str) -> None:
    start = sentence.lower().index(quote_from)
    snippet = sentence[start:sentence.lower().index("older adults") + len("older adults")]
    found = verify_snippet(snippet, f"Cover.\f{sentence}", 2)
    assert not found.verified and "leaves out what governs it" in found.reason, found.reason
    whole = verify_snippet(sentence, f"Cover.\f{sentence}", 2)  # the whole sentence, "never" and all, verifies
    assert whole.verified, whole.reason


def test_a_claim_whose_quote_drops_the_sources_negation_is_rejected_with_the_fix(tmp_path: Path) -> None:
    session, status = submit_one_claim(
        tmp_path, "In the trial, the drug never reduced mortality by 20 percent in older adults.",
        "The drug reduced mortality by 20 percent in older adults.", "reduced mortality by 20 percent in older adults",
        "high")
    assert status == "rejected"
    text = json.dumps(json.loads(session.retry_instructions("trialist").read_text()))
    assert "never" in text and "leaves out what governs it" in text


#: (an answer sentence, the passage it cites): each says more than the passage does
OVERSTATED = [
    ("Aspirin prevents heart attacks in women", "The trial did not show that aspirin prevents heart attacks in women"),
    ("Coffee lowers the risk of liver cancer", "It is unclear whether coffee lowers the risk of liver cancer"),
    ("The minimum wage reduced teen employment by 5%", "Critics claimed that the minimum wage reduced teen employment "
                                                       "by 5%"),
    ("The vaccine prevents 90% of infections in children", "Researchers hoped the vaccine would prevent 90% of "
                                                           "infections in children"),
    ("The drug reliably reduced systolic pressure by 10 mmHg", "The drug may have reduced systolic pressure by 10 mmHg "
                                                               "in a small pilot study"),
    ("The Lisbon plant produces 400 megawatts", "Before 2010, the Lisbon plant produced 400 megawatts"),
    ("The compound extended lifespan by 20 percent in humans", "In mice, the compound extended lifespan by 20 percent"),
]
#: ... and each says no more than the passage does
FAITHFUL = [
    ("The drug reduced mortality by 20 percent", "In the trial, the drug reduced mortality by 20 percent in adults"),
    ("The drug lowered mortality by 20 percent in adults", "Researchers reported that the drug reduced mortality by "
                                                           "20 percent in adults"),
    ("The drug may lower mortality by 20 percent", "The drug may reduce mortality by 20 percent in older adults"),
]


@pytest.mark.parametrize(("sentence", "passage"), OVERSTATED)
def test_an_answer_that_drops_what_governs_its_passage_is_not_supported(sentence: str, passage: str) -> None:
    from orchestrator.answers.confidence import support
    from orchestrator.answers.data import VerifiedPassage

    part, _ = support(sentence, [VerifiedPassage("S1", "Trial", 2, passage)])
    assert part.confidence == 0.0, part.detail


@pytest.mark.parametrize(("sentence", "passage"), FAITHFUL)
def test_an_answer_that_keeps_its_passages_claim_is_supported(sentence: str, passage: str) -> None:
    from orchestrator.answers.confidence import FLAG_BELOW, support
    from orchestrator.answers.data import VerifiedPassage

    part, _ = support(sentence, [VerifiedPassage("S1", "Trial", 2, passage)])
    assert part.confidence >= FLAG_BELOW, part.detail
