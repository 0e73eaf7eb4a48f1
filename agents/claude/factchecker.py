"""fact-checker with Claude: a confidence score per claim and the contradictions between claims.

The claims come from the committed graph (other agents' work, by global id); the model looks
for corroboration across the stored texts with search_passages and read_source_page.
"""

from __future__ import annotations

from typing import Any

from agents.claude import agent_client, agent_converse, agent_entry, definition_of, task_section
from agents.claude.client import ClaudeClient
from agents.claude.output_spec import OutputSpec
from agents.claude.source_library import SourceLibrary
from agents.claude.tools import Toolbox
from agents.runtime import AgentContext

SPEC = OutputSpec(
    "submit_assessment",
    ("confidence-scores.json", "contradictions.json"),
    "Submit one confidence score per listed claim (by its global id) and every contradiction found.",
    required=("confidence_scores",),
)
_PRIORITY = {"high": 0, "medium": 1, "low": 2}


def _clip(text: Any, limit: int = 280) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def claims_to_check(graph: dict[str, Any], agent: str, limit: int) -> list[dict[str, Any]]:
    """Other agents' claims, high priority first (a fact-checker never scores its own)."""
    claims = [c for c in graph.get("claims", []) if not str(c.get("id", "")).startswith(f"{agent}:")]
    return sorted(claims, key=lambda c: (_PRIORITY.get(c.get("priority", "low"), 3), c["id"]))[:limit]


def render_claims(claims: list[dict[str, Any]]) -> str:
    lines = []
    for claim in claims:
        lines.append(
            f"- {claim['id']} [{claim.get('priority', '?')}, confidence {claim.get('confidence')}]: "
            f"{_clip(claim.get('statement'), 400)}"
        )
        for ev in claim.get("evidence", []):
            ver = ev.get("verification") or {}
            state = "verified" if ver.get("verified") else "NOT verified"
            page = (ev.get("locator") or {}).get("page")
            lines.append(
                f"    evidence {ev.get('source_id')}"
                + (f" p.{page}" if page else "")
                + f' ({state}): "{_clip(ev.get("snippet"))}"'
            )
    return "\n".join(lines)


def check_assessment(data: dict[str, Any], claim_ids: set[str], source_ids: set[str]) -> list[str]:
    problems = []
    scored = [s.get("claim_id") for s in data.get("confidence_scores", [])]
    for i, score in enumerate(data.get("confidence_scores", [])):
        if score.get("claim_id") not in claim_ids:
            problems.append(
                f"confidence-scores.json at /confidence_scores/{i}/claim_id: {score.get('claim_id')!r} "
                "is not one of the listed claims; use the global ids exactly as listed"
            )
        for ref in score.get("supporting_source_ids", []):
            if ref not in source_ids:
                problems.append(
                    f"confidence-scores.json at /confidence_scores/{i}/supporting_source_ids: "
                    f"{ref!r} is not a stored source; use source ids from search_passages"
                )
    for dup in sorted({c for c in scored if scored.count(c) > 1}):
        problems.append(f"confidence-scores.json: the claim {dup!r} is scored more than once; keep one score")
    missing = sorted(claim_ids - set(scored))
    if missing:
        problems.append(
            f"confidence-scores.json: no score for {len(missing)} listed claim(s): "
            f"{', '.join(missing[:20])}; score every listed claim"
        )
    for i, item in enumerate(data.get("contradictions", [])):
        unknown = [c for c in item.get("claim_ids", []) if c not in claim_ids]
        if unknown:
            problems.append(
                f"contradictions.json at /contradictions/{i}/claim_ids: {', '.join(map(repr, unknown))} "
                "not among the listed claims"
            )
    return problems


@agent_entry
def run(context: AgentContext, client: ClaudeClient | None = None) -> None:
    definition = definition_of(context)
    with agent_client(context, definition, client) as client:
        graph = context.graph()
        limit = int(context.task.options.get("max_claims_to_check", 150))
        claims = claims_to_check(graph, context.task.agent, limit)
        claim_ids = {c["id"] for c in claims}
        source_ids = {s["id"] for s in graph.get("sources", []) if isinstance(s, dict) and "id" in s}
        if not claims:
            context.write_artifact("confidence-scores.json", {"confidence_scores": []})
            context.complete("completed", "There were no claims to check.")
            return
        library = SourceLibrary(context, graph)
        toolbox = Toolbox(definition.tools, library, client.config)
        user = [task_section(context), "", f"Claims to check ({len(claims)}):", render_claims(claims)]
        result = agent_converse(
            context,
            definition,
            client,
            user,
            spec=SPEC,
            purpose="fact-check",
            tools=toolbox,
            check=lambda d: check_assessment(d, claim_ids, source_ids),
        )
    scores = result.files.get("confidence-scores.json", {}).get("confidence_scores", [])
    contradictions = result.files.get("contradictions.json", {}).get("contradictions", [])
    context.write_items("confidence-scores", "confidence_scores", scores)
    if contradictions:
        context.write_items("contradictions", "contradictions", contradictions)
    by_status: dict[str, int] = {}
    for score in scores:
        by_status[score["status"]] = by_status.get(score["status"], 0) + 1
    summary = (
        f"Scored {len(scores)} of {len(claims)} claim(s) ("
        + ", ".join(f"{n} {s}" for s, n in sorted(by_status.items()))
        + f"); {len(contradictions)} "
        f"contradiction(s) (${client.total_cost_usd:.4f})."
    )
    notes = "; ".join(result.warnings[:5]) or None
    context.complete("completed" if not result.warnings else "partial", summary, notes)
