"""Figures and tables of a PDF page, found from their captions ("Figure 2:", "Fig 3.", "Table 1").

A caption is a line that starts with a figure or table label. Its figure is the block of graphics
(images, embedded forms, vector paths) next to it in its column, above it first; its table is the
run of rows of several cells (or ruled rows) below or above it, whichever side holds more. The
rows' cells become columns where no row has text (the gaps line up), and the rows above the second
rule, or else the first row, are the header. These are layout guesses made once, by code, at
ingestion: which caption describes which figure stays a judgement the graph lets an agent correct.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from agents.offline.pdflayout import Box, PageLayout, Segment, overlap, pad, union
from agents.offline.pdftables import FoundTable, table_cells, table_column, table_sides

__all__ = ["CAPTION_RE", "Found", "find_objects", "is_caption_line", "kind_of"]

#: "Figure 1:", "Fig. 2.", "Fig 3", "FIGURE 4", "Table 1", "TABLE II", "Supplementary Table S1" at a line start.
CAPTION_RE = re.compile(
    r"^(?:Supplementary\s+)?(?P<kind>Fig(?:ure)?s?\.?|FIG(?:URE)?\.?|Table|TABLE)\s*"
    r"(?P<number>S?\d{1,3}|[IVX]{1,5})(?P<rest>\s*[.:|]|\s+[A-Z(]|\s*$)"
)
#: Text right after the label that shows the line mentions a figure in prose ("Table 3 for more ...").
_PROSE_AFTER = re.compile(r"^\s*(?:,|and\b|or\b|for\b|in\b|of\b|shows?\b|presents?\b|is\b|are\b|to\b|we\b|top\b|"
                          r"\(|lists?\b|summari[sz]es\b|reports?\b|gives?\b|compares?\b|illustrates?\b|was\b)")


def is_caption_line(line: str) -> re.Match[str] | None:
    """The label match when a line opens a caption (not prose that mentions a figure)."""
    m = CAPTION_RE.match(line.strip())
    if not m or _PROSE_AFTER.match(line.strip()[m.end("number"):]):
        return None
    return m


def kind_of(label_kind: str) -> str:
    return "table" if label_kind.lower().startswith("tab") else "figure"


@dataclass
class Found:
    """One caption on a page and the figure or table found next to it."""

    kind: str  # figure | table
    number: str
    label: str  # "Figure 2", "Table 1"
    caption_box: Box
    caption_lines: list[str]
    line_count: int = 1  # visual lines of the caption
    box: Box | None = None  # the figure's or table's region, when found
    table: FoundTable | None = None
    continued: bool = False  # "Table 2 (continued)"
    notes: list[str] = field(default_factory=list)


def _column(layout: PageLayout, caption: Box) -> tuple[float, float]:
    """The caption's column: the whole text width when the caption spans it, else its half of the page."""
    text = [s.box for s in layout.segments if s.width > 0]
    left = min((b[0] for b in text), default=0.0)
    right = max((b[2] for b in text), default=layout.width)
    middle = (left + right) / 2
    if caption[0] < middle - 20 and caption[2] > middle + 20:
        return left - 2, right + 2
    return (left - 2, middle + 2) if caption[2] <= middle + 20 else (middle - 2, right + 2)


def _caption_block(layout: PageLayout, first: Segment) -> tuple[Box, list[str], int]:
    """The caption's lines: the label line (with the segments that follow it on that line) and the lines
    below it with the same left edge and spacing; and how many lines that is."""
    column = _column(layout, first.box)
    row = [first]
    for seg in sorted(layout.segments, key=lambda s: s.box[0]):
        if seg is not first and abs(seg.middle - first.middle) < 2 and 0 <= seg.box[0] - row[-1].box[2] + 1 < 13:
            row.append(seg)
    box = union([s.box for s in row])
    lines = 1
    height = max(first.height, 6.0)
    below = sorted((s for s in layout.segments if s.box[3] <= first.box[1] + 1), key=lambda s: -s.box[3])
    taken: list[Segment] = []
    for seg in below:
        if box[1] - seg.box[3] > 0.9 * height:
            break
        if overlap(seg.box[0], seg.box[2], box[0], box[2]) > 0 and box[0] - 3 <= seg.box[0] <= box[0] + 40 \
                and seg.box[2] <= box[2] + 40:
            if CAPTION_RE.match(seg.text):
                break
            if any(o is not seg and abs(o.middle - seg.middle) < 2 and overlap(o.box[0], o.box[2], *column) > 0
                   and o.box[0] > seg.box[2] for o in layout.segments):
                break  # a line of several cells: the table under its caption begins
            if not taken or abs(seg.middle - taken[-1].middle) >= 2:
                lines += 1
            taken.append(seg)
            box = union([box, seg.box])
    ordered = sorted([*row, *taken], key=lambda s: (-round(s.middle), s.box[0]))
    return box, [s.text for s in ordered], lines


def _figure_region(layout: PageLayout, caption: Box, column: tuple[float, float]) -> Box | None:
    """The graphics next to the caption in its column: above it first, else below; chained by small gaps."""
    graphics = [g for g in layout.graphics if not g.is_rule()
                and overlap(g.box[0], g.box[2], *column) > 0.5 * min(g.box[2] - g.box[0], column[1] - column[0])]
    for above in (True, False):
        side = [g for g in graphics if (g.box[1] >= caption[3] - 4 if above else g.box[3] <= caption[1] + 4)]
        side.sort(key=lambda g: g.box[1] if above else -g.box[3])
        region: list[Box] = []
        edge = caption[3] if above else caption[1]
        for g in side:
            gap = g.box[1] - edge if above else edge - g.box[3]
            if gap > (60 if not region else 24):
                break
            region.append(g.box)
            edge = max(edge, g.box[3]) if above else min(edge, g.box[1])
        if region and _area(union(region)) >= 400:
            return pad(union(region), layout)
    return None


def _area(box: Box) -> float:
    return (box[2] - box[0]) * (box[3] - box[1])


def find_objects(layout: PageLayout) -> list[Found]:
    """Each caption on the page with its figure's region or its table's region and cells."""
    firsts = [s for s in layout.segments if is_caption_line(s.text) and s.box[0] < layout.width * 0.75]
    blocks = [(s, *_caption_block(layout, s)) for s in firsts]
    caption_boxes = [box for _, box, _, _ in blocks]
    rules = [g for g in layout.graphics if g.is_rule()]
    found = []
    tables = []
    for seg, box, lines, count in blocks:
        m = is_caption_line(seg.text)
        assert m is not None
        kind = kind_of(m.group("kind"))
        number = m.group("number")
        label = f"{'Table' if kind == 'table' else 'Figure'} {number}"
        item = Found(kind, number, label, box, lines, count,
                     continued=bool(re.search(r"(?i)\bcontinued\b", " ".join(lines)[:60])))
        column = _column(layout, box)
        others = [b for b in caption_boxes if b != box]
        if kind == "figure":
            item.box = _figure_region(layout, box, column)
        else:
            tables.append((item, table_column(layout, box, column, others), others))
        found.append(item)
    sides = table_sides(layout, [(item.caption_box, column, others) for item, column, others in tables])
    for (item, _, _), rows in zip(tables, sides, strict=True):
        table = table_cells(rows, rules) if rows else None
        if table is not None:
            item.table = table
            item.box = pad(union([s.box for row in rows for s in row]), layout, 2.0)
    return _without_mentions(found)


def _without_mentions(found: list[Found]) -> list[Found]:
    """A label twice on a page: the one with a figure or table found is the caption, the other a mention in prose."""
    kept = []
    for item in found:
        twins = [o for o in found if o.label == item.label and o is not item]
        if item.box is None and any(o.box is not None for o in twins):
            continue
        if item.box is None and twins and any(o is item for o in found[found.index(twins[0]) + 1:]):
            continue  # neither has one: keep the first
        kept.append(item)
    return kept
