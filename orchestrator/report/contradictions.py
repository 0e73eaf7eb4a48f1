"""The report's Contradictions section: both sides of every conflict, quoted and cited (pure).

A reader should see at once what disagrees with what, on whose authority: each side's
statement in quotes, the agent that wrote it and its citation (only claims with verified
evidence are cited; a side without is marked so). A conflict the orchestrator detected and an
agent also recorded is listed once, as detected, naming the agent's item.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from orchestrator.contradictions import unresolved
from orchestrator.report.blocks import Block, Bullets, Cite, Emph, Inline, Line, Strong, para, text_line
from orchestrator.report.context import Context, local_id

KIND_LABEL = {"numeric": "different numbers", "polarity": "opposite polarity", "explicit": "stated by an agent"}


def _sides(item: Mapping[str, Any], claims: Mapping[str, Mapping[str, Any]]) -> list[dict[str, Any]]:
    if item.get("sides"):
        return [dict(s) for s in item["sides"]]
    found = []
    for claim_id in item.get("claim_ids") or ():
        claim = claims.get(str(claim_id)) or {}
        agent = (claim.get("provenance") or {}).get("agent") or str(claim_id).partition(":")[0]
        found.append({"claim_id": str(claim_id), "agent": agent, "statement": claim.get("statement", "")})
    return found


def _entry(ctx: Context, item: Mapping[str, Any], claims: Mapping[str, Mapping[str, Any]]) -> tuple[Line, ...]:
    kinds = item.get("kinds") or ([item["kind"]] if item.get("kind") else [])
    label = ", ".join(KIND_LABEL.get(k, k) for k in kinds) or "recorded by an agent"
    head: list[str | Inline] = [Strong(f"[{item.get('status', 'open')}] {label}"), f" {item.get('description', '')}"]
    if item.get("recorded_by"):
        head.append(Emph(" Also recorded by " + ", ".join(map(str, item["recorded_by"])) + "."))
    if item.get("resolution"):
        head.append(f" Resolution: {item['resolution']}")
    lines: list[Line] = [text_line(*head)]
    for side in _sides(item, claims):
        claim_id = str(side.get("claim_id"))
        citation = ctx.citer.cite(claim_id)
        statement = " ".join(str(side.get("statement") or "").split())
        where = [" ", Cite(citation)] if citation else [Emph(" (no verified evidence)")]
        lines.append(text_line(f"“{statement}” — {side.get('agent')}, claim {local_id(claim_id)}", *where))
    return tuple(lines)


def contradictions_section(heading: str, ctx: Context) -> list[Block]:
    items = [c for c in ctx.graph.get("contradictions") or () if isinstance(c, Mapping)]
    covered = {str(r) for c in items if c.get("detected") for r in c.get("recorded_by") or ()}
    shown = [c for c in items if c.get("detected") or str(c.get("id")) not in covered]
    if not shown:
        return [para("No contradiction was found between claims of different agents or sources.")]
    shown.sort(key=lambda c: (c.get("status") == "resolved", not c.get("detected"), str(c.get("id"))))
    claims = {str(c["id"]): c for c in ctx.graph.get("claims") or () if isinstance(c, Mapping) and "id" in c}
    open_count = len(unresolved(items))
    return [
        para(f"{len(shown)} contradiction{'s' if len(shown) != 1 else ''} between claims, {open_count} unresolved. "
             "Each lists both sides, with the agent that made the claim and its citation."),
        Bullets(tuple(_entry(ctx, item, claims) for item in shown)),
    ]
