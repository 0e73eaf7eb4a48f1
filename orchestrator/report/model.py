"""The report's document model: sections of paragraphs, lists and tables (pure data).

Text is kept apart from citations (:class:`Cite`, :class:`Missing`), so the Markdown and
HTML renderers show exactly the same content and differ only in how they escape it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from orchestrator.graph.citations import Citation


@dataclass(frozen=True)
class Text:
    text: str


@dataclass(frozen=True)
class Strong:
    text: str


@dataclass(frozen=True)
class Emph:
    text: str


@dataclass(frozen=True)
class Quote:
    """A verbatim snippet from a source."""

    text: str


@dataclass(frozen=True)
class Link:
    text: str
    url: str


@dataclass(frozen=True)
class Cite:
    citation: Citation


@dataclass(frozen=True)
class Missing:
    """A marker that could not be cited (unknown claim or no verified evidence)."""

    ref: str


Inline = Text | Strong | Emph | Quote | Link | Cite | Missing
Line = tuple[Inline, ...]


@dataclass(frozen=True)
class Para:
    line: Line


@dataclass(frozen=True)
class Bullets:
    items: tuple[tuple[Line, ...], ...]


@dataclass(frozen=True)
class Table:
    header: tuple[str, ...]
    rows: tuple[tuple[Line, ...], ...]


@dataclass(frozen=True)
class References:
    entries: tuple[tuple[int, Line], ...]


Block = Para | Bullets | Table | References


@dataclass
class Section:
    heading: str
    kind: str
    blocks: list[Block] = field(default_factory=list)

    @property
    def anchor(self) -> str:
        return "sec-" + (re.sub(r"[^a-z0-9]+", "-", self.heading.lower()).strip("-") or "section")


@dataclass
class Document:
    title: str
    byline: Line
    lead: list[Block]
    sections: list[Section]
    score: float | None
    band: str | None
    gate: bool | None = None


# -- shorthand for building content: plain strings become Text ---------------------------


def text_line(*parts: str | Inline) -> Line:
    return tuple(Text(p) if isinstance(p, str) else p for p in parts)


def para(*parts: str | Inline) -> Para:
    return Para(text_line(*parts))


def table_row(*cells: str | Inline) -> tuple[Line, ...]:
    return tuple(text_line(c) for c in cells)


def bullet_list(lines: list[Line]) -> Bullets:
    """One bullet per line."""
    return Bullets(tuple((line,) for line in lines))
