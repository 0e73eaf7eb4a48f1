"""A session's tables and figures as citable nodes of `ask`, answered and validated like claims.

Each cited table or figure becomes a node whose passages are what the orchestrator checked: a
table's rows (from its stored cells, which match their sha256) written with their column headers,
its caption (found on its page at merge) and a figure's caption; a figure's description by a
vision model is a passage too, titled as the model's words, never as the source's.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

__all__ = ["Objects", "part_nodes"]

Objects = Callable[[str, str], bytes | None]


def _evidence(source_id: str, page: int, text: str, note: str | None = None) -> dict[str, Any]:
    item: dict[str, Any] = {"source_id": source_id, "snippet": text,
                            "verification": {"verified": True, "page": page, "matched_text": text}}
    if note:
        item["note"] = note
    return item


def _rows(item: dict[str, Any], cells: Any) -> list[str]:
    """Each row as "Table 3, <first cell>: <header> <value>; ..." (the values verbatim, with their headers)."""
    header = [str(h) for h in cells.get("header") or ()]
    out = []
    for row in cells.get("rows") or ():
        values = [str(v) for v in row]
        if not values or not any(v.strip() for v in values):
            continue
        pairs = [f"{h}: {v}" if h else v for h, v in zip([*header, *[""] * len(values)][1:], values[1:],
                                                           strict=False) if v]
        out.append(f"{item.get('label')}, {values[0]}: {'; '.join(pairs)}." if pairs else f"{item.get('label')}, "
                   f"{values[0]}.")
    return out


def part_nodes(graph: dict[str, Any], objects: Objects | None) -> list[dict[str, Any]]:
    """Claim-shaped nodes (statement, evidence with verified passages) for the graph's tables and figures."""
    captions: dict[str, str] = {}
    for caption in graph.get("captions") or ():
        if isinstance(caption, dict):
            captions.setdefault(str(caption.get("describes")), " ".join(str(caption.get("text", "")).split()))
    nodes = []
    for key in ("tables", "figures"):
        for item in graph.get(key) or ():
            if not isinstance(item, dict) or not isinstance(item.get("page"), int) or "id" not in item:
                continue
            source_id, page = str(item.get("source_id")), int(item["page"])
            evidence = [_evidence(source_id, page, captions[item["id"]])] if item["id"] in captions else []
            sha = item.get("data_sha256")
            data = objects(sha, ".json") if objects and isinstance(sha, str) else None
            try:
                cells = json.loads(data) if data else None
            except ValueError:
                cells = None
            if isinstance(cells, dict):
                evidence += [_evidence(source_id, page, row) for row in _rows(item, cells)]
            description = item.get("description")
            if isinstance(description, str) and description.strip():
                model = str((item.get("description_by") or {}).get("model") or "a vision model")
                evidence.append(_evidence(source_id, page, f"{item.get('label')} shows: {description.strip()}",
                                          note=f"described by {model}, not the source's words"))
            if evidence:
                nodes.append({"id": item["id"], "statement": captions.get(item["id"]) or str(item.get("label")),
                              "evidence": evidence, "part": key[:-1]})
    return nodes
