"""synthesis-agent with Claude: key findings, coverage, gaps and the report outline.

The model sees only claims whose evidence the orchestrator verified, and may cite only those
(``[@agent:C3]`` markers). Markers are checked with the report's own checker before writing.
"""

from __future__ import annotations

from typing import Any

from agents.claude import agent_client, agent_converse, agent_entry, definition_of, task_section
from agents.claude.client import ClaudeClient
from agents.claude.output_spec import OutputSpec
from agents.offline.corpus import plan_questions
from agents.runtime import AgentContext
from orchestrator.graph.citations import check_outline, claim_lookup, claim_resolver, is_verified

SPEC = OutputSpec(
    "submit_synthesis",
    ("key-findings.json", "coverage.json", "gaps.json", "report-outline.json"),
    "Submit the synthesis: key findings, coverage per sub-question, remaining gaps and the report outline.",
    required=("key_findings", "coverage", "report_outline"),
)
_MAX_CLAIMS = 250


def _clip(text: Any, limit: int = 400) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def sub_questions(context: AgentContext, graph: dict[str, Any]) -> list[dict[str, Any]]:
    """The task's sub-questions, else every plan in the graph (global ids, as the runner uses)."""
    return context.task.sub_questions or plan_questions(graph)


def verified_claims(graph: dict[str, Any]) -> list[dict[str, Any]]:
    claims = [c for c in graph.get("claims", []) if any(is_verified(e) for e in c.get("evidence", []))]
    return sorted(claims, key=lambda c: (-float(c.get("confidence", 0)), c["id"]))[:_MAX_CLAIMS]


def render(graph: dict[str, Any], claims: list[dict[str, Any]], questions: list[dict[str, Any]]) -> str:
    lines = [f"Verified claims ({len(claims)}; cite ONLY these, by the id shown):"]
    for c in claims:
        status = ", ".join(sorted({a.get("status", "") for a in c.get("assessments", [])})) or "not assessed"
        lines.append(
            f"- {c['id']} [sub-question {c.get('sub_question_id', '-')}; confidence {c.get('confidence')};"
            f" {status}]: {_clip(c.get('statement'))}"
        )
    if questions:
        lines += ["", "Sub-questions:"] + [f"- {q['id']}: {q.get('question')}" for q in questions]
    if graph.get("contradictions"):
        lines += ["", "Contradictions:"] + [
            f"- {', '.join(x.get('claim_ids', []))} ({x.get('status')}): {_clip(x.get('description'), 300)}"
            for x in graph["contradictions"]
        ]
    if graph.get("gaps"):
        lines += ["", "Gaps reported by the researchers:"] + [
            f"- [{g.get('priority')}] {_clip(g.get('description'), 300)}" for g in graph["gaps"][:40]
        ]
    return "\n".join(lines)


def check_synthesis(
    data: dict[str, Any],
    graph: dict[str, Any],
    agent: str,
    verified: set[str],
    question_ids: set[str],
    sections: list[str],
) -> list[str]:
    problems = [
        p.render()
        for p in check_outline(
            data.get("report_outline", {}),
            claim_resolver(graph, agent),
            claim_lookup(graph),
            "report-outline.json",
            "/report_outline",
        )
    ]
    for i, finding in enumerate(data.get("key_findings", [])):
        bad = [c for c in finding.get("claim_ids", []) if c not in verified]
        if bad:
            problems.append(
                f"key-findings.json at /key_findings/{i}/claim_ids: {', '.join(map(repr, bad))} "
                "not among the verified claims; cite only listed claim ids"
            )
    for i, entry in enumerate(data.get("coverage", [])):
        if question_ids and entry.get("sub_question_id") not in question_ids:
            problems.append(
                f"coverage.json at /coverage/{i}/sub_question_id: {entry.get('sub_question_id')!r} "
                f"is not a sub-question id; use one of {', '.join(sorted(question_ids))}"
            )
        bad = [c for c in entry.get("claim_ids", []) if c not in verified]
        if bad:
            problems.append(
                f"coverage.json at /coverage/{i}/claim_ids: {', '.join(map(repr, bad))} not among "
                "the verified claims"
            )
    headings = {
        str(s.get("heading", "")).strip().lower() for s in data.get("report_outline", {}).get("sections", [])
    }
    missing = [s for s in sections if s.strip().lower() not in headings]
    if missing:
        problems.append(
            "report-outline.json at /report_outline/sections: add the required section(s) "
            + ", ".join(map(repr, missing))
            + " (exact headings)"
        )
    return problems


@agent_entry
def run(context: AgentContext, client: ClaudeClient | None = None) -> None:
    definition = definition_of(context)
    with agent_client(context, definition, client) as client:
        graph = context.graph()
        claims = verified_claims(graph)
        questions = sub_questions(context, graph)
        sections = [str(s) for s in context.task.data.get("required_sections") or []]
        user = [task_section(context), "", render(graph, claims, questions)]
        if sections:
            user += ["", "Required report sections (use these exact headings): " + ", ".join(sections)]
        if not claims:
            user += ["", "No claim is verified yet: write findings and an outline that say so, without markers."]
        verified = {c["id"] for c in claims}
        question_ids = {str(q["id"]) for q in questions}
        result = agent_converse(
            context,
            definition,
            client,
            user,
            spec=SPEC,
            purpose="synthesis",
            check=lambda d: check_synthesis(d, graph, context.task.agent, verified, question_ids, sections),
        )
    files = result.files
    context.write_items(
        "key-findings", "key_findings", files.get("key-findings.json", {}).get("key_findings", [])
    )
    context.write_items("coverage", "coverage", files.get("coverage.json", {}).get("coverage", []))
    if files.get("gaps.json", {}).get("gaps"):
        context.write_items("gaps", "gaps", files["gaps.json"]["gaps"])
    context.write_artifact("report-outline.json", files["report-outline.json"])
    outline = files["report-outline.json"]["report_outline"]
    summary = (
        f"{len(files.get('key-findings.json', {}).get('key_findings', []))} key finding(s) and a "
        f"{len(outline['sections'])}-section outline from {len(claims)} verified claim(s) "
        f"(${client.total_cost_usd:.4f})."
    )
    context.complete(
        "completed" if not result.warnings else "partial", summary, "; ".join(result.warnings[:5]) or None
    )
