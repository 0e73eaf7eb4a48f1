"""What a section builder may read, and the small readings of the graph builders share (pure)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from orchestrator.graph.citations import Citer, find_markers
from orchestrator.model.layout import RESERVED_KEYS
from orchestrator.report.blocks import Cite, Inline, Line, Missing, Text

#: Sort rank of a priority or importance; unknown values rank as medium.
PRIORITY_RANK = {"high": 0, "medium": 1, "low": 2}


def inline_text(text: str, citer: Citer, resolve: Callable[[str], str | None]) -> Line:
    """Paragraph text with ``[@ref]`` markers -> inlines, markers cited (or shown as missing)."""
    parts: list[Inline] = []
    position = 0
    text = " ".join(text.split())
    for start, end, refs in find_markers(text):
        if text[position:start]:
            parts.append(Text(text[position:start]))
        ids = [resolve(ref) for ref in refs]
        citation = citer.cite(*(i for i in ids if i))
        if citation:
            parts.append(Cite(citation))
        cited = set(citation.claim_ids) if citation else set()
        parts.extend(Missing(ref) for ref, cid in zip(refs, ids, strict=True) if cid not in cited)
        position = end
    if text[position:]:
        parts.append(Text(text[position:]))
    return tuple(parts)


@dataclass
class Context:
    """Everything a section builder may read."""

    graph: Mapping[str, Any]
    session: Mapping[str, Any]
    quality: Mapping[str, Any]
    mission: Mapping[str, Any] | None
    ledger: list[dict[str, Any]]
    citer: Citer
    resolve: Callable[[str], str | None]

    def line(self, text: str) -> Line:
        return inline_text(text, self.citer, self.resolve)


def agent_names(graph: Mapping[str, Any]) -> list[str]:
    return sorted(k for k, v in graph.items() if k not in RESERVED_KEYS and isinstance(v, dict))


def local_id(item_id: str) -> str:
    return item_id.rpartition(":")[2]
