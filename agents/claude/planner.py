"""research-planner with Claude: the question broken into sub-questions (plan.json)."""

from __future__ import annotations

from typing import Any

from agents.claude import agent_client, agent_converse, agent_entry, definition_of, task_section
from agents.claude.client import ClaudeClient
from agents.claude.output_spec import OutputSpec
from agents.runtime import AgentContext

SPEC = OutputSpec(
    "submit_plan",
    ("plan.json",),
    "Submit the research plan: the research question and its sub-questions (ids Q1, Q2, ...).",
)


def check_plan(data: dict[str, Any], max_questions: int) -> list[str]:
    problems = []
    ids = [q.get("id") for q in data.get("sub_questions", [])]
    for dup in sorted({i for i in ids if ids.count(i) > 1}):
        problems.append(
            f"plan.json at /sub_questions: the id {dup!r} is used more than once; give each "
            "sub-question its own id"
        )
    if not ids:
        problems.append("plan.json at /sub_questions: give at least one sub-question")
    if len(ids) > max_questions:
        problems.append(
            f"plan.json at /sub_questions: {len(ids)} sub-questions; give at most {max_questions}, "
            "merging the least important ones"
        )
    return problems


@agent_entry
def run(context: AgentContext, client: ClaudeClient | None = None) -> None:
    definition = definition_of(context)
    with agent_client(context, definition, client) as client:
        options = context.task.options
        max_questions = int(options.get("max_sub_questions", 8))
        sections = context.task.data.get("required_sections") or []
        user = [
            task_section(context),
            "",
            f"Plan between 3 and {max_questions} sub-questions that together answer the research question.",
        ]
        if sections:
            user.append("The final report must have these sections: " + ", ".join(map(str, sections)) + ".")
        result = agent_converse(
            context, definition, client, user, spec=SPEC, purpose="plan", check=lambda d: check_plan(d, max_questions)
        )
    plan = dict(result.files["plan.json"])
    plan["query"] = context.task.query  # the plan is for the question asked, word for word
    context.write_artifact("plan.json", plan)
    notes = "; ".join(result.warnings) or None
    context.complete(
        "completed" if not result.warnings else "partial",
        f"Planned {len(plan['sub_questions'])} sub-question(s) for the research question "
        f"({len(client.calls)} model call(s), ${client.total_cost_usd:.4f}).",
        notes,
    )
