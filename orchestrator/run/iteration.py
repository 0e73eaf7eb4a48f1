"""The research loop's decisions (pure): what to research, and whether another round is worth it.

The runner passes in the graph, the run state and the limits, and itself only emits events
and saves state with the answers, so these rules read the same for a fresh and a resumed run.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from orchestrator.graph.relevance import relevant
from orchestrator.run.config import RunLimits
from orchestrator.run.missions import Phases

#: At most this many questions go into one further research round.
MAX_GAP_QUESTIONS = 8


def planned_questions(graph: Mapping[str, Any], planners: Iterable[str], query: str) -> list[dict[str, Any]]:
    """The first planner's sub-questions (global ids); without a plan, the query itself."""
    for agent in planners:
        plan = graph.get(agent, {})
        if plan.get("sub_questions"):
            return [
                {
                    "id": f"{agent}:{q['id']}",
                    "question": q["question"],
                    "keywords": q.get("keywords", []),
                    "priority": q.get("priority", "medium"),
                }
                for q in plan["sub_questions"]
            ]
    return [{"id": "query", "question": query, "keywords": [], "priority": "high"}]


#: Gate criteria that more cited sources can satisfy.
SOURCE_CRITERIA = frozenset({"min_sources", "min_peer_reviewed_sources"})


def source_questions(
    graph: Mapping[str, Any], quality: Mapping[str, Any], asked: Mapping[str, dict[str, Any]], query: str
) -> list[dict[str, Any]]:
    """When the gate wants more cited sources, ask what each uncited stored source that bears on the query says.

    The gate's own recommendation turned into work: one question per uncited source whose title,
    abstract or keywords are about the query (peer-reviewed first when that criterion failed),
    restricted to it with ``source_ids`` and answering the plan's first sub-question (``answers``).
    A source about something else gets no round: reading it would only pad the source count.
    """
    failing = {c["criterion"] for c in quality.get("checks", []) if not c["passed"]} & SOURCE_CRITERIA
    if not failing:
        return []
    cited = {e["source_id"] for c in graph.get("claims", []) for e in c.get("evidence", [])
             if (e.get("verification") or {}).get("verified")}
    candidates = [s for s in relevant(graph.get("sources", []), query)
                  if s["id"] not in cited and s.get("content_sha256")]
    if "min_peer_reviewed_sources" in failing:
        candidates.sort(key=lambda s: s.get("peer_reviewed") is not True)
    answers = next(iter(asked), None)
    keywords = list(asked[answers].get("keywords", [])) if answers else []
    questions = []
    for source in candidates:
        qid = "source-" + source["id"].rpartition(":")[2]
        if qid in asked:
            continue
        question = {"id": qid, "question": f"What does “{source.get('title', source['id'])}” report about: {query}",
                    "keywords": keywords, "priority": "medium",
                    "source_ids": [source["id"]], "depth": 1}
        if answers:
            question["answers"] = answers
        questions.append(question)
    return questions


def gap_questions(graph: Mapping[str, Any], asked: Mapping[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """Sub-questions still without claims, and high-priority gaps the agents reported."""
    answered = {c.get("sub_question_id") for c in graph.get("claims", [])}
    gaps = []
    for qid, question in asked.items():
        if qid not in answered and "source_ids" not in question:
            gaps.append({**question, "depth": question.get("depth", 1) + 1})
    asked_locals = {str(qid).rpartition(":")[2] for qid in asked}
    for gap in graph.get("gaps", []):
        about = str(gap.get("sub_question_id") or "").rpartition(":")[2]
        if about and about in asked_locals:
            continue  # the gap of a question already asked: that question is asked again (above), not its gap text
        if gap.get("priority") == "high" and gap["id"] not in asked:
            gaps.append(
                {
                    "id": gap["id"],
                    "question": gap["description"],
                    "keywords": gap.get("suggested_queries", []),
                    "priority": "high",
                    "depth": 2,
                }
            )
    return gaps[:MAX_GAP_QUESTIONS]


def iteration_blocker(
    run_state: Mapping[str, Any],
    limits: RunLimits,
    phases: Phases,
    *,
    new_questions: int,
    claims: int,
    elapsed_minutes: float,
) -> str | None:
    """Why no further research round runs, or None.

    Another round only if it is allowed, affordable (keeping invocations for fact-checking and
    synthesis), started before three quarters of the time, and the last round added claims
    (``claims`` against ``run_state["claims_after_iteration"]``).
    """
    history = run_state.get("claims_after_iteration") or []
    progressed = not history or claims > history[-1]
    reserve = len(phases.fact_check) + len(phases.synthesis)
    per_round = new_questions * len(phases.research)
    affordable = run_state.get("invocations", 0) + per_round + reserve <= limits.max_invocations
    in_time = elapsed_minutes < 0.75 * limits.max_minutes
    allowed = run_state["iteration"] < limits.max_iterations
    if not allowed:
        return "iteration limit reached"
    if not progressed:
        return "the last iteration added no claims"
    if not affordable:
        return "not enough invocations left"
    if not in_time:
        return "time nearly up"
    return None


def final_status(quality: Mapping[str, Any], shacl_violations: int) -> tuple[str, str | None]:
    """``completed`` only when every success criterion is met and the graph conforms, else ``partial``."""
    failed = [c["message"] for c in quality["checks"] if not c["passed"]]
    if shacl_violations:
        failed.append(f"the graph has {shacl_violations} SHACL violation(s) (run `cconductor validate`)")
    if not failed:
        return "completed", None
    return "partial", "success criteria not met: " + "; ".join(failed)
