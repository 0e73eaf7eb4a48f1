"""Evidence binding: "verified" means the words, numbers and negations are in the source at the cited page."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from orchestrator.graph.evidence import MIN_SNIPPET_CHARS, verify_snippet
from orchestrator.graph.evidence_budget import Budget

SOURCE = "\f".join([
    "Title page. Results in brief.",
    "The treatment reduced mortality by 25 percent among 4,000 patients (95% CI 0.61-0.89).\n"
    "Dosing increased the rate of infection in older adults. The intervention did not reduce hos-\n"
    "pital admissions. No adverse events were observed in the control arm.",
    "The \ufb01rst analysis was \u201cpre-registered\u201d \u2014 its effect size was 0.42 and p < 0.001.",
])

TRUE = [
    ("exact", "The treatment reduced mortality by 25 percent among 4,000 patients", 2),
    ("case and spacing", "the TREATMENT reduced   mortality\nby 25 percent among 4,000 patients", 2),
    ("line-break hyphenation", "The intervention did not reduce hospital admissions", 2),
    ("ligature, quotes and dash", 'The first analysis was "pre-registered" - its effect size was 0.42', 3),
    ("thousands separator dropped", "reduced mortality by 25 percent among 4000 patients", 2),
    ("negation kept", "No adverse events were observed in the control arm", 2),
    ("no page given", "Dosing increased the rate of infection in older adults", None),
]

FALSE = [
    ("a single word", "at", 2, "too short"),
    ("a short phrase", "the treatment", 2, "too short"),
    ("number changed", "The treatment reduced mortality by 52 percent among 4,000 patients", 2, "not found"),
    ("magnitude changed", "The treatment reduced mortality by 25 percent among 40,000 patients", 2, "not found"),
    ("decimal changed", 'The first analysis was "pre-registered" - its effect size was 0.24', 3, "not found"),
    ("unit changed", "The treatment reduced mortality by 25 % among 4,000 patients", 2, "not found"),
    ("direction flipped", "Dosing decreased the rate of infection in older adults", 2, "not found"),
    ("negation removed", "The intervention did reduce hospital admissions", 2, "not found"),
    ("negation added", "The treatment did not reduce mortality by 25 percent among 4,000 patients", 2, "not found"),
    ("contraction added", "The intervention didn't reduce hospital admissions at all", 2, "not found"),
    ("negation word swapped", "Some adverse events were observed in the control arm", 2, "not found"),
    ("part of a word", "creased the rate of infection in older adults", 2, "not found"),
    ("wrong page", "Dosing increased the rate of infection in older adults", 3,
     "found on page 2, not on the cited page 3"),
    ("page past the end", "Dosing increased the rate of infection in older adults", 9, "page 9 does not exist"),
    ("invented sentence", "The drug cured every patient within a single week of use", 2, "not found"),
]


@pytest.mark.parametrize(("case", "snippet", "page"), TRUE, ids=[c[0] for c in TRUE])
def test_faithful_quotes_verify_and_record_the_sources_own_passage(case: str, snippet: str, page: int | None) -> None:
    result = verify_snippet(snippet, SOURCE, page)
    assert result.verified, result.reason
    assert result.char_start is not None and result.char_end is not None
    assert SOURCE[result.char_start:result.char_end] == result.matched_text  # the source's words, not the agent's
    assert result.page == (page or 2)


@pytest.mark.parametrize(("case", "snippet", "page", "reason"), FALSE, ids=[c[0] for c in FALSE])
def test_altered_or_trivial_quotes_never_verify(case: str, snippet: str, page: int, reason: str) -> None:
    result = verify_snippet(snippet, SOURCE, page)
    assert not result.verified
    assert reason in result.reason


def test_the_minimum_length_is_stated_in_the_reason() -> None:
    assert f"at least {MIN_SNIPPET_CHARS} characters" in verify_snippet("reduced mortality", SOURCE, 2).reason


def test_a_spent_budget_still_allows_exact_matches_but_no_fuzzy_search() -> None:
    spent = Budget(1_000_000)
    spent.spent = spent.limit  # past the limit (exact matches only), well before twice the limit (nothing checked)
    exact = verify_snippet("Dosing increased the rate of infection in older adults", SOURCE, 2, budget=spent)
    assert exact.verified
    fuzzy = verify_snippet("Dosing  increased the rate of infection, in older adults", SOURCE, 2, budget=spent)
    assert not fuzzy.verified and fuzzy.cut_short and "cut short" in fuzzy.reason
    assert fuzzy.to_dict()["cut_short"] is True


def test_a_changed_source_text_rechecks_the_claims_that_cite_it(tmp_path: Path) -> None:
    from orchestrator.session.record import create_session
    from tests.conftest import merge_pending, store_text, write_artifacts

    session = create_session(tmp_path / "sessions", "Does a changed text re-check its citations?", "m")
    old = store_text(session, "Page one.\fThe measured latency was 12 ms on average across runs.")
    new = store_text(session, "Page one.\fThe measured latency was 40 ms on average across runs.")

    def owner(sha: str) -> dict[str, Any]:
        source = {"id": "S1", "type": "report", "title": "Latency", "content_sha256": sha}
        return {"sources.json": {"sources": [source]}}

    write_artifacts(session, "owner", owner(old))
    merge_pending(session)
    citer = {"claims.json": {"claims": [{
        "id": "C1", "statement": "Latency is 12 ms.", "confidence": 0.8, "priority": "medium",
        "evidence": [{"source_id": "owner:S1", "snippet": "The measured latency was 12 ms on average",
                      "locator": {"page": 2}}]}]}}
    write_artifacts(session, "citer", citer)
    merge_pending(session)
    graph = json.loads(session.kg_json.read_text())
    assert graph["claims"][0]["evidence"][0]["verification"]["verified"] is True
    assert graph["stats"]["evidence_verified"] == 1

    write_artifacts(session, "owner", owner(new))  # the owner's retry changes the text
    assert merge_pending(session) == {"owner": "merged"}
    graph = json.loads(session.kg_json.read_text())
    verification = graph["claims"][0]["evidence"][0]["verification"]
    assert verification["verified"] is False and verification["rechecked"] is True
    assert verification["previous_verified"] is True and verification["previous_text_sha256"] == old
    assert verification["text_sha256"] == new and "not found" in verification["reason"]
    assert graph["stats"]["evidence_verified"] == 0
    # the citing agent's own files were not touched: only the view says what is true now
    assert graph["citer"]["claims"][0]["evidence"][0]["snippet"] == "The measured latency was 12 ms on average"


def test_past_twice_the_budget_nothing_more_is_checked() -> None:
    result = verify_snippet("Dosing increased the rate of infection in older adults", SOURCE, 2, budget=Budget(0))
    assert not result.verified and result.cut_short
    assert result.reason.startswith("not checked: the search was cut short")
