"""The report's figures and tables: every figure or table a cited claim quotes, shown with its caption and page.

Pure: the stored images and cells come through ``objects(sha256, suffix)``, which the caller reads
from the session (``run/outputs.py``); without it (or without a stored object) the caption alone
is shown. Built after the other sections, when the citer knows every cited claim.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from orchestrator.graph.citations import Citation, printed_page
from orchestrator.report.blocks import Cite, Figure, Inline, Section, text_line
from orchestrator.report.context import Context

__all__ = ["FIGURES_HEADING", "MAX_TABLE_ROWS", "Objects", "figures_section"]

Objects = Callable[[str, str], bytes | None]
FIGURES_HEADING = "Figures and Tables"
#: Rows of a cited table shown in the report (the cited rows always are).
MAX_TABLE_ROWS = 40


def _cited(ctx: Context) -> dict[str, tuple[str, set[int], list[str]]]:
    """Figure or table id -> (kind, cited rows, claim ids), in order of first citation."""
    found: dict[str, tuple[str, set[int], list[str]]] = {}
    for claim_id, entries in ctx.citer.cited.items():
        for entry in entries:
            verification = entry.evidence.get("verification") or {}
            for kind in ("table", "figure"):
                part = verification.get(kind)
                if not isinstance(part, str):
                    continue
                _, rows, claims = found.setdefault(part, (kind, set(), []))
                row = (entry.evidence.get("locator") or {}).get("rows")
                if isinstance(row, list) and len(row) == 2 and all(isinstance(r, int) for r in row):
                    rows.update(range(row[0], row[1] + 1))
                if claim_id not in claims:
                    claims.append(claim_id)
    return found


def _cells(data: bytes | None) -> tuple[tuple[str, ...], tuple[tuple[str, ...], ...]]:
    try:
        cells: Any = json.loads(data) if data else {}
        header = tuple(str(c) for c in cells["header"])
        return header, tuple(tuple(str(c) for c in row) for row in cells["rows"])
    except (ValueError, TypeError, KeyError):
        return (), ()


def _shown_rows(rows: tuple[tuple[str, ...], ...], cited: set[int]) -> tuple[tuple[str, ...], ...]:
    if len(rows) <= MAX_TABLE_ROWS:
        return rows
    keep = set(range(1, MAX_TABLE_ROWS + 1)) | cited
    return tuple(row for n, row in enumerate(rows, start=1) if n in keep)


def figures_section(ctx: Context, objects: Objects | None) -> Section | None:
    """One block per cited figure or table; None when no cited claim quotes one."""
    cited = _cited(ctx)
    if not cited:
        return None
    items = {i["id"]: i for key in ("figures", "tables") for i in ctx.graph.get(key) or () if isinstance(i, dict)}
    captions: dict[str, str] = {}
    for caption in ctx.graph.get("captions") or ():
        if isinstance(caption, dict):
            captions.setdefault(str(caption.get("describes")), " ".join(str(caption.get("text", "")).split()))
    section = Section(FIGURES_HEADING, "figures")
    for part_id, (kind, rows, claim_ids) in cited.items():
        item: Mapping[str, Any] = items.get(part_id) or {"label": part_id}
        source = ctx.citer.sources.get(str(item.get("source_id"))) or {}
        page = item.get("page")
        citation: Citation | None = ctx.citer.cite(*claim_ids)
        where = f" ({' '.join(str(source.get('title', '')).split()[:8])}, p. {printed_page(source, page)})" \
            if isinstance(page, int) else ""
        cite: list[str | Inline] = [" ", Cite(citation)] if citation else []
        caption = text_line(captions.get(part_id) or str(item.get("label", part_id)), where, *cite)
        label = str(item.get("label", part_id))
        if kind == "figure":
            sha = item.get("image_sha256")
            image = objects(sha, ".png") if objects and isinstance(sha, str) else None
            section.blocks.append(Figure(label, caption, image, f"sources/{sha}.png" if image else None))
        else:
            sha = item.get("data_sha256")
            header, body = _cells(objects(sha, ".json") if objects and isinstance(sha, str) else None)
            section.blocks.append(Figure(label, caption, header=header, rows=_shown_rows(body, rows),
                                         cited_rows=frozenset(rows)))
    return section
