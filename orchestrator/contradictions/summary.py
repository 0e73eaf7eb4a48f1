"""How contradictions are shown and counted: ``status`` lines, events, the quality penalty (pure but for events).

Kept apart from the detector (:mod:`orchestrator.contradictions`) so that what users read can
change without touching what is detected.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from orchestrator.contradictions.records import unresolved

#: Quality-score points each unresolved contradiction costs, and the most they cost together.
PENALTY_EACH = 3.0
PENALTY_MAX = 15.0


@dataclass(frozen=True)
class Penalty:
    """Points taken off the quality score, with the reason shown beside the components."""

    name: str
    label: str
    points: float
    detail: str

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "label": self.label, "points": -self.points, "detail": self.detail}


def contradiction_penalty(open_ids: Iterable[str]) -> Penalty:
    """Unresolved contradictions cost points: the graph holds claims that cannot all be true."""
    ids = list(open_ids)
    points = min(PENALTY_MAX, PENALTY_EACH * len(ids))
    shown = ", ".join(ids[:5]) + (f" and {len(ids) - 5} more" if len(ids) > 5 else "")
    detail = (f"{len(ids)} unresolved contradiction{'s' if len(ids) != 1 else ''}"
              + (f" ({shown})" if ids else "")
              + f": {PENALTY_EACH:g} points each, at most {PENALTY_MAX:g}")
    return Penalty("contradictions", "Unresolved contradictions", points, detail)


def summary(item: Mapping[str, Any]) -> dict[str, Any]:
    """One contradiction as ``status`` lists it: id, kind, status, both claims with agent and source."""
    sides = item.get("sides") or [{"claim_id": c} for c in item.get("claim_ids") or ()]
    return {
        "id": item.get("id"), "kind": item.get("kind", "recorded"), "status": item.get("status", "open"),
        "detected": bool(item.get("detected")), "description": item.get("description"),
        "counted": bool(list(unresolved([item]))),
        "sides": [{k: s.get(k) for k in ("claim_id", "agent", "source_ids", "value") if s.get(k) is not None}
                  for s in sides],
    }


def status_lines(summaries: list[dict[str, Any]], quality: Mapping[str, Any] | None = None,
                 limit: int = 20) -> list[str]:
    """The lines ``cconductor status`` prints for the contradictions (most important first), and
    the quality penalty they cost when ``quality`` (``quality.json``) has one."""
    penalties = [p for p in (quality or {}).get("penalties") or () if isinstance(p, Mapping) and p.get("points")]
    shown = [f"penalty   {p['points']} {str(p.get('label', '')).lower()}: {p.get('detail')}" for p in penalties]
    if not summaries:
        return shown
    counted = sum(1 for s in summaries if s["counted"])
    lines = [f"conflicts {len(summaries)} contradiction(s), {counted} unresolved"]
    ordered = sorted(summaries, key=lambda s: (not s["counted"], s["status"] == "resolved", str(s["id"])))
    for item in ordered[:limit]:
        sides = " vs ".join(
            f"{s.get('claim_id')} ({s.get('agent', '?')}" + (f", {s['value']}" if s.get("value") else "") + ")"
            for s in item["sides"])
        lines.append(f"  [{item['status']}] {item['kind']:<9} {item['id']}: {sides}")
    if len(ordered) > limit:
        lines.append(f"  ... and {len(ordered) - limit} more (cconductor status --json lists all)")
    return lines + shown



class Emitter(Protocol):
    def emit(self, type: str, message: str, **data: Any) -> dict[str, Any]: ...


def emit_contradiction_events(events: Emitter, before: Iterable[str], now: Mapping[str, Mapping[str, Any]]) -> None:
    """Record in the event log each detected contradiction that appeared or went away since the last view."""
    previous = set(before)
    for cid in sorted(now.keys() - previous):
        item = now[cid]
        agents = [str(s.get("agent")) for s in item.get("sides") or ()]
        events.emit("contradiction.detected",
                    f"{item.get('kind')} contradiction between {' and '.join(item.get('claim_ids') or ())}: "
                    f"{item.get('description')}",
                    id=cid, kind=item.get("kind"), claim_ids=item.get("claim_ids"), agents=agents,
                    status=item.get("status"))
    for cid in sorted(previous - now.keys()):
        events.emit("contradiction.cleared", f"contradiction {cid} no longer holds: a claim it involved changed "
                    "or was removed", id=cid)
