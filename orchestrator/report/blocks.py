"""The report's document model: sections of paragraphs, lists and tables (pure data).

Text is kept apart from citations (:class:`Cite`, :class:`Missing`), so the Markdown and
HTML renderers show exactly the same content and differ only in how they escape it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from orchestrator.graph.citations import Citation

#: A source's own numbered reference marker: "[79]", "[4, 12]", "[3-5]" (not a year such as "[2020]").
_SOURCE_MARKER = re.compile(r"\s?\[(\d{1,3}(?:\s*[,;\u2013\u2014-]\s*\d{1,3})*)\]")
#: Words after which bracketed numbers are the text's own: "Table [1]", "Eq. [3]", "the interval [1, 10]".
_LABEL_BEFORE = re.compile(
    r"\b(?:tables?|tab|figs?|figures?|eqs?|equations?|sections?|sec|steps?|chapters?|ch|appendix|algorithms?|"
    r"lines?|pages?|pp?|intervals?|ranges?|items?|no|entry|entries|columns?|rows?|lemma|theorem)\.?\s*$",
    re.IGNORECASE)


def _is_source_marker(text: str, found: re.Match[str]) -> bool:
    """A bracketed number is a reference marker unless it is an index ("x[0]", "A[1,2]", "a[1][2]"), an
    interval or a value ("[0, 1]": no reference is numbered 0), or a label's number ("Table [1]")."""
    if any(n.startswith("0") for n in re.findall(r"\d+", found.group(1))):
        return False
    start = found.start() + (found.group(0)[0] != "[")
    before = text[:start]
    glued = re.search(r"(\w+|[)\]])$", before) if before and not before[-1].isspace() else None
    if glued and (len(glued.group(1)) == 1 or not glued.group(1).isalpha()):
        return False
    return not _LABEL_BEFORE.search(before)


def _replace_markers(text: str, by: str) -> str:
    return _SOURCE_MARKER.sub(lambda m: by if _is_source_marker(text, m) else m.group(0), text)


def without_source_markers(text: str) -> str:
    """Prose from a source without the source's own reference numbers, so the report's citations are
    the only numbered ones a reader meets ("... quality improvement [79]." -> "... quality improvement.")."""
    return _replace_markers(text, "")


def quote_without_source_markers(text: str) -> str:
    """A verbatim quote with the source's reference numbers elided as "[\u2026]", the usual mark of an omission."""
    return _replace_markers(text, " [\u2026]")


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


@dataclass(frozen=True)
class Figure:
    """A cited figure (its image) or table (its cells) with its caption, source and page.

    ``image`` is the stored PNG (embedded by the HTML page) and ``image_path`` where it stands
    beside the Markdown report; a table has ``header`` and ``rows``, its cited rows (1-based) marked.
    """

    label: str
    caption: Line
    image: bytes | None = None
    image_path: str | None = None
    header: tuple[str, ...] = ()
    rows: tuple[tuple[str, ...], ...] = ()
    cited_rows: frozenset[int] = frozenset()


Block = Para | Bullets | Table | References | Figure


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
    #: (met, checked) of the mission's success criteria; None when the mission checks none
    criteria: tuple[int, int] | None = None
    #: citation number -> the cited source's title, so the answer can be told without the bibliography
    titles: dict[int, str] = field(default_factory=dict)


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
