"""Each agent's contribution with its evidence verified as the view counts it now (pure).

A record keeps the verification its evidence got at merge time. The JSON view counts it again
against the stored texts as they are now (:func:`orchestrator.graph.unified_parts.current_verification`:
a text deleted or altered since verifies nothing, a changed one is checked again). Every other
rendering of the graph (``knowledge-graph.trig``, ``cconductor export`` in each format, ``ask``'s
SPARQL store) must say the same, so they take the view's verifications from here rather than
the record's: one rule, one place.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["Overrides", "current_contribution", "verification_overrides"]

#: (claim index, evidence index) in the agent's own ``items.claims`` -> the verification the view counts.
Overrides = dict[tuple[int, int], dict[str, Any]]


def verification_overrides(records: Mapping[str, Mapping[str, Any]],
                           claims: list[dict[str, Any]]) -> dict[str, Overrides]:
    """The evidence whose verification in the view (``claims``: the view's unified claims, agents in sorted
    order, each agent's in its own order, as :func:`orchestrator.graph.unified_parts.assemble` lists them)
    differs from the one its record holds, by agent. Empty when every stored text is as it was."""
    found: dict[str, Overrides] = {}
    position = 0
    for agent in sorted(records):
        own = records[agent]["contribution"]["items"]["claims"]
        shown = claims[position:position + len(own)]
        position += len(own)
        for i, (claim, view_claim) in enumerate(zip(own, shown, strict=False)):
            evidence = claim.get("evidence") or ()
            for j, (item, view_item) in enumerate(zip(evidence, view_claim.get("evidence") or (), strict=False)):
                now = view_item.get("verification") if isinstance(view_item, Mapping) else None
                if isinstance(item, Mapping) and isinstance(now, dict) and now is not item.get("verification") \
                        and now != item.get("verification"):
                    found.setdefault(agent, {})[(i, j)] = now
    return found


def current_contribution(contribution: Mapping[str, Any], overrides: Overrides | None) -> Mapping[str, Any]:
    """``contribution`` with the verification of each evidence item of ``overrides`` replaced (a copy; the
    contribution itself when there is nothing to replace)."""
    if not overrides:
        return contribution
    items = contribution["items"]
    claims = list(items["claims"])
    for (i, j), verification in overrides.items():
        if i >= len(claims) or not isinstance(claims[i], Mapping):
            continue
        claim = claims[i] = dict(claims[i])
        evidence = claim["evidence"] = list(claim.get("evidence") or ())
        if j < len(evidence) and isinstance(evidence[j], Mapping):
            evidence[j] = {**evidence[j], "verification": verification}
    return {**contribution, "items": {**items, "claims": claims}}
