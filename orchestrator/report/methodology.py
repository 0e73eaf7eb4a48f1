"""The Methodology section: how the run went (mission, agents and their outcomes, inputs left out, cost).

Read from session.json and the ledger as well as the graph, so it lives apart from the builders that
read only claims.
"""

from __future__ import annotations

from orchestrator.report.blocks import Block, Strong, Table, bullet_list, para, table_row, text_line
from orchestrator.report.context import Context, agent_names

__all__ = ["methodology_section"]


def methodology_section(heading: str, ctx: Context) -> list[Block]:
    blocks: list[Block] = []
    mission = ctx.mission or {}
    if mission.get("name"):
        purpose = mission.get("objective") or mission.get("description") or ""
        blocks.append(para("Mission ", Strong(str(mission["name"])), f": {purpose}"))
    phases = [(k.replace("_", " ").capitalize(), v) for k, v in (mission.get("phases") or {}).items() if v]
    if phases:
        blocks.append(bullet_list([text_line(Strong(f"{name}:"), " " + ", ".join(v)) for name, v in phases]))
    stats, counts = ctx.graph.get("stats") or {}, ctx.quality.get("counts") or {}
    blocks.append(para(
        f"{stats.get('agents', len(agent_names(ctx.graph)))} agents contributed {counts.get('sources', 0)} "
        "sources "
        f"({counts.get('peer_reviewed_sources', 0)} peer reviewed), {counts.get('claims', 0)} claims and "
        f"{counts.get('evidence_items', 0)} evidence items; {counts.get('verified_evidence', 0)} snippets "
        "were verified by matching them against the stored source text. Each citation number stands for one "
        "source; only claims with verified evidence are cited, with the page the snippet was found on."))
    agents = dict(ctx.session.get("agents") or {})
    actions: dict[str, dict[str, int]] = {}
    for entry in ctx.ledger:
        per_agent = actions.setdefault(str(entry.get("agent")), {})
        per_agent[str(entry.get("action"))] = per_agent.get(str(entry.get("action")), 0) + 1
    names = sorted(set(agents) | set(actions))
    if names:
        rows = []
        for name in names:
            state, done = agents.get(name) or {}, actions.get(name, {})
            rows.append(table_row(name, str(state.get("state", "-")), str(state.get("attempts", "-")),
                             str(done.get("merge", 0)), str(done.get("reject", 0))))
        blocks.append(Table(("Agent", "State", "Attempts", "Merged", "Rejected"), tuple(rows)))
    skipped = [s for value in ctx.graph.values() if isinstance(value, dict) and "documents" in value
               for s in (value.get("skipped") or ()) if isinstance(s, dict)]
    if skipped:
        listed = "; ".join(f"{str(s.get('path', '')).rsplit('/', 1)[-1]} ({s.get('reason')})" for s in skipped[:20])
        blocks.append(para(f"Input files not used ({len(skipped)}): {listed}."))
    instances = ((ctx.session.get("run") or {}).get("instances") or {}) if isinstance(ctx.session.get("run"), dict) \
        else {}
    for name, instance in sorted(instances.items()):
        failure = instance.get("failure") if isinstance(instance, dict) else None
        if isinstance(failure, dict) and instance.get("state") == "failed":
            blocks.append(para(f"{name} failed ({failure.get('kind')}): {failure.get('reason')}"))
    run = []
    if ctx.session.get("iteration") is not None:
        run.append(f"{ctx.session['iteration']} iterations")
    if isinstance(ctx.session.get("cost_usd"), int | float):
        run.append(f"cost ${ctx.session['cost_usd']:.2f}")
    if ctx.session.get("status"):
        run.append(f"final status {ctx.session['status']}")
    if run:
        blocks.append(para("Run: " + ", ".join(run) + "."))
    return blocks
