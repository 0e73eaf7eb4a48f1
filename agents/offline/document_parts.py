"""Captions and table rows as citable passages: the interface of an ingested document's structure.

Sentence retrieval never quotes a caption or a table (they are not prose). These passages make them
findable and citable in their own right: each is verbatim text the orchestrator verifies (a caption
on its page, a row against the table's stored cells) with the locator that says which
(docs/offline-research.md#tables-and-captions). A row carries its column headers and its table's
label, caption and page, so an answer can say "Table 3 (p. 4973), Papers w/ PubMed IDs: 21.5M".

Ranking here is deliberately simple (the share of the question's rarer terms a passage holds);
``retrieval`` may rank these passages with its own index through :func:`document_passages`.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from agents.offline.sentences import terms

__all__ = ["PartPassage", "document_passages", "search_parts"]

#: Share of the question's idf-weighted terms a passage must hold to be returned.
MIN_SHARE = 0.5


@dataclass(frozen=True)
class PartPassage:
    """A caption or one table row: ``text`` is what evidence quotes, ``locator`` where it stands."""

    source_id: str
    page: int
    kind: str  # caption | table-row
    part: str  # table | figure: what part_id names
    part_id: str  # the figure's or table's global id
    label: str  # "Table 3", "Figure 2"
    text: str  # verbatim: the caption, or the row's cells joined by " | "
    caption: str = ""
    row: int | None = None  # 1-based body row of a table (0 is the header)
    cells: tuple[tuple[str, str], ...] = ()  # (column header, value) of a row

    @property
    def locator(self) -> dict[str, Any]:
        locator: dict[str, Any] = {"page": self.page, self.part: self.part_id}
        if self.row is not None:
            locator["rows"] = [self.row, self.row]
        return locator

    def evidence(self) -> dict[str, Any]:
        """The evidence item citing this passage (its snippet verifies against the stored cells or caption)."""
        return {"source_id": self.source_id, "snippet": self.text, "locator": self.locator}

    def statement(self, page_label: str | None = None) -> str:
        """A readable claim: the row's values with their column headers, its table and page."""
        where = f"{self.label} (p. {page_label or self.page})"
        if self.kind == "caption":
            return f"{where}: {self.text}"
        head, *rest = self.cells or (("", self.text),)
        values = "; ".join(f"{column}: {value}" if column else value for column, value in rest if value)
        name = f"{head[0]} {head[1]}".strip() if head[0] and not rest else head[1]
        if not name:
            return f"{where}: {values}."
        return f"{where}, {name}: {values}." if values else f"{where}: {name}."

    def search_text(self) -> str:
        """What the passage is found by: its own text, its headers and its table's caption."""
        headers = " ".join(column for column, _ in self.cells)
        return f"{self.text} {headers} {self.label} {self.caption}"


def _table_rows(table: Mapping[str, Any], cells: Mapping[str, Any], caption: str) -> Iterable[PartPassage]:
    header = [str(c) for c in cells.get("header") or ()]
    for number, row in enumerate(cells.get("rows") or (), start=1):
        values = [str(c) for c in row]
        if not any(v.strip() for v in values):
            continue
        columns = header + [""] * max(0, len(values) - len(header))
        yield PartPassage(str(table["source_id"]), int(table["page"]), "table-row", "table", str(table["id"]),
                          str(table.get("label") or "Table"), " | ".join(values), caption, number,
                          tuple(zip(columns, values, strict=False)))


def document_passages(graph: Mapping[str, Any], stored_json: Callable[[str], str | None]) -> list[PartPassage]:
    """Every caption and table row of the graph's documents (``stored_json(sha)``: a stored ``.json``)."""
    captions: dict[str, str] = {}
    out: list[PartPassage] = []
    parts = {str(p["id"]): (key[:-1], p) for key in ("figures", "tables") for p in graph.get(key) or ()
             if isinstance(p, dict) and isinstance(p.get("page"), int)}
    for caption in graph.get("captions") or ():
        if not isinstance(caption, dict) or not isinstance(caption.get("page"), int):
            continue
        found = parts.get(str(caption.get("describes")))
        text = " ".join(str(caption.get("text", "")).split())
        captions.setdefault(str(caption.get("describes")), text)
        if found is not None and text:
            kind, part = found
            out.append(PartPassage(str(caption["source_id"]), int(caption["page"]), "caption", kind, str(part["id"]),
                                   str(part.get("label") or ""), str(caption.get("text", "")), text))
    for table in graph.get("tables") or ():
        sha = table.get("data_sha256") if isinstance(table, dict) else None
        raw = stored_json(sha) if isinstance(sha, str) and isinstance(table.get("page"), int) else None
        try:
            cells = json.loads(raw) if raw else None
        except ValueError:
            cells = None
        if isinstance(cells, dict):
            out.extend(_table_rows(table, cells, captions.get(str(table["id"]), "")))
    return out


def search_parts(passages: list[PartPassage], question: str, limit: int = 3) -> list[tuple[PartPassage, float]]:
    """The passages holding most of the question's terms (idf-weighted); a row must match by its own cells too."""
    wanted = terms(question)
    if not passages or not wanted:
        return []
    found = [terms(p.search_text()) for p in passages]
    df = Counter(t for f in found for t in f)
    weight = {t: math.log((len(passages) + 1) / (df[t] + 0.5)) + 1.0 for t in wanted}
    total = sum(weight.values())
    scored = []
    for passage, have in zip(passages, found, strict=True):
        share = sum(weight[t] for t in wanted & have) / total
        own = terms(passage.text) & wanted
        if share >= MIN_SHARE and (passage.kind == "caption" or own):
            scored.append((passage, round(share + 0.05 * len(own), 4)))
    scored.sort(key=lambda item: (-item[1], item[0].source_id, item[0].page, item[0].row or 0))
    return scored[:limit]
