"""The quality score is computed from the graph, and the gate enforces every mission criterion."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from orchestrator.graph.quality import WEIGHTS, score_graph, source_score
from orchestrator.graph.quality_gate import gate
from orchestrator.run.missions import load_mission

NOW = datetime(2026, 11, 22, 9, 30, tzinfo=UTC)
CRITERIA = {
    "confidence_threshold": 0.75,
    "min_sources": 10,
    "min_peer_reviewed_sources": 8,
    "all_claims_cited": True,
    "min_quality_score": 80,
    "min_verified_evidence_ratio": 0.9,
    "required_sections": ["Summary"],
}


def source(n: int, **extra: Any) -> dict[str, Any]:
    return {
        "id": f"a:S{n}",
        "type": "journal-article",
        "title": f"Paper {n}",
        "authors": ["Ada Lovelace"],
        "year": 2020,
        "venue": "Journal",
        "peer_reviewed": True,
        "doi": f"10.1000/p{n}",
        "aliases": [f"a:S{n}"],
        **extra,
    }


def claim(n: int, source_id: str, *, verified: bool = True, **extra: Any) -> dict[str, Any]:
    return {
        "id": f"a:C{n}",
        "statement": f"Claim {n}.",
        "confidence": 0.9,
        "priority": "medium",
        "sub_question_id": f"Q{n % 3 + 1}",
        "evidence": [
            {
                "source_id": source_id,
                "snippet": "quoted",
                "locator": {"page": 1},
                "verification": {
                    "verified": verified,
                    "score": 100.0 if verified else 10.0,
                    "matched_text": "quoted",
                    "page": 1,
                    "reason": "r",
                },
            }
        ],
        **extra,
    }


def good_graph(sources: int = 10, claims: int = 20) -> dict[str, Any]:
    return {
        "planner": {
            "sub_questions": [
                {"id": f"Q{i}", "question": f"Question {i}?", "priority": "high"} for i in (1, 2, 3)
            ]
        },
        "sources": [source(n) for n in range(1, sources + 1)],
        "claims": [claim(n, f"a:S{n % sources + 1}") for n in range(1, claims + 1)],
        "gaps": [],
        "contradictions": [],
        "entities": [],
        "relationships": [],
    }


def failing(result: Any) -> set[str]:
    return {c["criterion"] for c in result.checks if not c["passed"]}


def test_a_fully_good_graph_passes_with_a_perfect_score() -> None:
    graph = good_graph()
    report = score_graph(graph, now=NOW)
    assert report.score == 99.0 and report.band == "excellent"
    assert {c.name: c.score for c in report.components} == {
        "source_quality": 100.0,
        "citation_coverage": 100.0,
        "completeness": 100.0,
        "evidence_verification": 100.0,
        "confidence": 90.0,
    }
    result = gate(report, graph, CRITERIA)
    assert result.passed and failing(result) == set() and result.recommendations == []
    assert [c["criterion"] for c in result.checks] == [
        "confidence_threshold",
        "min_sources",
        "min_peer_reviewed_sources",
        "all_claims_cited",
        "min_quality_score",
        "min_verified_evidence_ratio",
    ]


def test_weights_follow_the_documented_split() -> None:
    assert {k: w for k, (w, _) in WEIGHTS.items()} == {
        "source_quality": 30,
        "citation_coverage": 25,
        "completeness": 20,
        "evidence_verification": 15,
        "confidence": 10,
    }
    report = score_graph(good_graph(), now=NOW)
    assert report.score == round(sum(c.score * c.weight / 100 for c in report.components), 1)


def test_zero_claims() -> None:
    graph = good_graph(claims=0)
    report = score_graph(graph, now=NOW)
    assert report.mean_confidence is None and report.counts["claims"] == 0
    assert report.component("citation_coverage").score == 0 and report.component("completeness").score == 0
    assert report.score == 30.0  # the sources alone
    result = gate(report, graph, CRITERIA)
    assert not result.passed
    assert failing(result) == {
        "confidence_threshold",
        "min_sources",
        "min_peer_reviewed_sources",
        "min_quality_score",
        "min_verified_evidence_ratio",
    }
    assert any("no claims" in r for r in result.recommendations)


def test_an_empty_graph_scores_zero_and_fails() -> None:
    report = score_graph({}, now=NOW)
    assert report.score == 0.0 and report.band == "needs work"
    result = gate(report, {}, CRITERIA)
    assert not result.passed and result.recommendations


def test_one_claim() -> None:
    graph = good_graph(sources=1, claims=1)
    report = score_graph(graph, now=NOW)
    assert report.component("citation_coverage").score == 100.0
    assert report.component("completeness").score == pytest.approx(33.3)
    assert report.mean_confidence == 0.9
    result = gate(report, graph, CRITERIA)
    assert report.score == 85.7  # good sources and evidence, but one sub-question of three
    assert failing(result) == {"min_sources", "min_peer_reviewed_sources"}
    assert any("Q1 (Question 1?)" in r and "Q3" in r for r in result.recommendations)


def _low_confidence(g: dict[str, Any]) -> None:
    for c in g["claims"]:
        c["confidence"] = 0.5


def _few_sources(g: dict[str, Any]) -> None:
    for n, c in enumerate(g["claims"]):
        c["evidence"][0]["source_id"] = f"a:S{n % 9 + 1}"


def _not_peer_reviewed(g: dict[str, Any]) -> None:
    for s in g["sources"][:5]:
        s["peer_reviewed"] = False


def _uncited(g: dict[str, Any]) -> None:
    g["claims"][0]["evidence"] = []
    g["claims"][1]["evidence"][0]["source_id"] = "a:S404"


def _unverified(g: dict[str, Any]) -> None:
    for c in g["claims"][:5]:
        c["evidence"][0]["verification"]["verified"] = False


@pytest.mark.parametrize(
    ("mutate", "criteria", "criterion", "advice"),
    [
        (_low_confidence, {}, "confidence_threshold", "Raise confidence"),
        (
            _few_sources,
            {},
            "min_sources",
            "1 more distinct sources in claim evidence; in the graph, uncited, and about the question: "
            "\u201cPaper 10\u201d",
        ),
        (_not_peer_reviewed, {}, "min_peer_reviewed_sources", "at least 3 more peer-reviewed sources"),
        (_uncited, {}, "all_claims_cited", "uncited claims (a:C1, a:C2)"),
        (None, {"min_quality_score": 99.5}, "min_quality_score", "Improve the weakest component, confidence"),
        (_unverified, {}, "min_verified_evidence_ratio", "unverified: a:C1/evidence/0, a:C2/evidence/0"),
    ],
)
def test_each_failing_criterion_fails_with_a_specific_recommendation(
    mutate: Any, criteria: dict[str, Any], criterion: str, advice: str
) -> None:
    graph = good_graph()
    if mutate:
        mutate(graph)
    report = score_graph(graph, now=NOW)
    result = gate(report, graph, CRITERIA | criteria)
    assert not result.passed
    assert failing(result) == {criterion}
    assert any(advice in r for r in result.recommendations), result.recommendations
    check = next(c for c in result.checks if c["criterion"] == criterion)
    assert check["message"] and check["required"] == (CRITERIA | criteria)[criterion]


def test_all_claims_cited_false_is_not_enforced() -> None:
    graph = good_graph()
    _uncited(graph)
    result = gate(
        score_graph(graph, now=NOW), graph, CRITERIA | {"all_claims_cited": False, "min_quality_score": 0}
    )
    check = next(c for c in result.checks if c["criterion"] == "all_claims_cited")
    assert check["passed"] and "not required" in check["message"]
    assert any("2 claims are uncited" in r for r in result.recommendations)


def test_flags_give_recommendations_even_when_the_gate_passes() -> None:
    graph = good_graph()
    graph["contradictions"] = [
        {"id": "a:X1", "claim_ids": ["a:C1", "a:C2"], "description": "d", "status": "open"},
        {"id": "a:X2", "claim_ids": ["a:C1", "a:C3"], "description": "d", "status": "resolved"},
    ]
    graph["gaps"] = [{"id": "a:G1", "description": "No passage says how the engine was built", "priority": "high"}]
    graph["claims"][0].update(priority="high", assessments=[{"confidence": 0.9, "status": "unverified"}])
    report = score_graph(graph, now=NOW)
    assert report.counts["open_contradictions"] == 1
    assert report.counts["unverified_high_priority_claims"] == 1
    result = gate(report, graph, CRITERIA)
    assert result.passed
    text = " ".join(result.recommendations)
    assert "open contradictions (a:X1)" in text and "high-priority claims" in text
    # people read gaps and papers by what they say, not by internal ids
    assert "Close the 1 high-priority gaps: No passage says how the engine was built." in text and "a:G1" not in text


def test_sub_question_ids_match_plain_or_global() -> None:
    graph = good_graph(claims=3)
    graph["claims"][0]["sub_question_id"] = "planner:Q2"  # global form, matching the plan's Q2
    graph["claims"][1]["sub_question_id"] = "Q3"
    graph["claims"][2]["sub_question_id"] = "other:Q1"  # another planner's Q1: not this one
    report = score_graph(graph, now=NOW)
    assert [q["id"] for q in report.unanswered_sub_questions] == ["planner:Q1"]
    plain = score_graph(graph, [{"id": "Q1", "question": "?"}, {"id": "Q2", "question": "?"}], now=NOW)
    assert plain.counts["answered_sub_questions"] == 2


def test_completeness_fallback_without_sub_questions_is_stated() -> None:
    graph = good_graph(claims=3)
    del graph["planner"]
    graph["gaps"] = [{"id": "g", "description": "d", "priority": "high"}]
    component = score_graph(graph, now=NOW).component("completeness")
    assert component.score == 75.0 and "fallback" in component.detail


def test_effective_confidence_prefers_the_fact_checker() -> None:
    graph = good_graph(claims=2)
    graph["claims"][0]["assessments"] = [{"confidence": 0.1, "status": "contradicted", "by": "fact-checker"}]
    report = score_graph(graph, now=NOW)
    assert report.mean_confidence == pytest.approx((0.1 + 0.9) / 2)


def test_aliases_resolve_and_cited_sources_are_counted_once() -> None:
    graph = good_graph(sources=2, claims=2)
    graph["sources"][0]["aliases"].append("b:S7")
    graph["claims"][1]["evidence"][0]["source_id"] = "b:S7"
    graph["claims"][0]["evidence"][0]["source_id"] = "a:S1"
    report = score_graph(graph, now=NOW)
    assert report.counts["cited_sources"] == 1 and report.uncited_claims == ()


def test_source_score_rewards_peer_review_identifiers_and_metadata() -> None:
    assert source_score(source(1)) == 100.0
    assert source_score({"type": "web-page", "title": "t", "url": "https://x.org"}) == 20.0
    assert source_score({"type": "preprint", "arxiv_id": "2401.1", "year": 2024}) == 50.0
    assert source_score({"type": "other"}) == 5.0


def test_quality_json_has_everything_and_uses_the_injected_clock() -> None:
    graph = good_graph()
    report = score_graph(graph, now=NOW)
    data = report.to_json(gate(report, graph, CRITERIA))
    json.dumps(data)
    assert data["computed_at"] == "2026-11-22T09:30:00.000Z"
    assert data["components"]["source_quality"] == 100.0 and data["passed"] is True
    assert {
        "score",
        "band",
        "components",
        "breakdown",
        "counts",
        "checks",
        "recommendations",
        "flags",
    } <= set(data)
    assert data["breakdown"][0] == {
        "name": "source_quality",
        "label": "Source quality",
        "score": 100.0,
        "weight": 30,
        "weighted": 30.0,
        "detail": data["breakdown"][0]["detail"],
    }


def test_scoring_is_deterministic() -> None:
    assert score_graph(good_graph(), now=NOW).to_json() == score_graph(good_graph(), now=NOW).to_json()


def test_shipped_mission_criteria_work_with_the_gate() -> None:
    graph = good_graph()
    for name in ("academic-research", "general-research"):
        criteria = load_mission(name).to_dict()["success_criteria"]
        result = gate(score_graph(graph, now=NOW), graph, criteria)
        assert len(result.checks) == 6


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.tuples(st.floats(0, 1), st.booleans(), st.integers(0, 4), st.booleans()), max_size=12),
    st.integers(0, 4),
)
def test_score_and_components_stay_within_bounds(claims: list[tuple[float, bool, int, bool]], n: int) -> None:
    graph = good_graph(sources=n, claims=0) if n else {"sources": [], "claims": []}
    graph["claims"] = [
        claim(i, f"a:S{src}", verified=ok, confidence=conf) | ({} if cited else {"evidence": []})
        for i, (conf, ok, src, cited) in enumerate(claims)
    ]
    report = score_graph(graph, now=NOW)
    assert 0 <= report.score <= 100
    assert all(0 <= c.score <= 100 for c in report.components)
    result = gate(report, graph, CRITERIA)
    assert result.passed or result.recommendations


# --- sources that bear on the question; criteria about the answer ----------------------------------


def _papers_on_two_topics() -> dict[str, Any]:
    """Three cited papers on sleep, two uncited on sleep and memory, three uncited about wheat."""
    graph = good_graph(sources=3, claims=6)
    titles = ["Sleep and memory consolidation", "Napping in adults", "Sleep deprivation in students",
              "Sleep loss impairs working memory", "Memory after a night without sleep",
              "Heat stress in wheat", "Wheat metabolites under drought", "Grain yield of wheat"]
    graph["sources"] = [source(n, title=title) for n, title in enumerate(titles, 1)]
    return graph


def test_only_sources_about_the_question_are_recommended() -> None:
    graph = _papers_on_two_topics()
    result = gate(score_graph(graph, now=NOW), graph, {"min_sources": 6, "required_sections": ["Summary"]},
                  question="How does sleep loss affect memory?")
    (advice,) = result.recommendations
    assert "Sleep loss impairs working memory" in advice and "Memory after a night without sleep" in advice
    assert "wheat" not in advice.casefold()


def test_with_no_relevant_source_left_the_advice_is_to_add_documents_not_to_pad() -> None:
    graph = _papers_on_two_topics()
    del graph["sources"][3:5]
    result = gate(score_graph(graph, now=NOW), graph, {"min_peer_reviewed_sources": 6, "required_sections": ["S"]},
                  question="How does sleep loss affect memory?")
    (advice,) = result.recommendations
    assert "no other source in the graph bears on the question" in advice and "wheat" not in advice.casefold()


def test_a_source_round_researches_only_sources_about_the_question() -> None:
    from orchestrator.run.iteration import source_questions

    graph = _papers_on_two_topics()
    quality = {"checks": [{"criterion": "min_sources", "passed": False}]}
    graph["sources"] = [{**s, "content_sha256": "0" * 64} for s in graph["sources"]]
    asked = {"p:Q1": {"question": "How does sleep loss affect memory?"}}
    questions = source_questions(graph, quality, asked, "How does sleep loss affect memory?")
    assert sorted(q["source_ids"][0] for q in questions) == ["a:S4", "a:S5"]


@pytest.mark.parametrize(("need", "answered", "passes"), [(0.5, 2, True), (0.5, 1, False), (1.0, 3, True)])
def test_answered_sub_questions_criterion(need: float, answered: int, passes: bool) -> None:
    graph = good_graph(sources=3, claims=6)
    graph["claims"] = [c for c in graph["claims"] if int(c["sub_question_id"][1:]) <= answered]
    result = gate(score_graph(graph, now=NOW), graph,
                  {"min_answered_sub_questions": need, "required_sections": ["Answer"]})
    (check,) = result.checks
    assert check["criterion"] == "min_answered_sub_questions" and check["passed"] is passes
    assert check["actual"] == round(answered / 3, 4)
    if not passes:
        assert any("Add documents that do" in r and "Q3 (Question 3?)" in r for r in result.recommendations)


def test_contradictions_surfaced_needs_both_sides_citable() -> None:
    graph = good_graph(sources=3, claims=4)
    graph["contradictions"] = [{"id": "k1", "status": "open", "claim_ids": ["a:C1", "a:C2"]}]
    criteria = {"contradictions_surfaced": True, "required_sections": ["Answer"]}
    assert gate(score_graph(graph, now=NOW), graph, criteria).passed
    graph["claims"][1]["evidence"][0]["verification"]["verified"] = False
    result = gate(score_graph(graph, now=NOW), graph, criteria)
    assert not result.passed and "k1" in " ".join(result.recommendations)


def test_a_mission_without_a_criterion_does_not_check_it() -> None:
    graph = good_graph(sources=1, claims=2)
    result = gate(score_graph(graph, now=NOW), graph, {"all_claims_cited": True, "required_sections": ["A"]})
    assert result.passed and [c["criterion"] for c in result.checks] == ["all_claims_cited"]
