"""The research loop's pure decisions: gap questions and source-targeted questions."""

from __future__ import annotations

from typing import Any

from orchestrator.run.iteration import gap_questions, source_questions

ASKED = {"research-planner:Q1": {"id": "research-planner:Q1", "question": "Q?", "keywords": ["cache"]}}


def _graph() -> dict[str, Any]:
    def source(sid: str, reviewed: bool, stored: bool = True) -> dict[str, Any]:
        return {"id": sid, "title": f"How fast is the cache {sid}", "peer_reviewed": reviewed,
                **({"content_sha256": "a" * 64} if stored else {})}

    verified = {"source_id": "a:S1", "verification": {"verified": True}}
    return {"sources": [source("a:S1", True), source("a:S2", False), source("a:S3", True), source("a:S4", True, False)],
            "claims": [{"id": "a:C1", "sub_question_id": "research-planner:Q1", "evidence": [verified]}],
            "gaps": []}


def _quality(*failing: str) -> dict[str, Any]:
    criteria = ("min_sources", "min_peer_reviewed_sources", "confidence_threshold")
    return {"checks": [{"criterion": c, "passed": c not in failing} for c in criteria]}


def test_uncited_stored_sources_become_questions_when_the_gate_wants_more_sources() -> None:
    questions = source_questions(_graph(), _quality("min_peer_reviewed_sources"), ASKED, "How fast is the cache?")
    assert [q["source_ids"] for q in questions] == [["a:S3"], ["a:S2"]]  # peer reviewed first; S4 has no text
    assert all(q["answers"] == "research-planner:Q1" and q["keywords"] == ["cache"] for q in questions)
    assert questions[0]["question"] == "What does “How fast is the cache a:S3” report about: How fast is the cache?"
    # a paper about something else is never read for the source count
    assert source_questions(_graph(), _quality("min_peer_reviewed_sources"), ASKED, "What do wheat genes do?") == []


def test_no_source_questions_when_source_criteria_pass_or_were_already_asked() -> None:
    assert source_questions(_graph(), _quality("confidence_threshold"), ASKED, "q") == []
    asked = {**ASKED, "source-S3": {}, "source-S2": {}}
    assert source_questions(_graph(), _quality("min_sources"), asked, "q") == []


def test_gap_questions_skip_source_questions_and_answered_ones() -> None:
    asked = {**ASKED, "research-planner:Q2": {"id": "research-planner:Q2", "question": "Q2?"},
             "source-S2": {"id": "source-S2", "question": "S2?", "source_ids": ["a:S2"]}}
    assert [q["id"] for q in gap_questions(_graph(), asked)] == ["research-planner:Q2"]


def test_a_gap_about_an_asked_question_is_not_asked_again_as_its_description() -> None:
    """The gap text ("No passage ... answers: Q2?") is no question; Q2 itself is asked again."""
    asked = {**ASKED, "research-planner:Q2": {"id": "research-planner:Q2", "question": "Q2?"}}
    graph = _graph()
    graph["gaps"] = [
        {"id": "r:gap-Q2", "priority": "high", "sub_question_id": "research-planner:Q2",
         "description": "No passage in the 4 ingested source(s) answers: Q2?"},
        {"id": "r:gap-x", "priority": "high", "sub_question_id": "Q2", "description": "No passage answers: Q2?"},
        {"id": "r:gap-new", "priority": "high", "description": "No data on cache eviction under load"},
    ]
    questions = gap_questions(graph, asked)
    assert [q["id"] for q in questions] == ["research-planner:Q2", "r:gap-new"]
    assert questions[1]["question"] == "No data on cache eviction under load"
