"""The graph explorer: items by kind and agent, one node with its neighbours and provenance."""

from __future__ import annotations

from typing import Any

from orchestrator.contradictions.summary import summary
from orchestrator.viewer.lookup import COLLECTIONS, GraphIndex, preview

PAGE = 100


def item_agents(item: dict[str, Any]) -> list[str]:
    """The agents whose files an item came from (its provenance; several after a merge of equals)."""
    provenance = item.get("provenance")
    records = provenance if isinstance(provenance, list) else [provenance]
    found = [p["agent"] for p in records if isinstance(p, dict) and isinstance(p.get("agent"), str)]
    if not found and isinstance(item.get("id"), str) and ":" in item["id"]:
        found = [item["id"].split(":", 1)[0]]
    return sorted(set(found))


def _row(kind: str, item: dict[str, Any]) -> dict[str, Any]:
    row = {"id": item.get("id"), "kind": kind, "label": preview(kind, item), "agents": item_agents(item)}
    if kind == "relationships":
        row["label"] = f"{item.get('subject')} {item.get('predicate')} {item.get('object')}"
    if kind == "contradictions":
        sides = " vs ".join(str(s.get("claim_id")) for s in summary(item)["sides"])
        row["label"] = str(item.get("description") or f"{item.get('kind', 'recorded')}: {sides}")
        row["status"] = item.get("status", "open")
    if kind == "claims":
        row["verified"] = any(isinstance(e, dict) and (e.get("verification") or {}).get("verified") is True
                              for e in item.get("evidence") or ())
    return row


def list_items(index: GraphIndex, kind: str, agent: str | None, query: str | None, offset: int) -> dict[str, Any]:
    """One page of a collection's items, filtered by contributing agent and by words in their label or id."""
    if kind not in COLLECTIONS:
        kind = "claims"
    words = (query or "").casefold().split()
    rows = []
    for item in index.graph.get(kind) or ():
        if not isinstance(item, dict):
            continue
        row = _row(kind, item)
        if agent and agent not in row["agents"]:
            continue
        haystack = f"{row['id']} {row['label']}".casefold()
        if all(word in haystack for word in words):
            rows.append(row)
    counts = {k: len(index.graph.get(k) or ()) for k in COLLECTIONS}
    return {"kind": kind, "total": len(rows), "offset": offset, "items": rows[offset: offset + PAGE],
            "counts": counts, "agents": index.agents()}


def _neighbour(index: GraphIndex, node_id: Any, relation: str) -> dict[str, Any]:
    found = index.item(node_id) if isinstance(node_id, str) else None
    if found is None:
        return {"id": node_id, "kind": None, "label": str(node_id), "relation": relation}
    kind, item = found
    return {"id": item.get("id"), "kind": kind, "label": _row(kind, item)["label"], "relation": relation}


def node(index: GraphIndex, node_id: str) -> dict[str, Any] | None:
    """An item whole (provenance included) and every item it names or that names it."""
    found = index.item(node_id)
    if found is None:
        return None
    kind, item = found
    near: list[dict[str, Any]] = []
    if kind == "claims":
        near += [_neighbour(index, e.get("source_id"), "cites source") for e in item.get("evidence") or ()
                 if isinstance(e, dict)]
        near += [_neighbour(index, e, "about entity") for e in item.get("entity_ids") or ()]
    if kind == "relationships":
        near += [_neighbour(index, item.get("subject"), "subject"), _neighbour(index, item.get("object"), "object")]
        near += [_neighbour(index, c, "stated by claim") for c in item.get("claim_ids") or ()]
    if kind == "contradictions":
        near += [_neighbour(index, s.get("claim_id"), "side") for s in summary(item)["sides"]]
    near += [_neighbour(index, c, "cited by claim") for c in index.cited_by.get(str(item.get("id")), ())]
    near += [_neighbour(index, r, "in relationship") for r in index.related.get(str(item.get("id")), ())]
    unique = list({(str(n["id"]), n["relation"]): n for n in near}.values())
    return {"kind": kind, "id": item.get("id"), "label": _row(kind, item)["label"], "agents": item_agents(item),
            "item": item, "neighbours": unique}


def growth(index: GraphIndex, agents: dict[str, Any]) -> list[dict[str, Any]]:
    """The graph's size after each merge, in commit order, as the committed graph now tells it.

    An item counts from the first commit of any agent it came from (items several agents
    contributed are merged into one), so the last point is the graph's own count.
    """
    seq_of = {name: info["last_commit_seq"] for name, info in agents.items()
              if isinstance(info, dict) and isinstance(info.get("last_commit_seq"), int)}
    kinds = ("sources", "claims", "entities", "relationships")
    added: dict[int, dict[str, int]] = {seq: dict.fromkeys(kinds, 0) for seq in seq_of.values()}
    for kind in kinds:
        for item in index.graph.get(kind) or ():
            seqs = [seq_of[a] for a in item_agents(item) if a in seq_of] if isinstance(item, dict) else []
            if seqs:
                added[min(seqs)][kind] += 1
    by_seq = {seq: name for name, seq in seq_of.items()}
    totals = dict.fromkeys(kinds, 0)
    points = []
    for seq in sorted(added):
        for kind in kinds:
            totals[kind] += added[seq][kind]
        points.append({"seq": seq, "agent": by_seq[seq], **totals})
    return points
