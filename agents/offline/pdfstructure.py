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

from agents.offline.pdflayout import Box, Graphic, PageLayout, Segment

__all__ = ["CAPTION_RE", "Found", "FoundTable", "find_objects", "is_caption_line"]

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
class FoundTable:
    header: list[str]
    rows: list[list[str]]


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


_NUMERIC = re.compile(r"[-+±~<>≈]?\s*[\d.,]+\s*[%MBKk]?(?:\s*\([\d.,%]+\))?[*†‡]*")


def _union(boxes: list[Box]) -> Box:
    return (min(b[0] for b in boxes), min(b[1] for b in boxes), max(b[2] for b in boxes), max(b[3] for b in boxes))


def _overlap(a0: float, a1: float, b0: float, b1: float) -> float:
    return max(0.0, min(a1, b1) - max(a0, b0))


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
    box = _union([s.box for s in row])
    lines = 1
    height = max(first.height, 6.0)
    below = sorted((s for s in layout.segments if s.box[3] <= first.box[1] + 1), key=lambda s: -s.box[3])
    taken: list[Segment] = []
    for seg in below:
        if box[1] - seg.box[3] > 0.9 * height:
            break
        if _overlap(seg.box[0], seg.box[2], box[0], box[2]) > 0 and box[0] - 3 <= seg.box[0] <= box[0] + 40 \
                and seg.box[2] <= box[2] + 40:
            if CAPTION_RE.match(seg.text):
                break
            if any(o is not seg and abs(o.middle - seg.middle) < 2 and _overlap(o.box[0], o.box[2], *column) > 0
                   and o.box[0] > seg.box[2] for o in layout.segments):
                break  # a line of several cells: the table under its caption begins
            if not taken or abs(seg.middle - taken[-1].middle) >= 2:
                lines += 1
            taken.append(seg)
            box = _union([box, seg.box])
    ordered = sorted([*row, *taken], key=lambda s: (-round(s.middle), s.box[0]))
    return box, [s.text for s in ordered], lines


def _figure_region(layout: PageLayout, caption: Box, column: tuple[float, float]) -> Box | None:
    """The graphics next to the caption in its column: above it first, else below; chained by small gaps."""
    graphics = [g for g in layout.graphics if not g.is_rule()
                and _overlap(g.box[0], g.box[2], *column) > 0.5 * min(g.box[2] - g.box[0], column[1] - column[0])]
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
        if region and _area(_union(region)) >= 400:
            return _pad(_union(region), layout)
    return None


def _area(box: Box) -> float:
    return (box[2] - box[0]) * (box[3] - box[1])


def _pad(box: Box, layout: PageLayout, by: float = 4.0) -> Box:
    return (max(0.0, box[0] - by), max(0.0, box[1] - by),
            min(layout.width, box[2] + by), min(layout.height, box[3] + by))


def _rows(segments: list[Segment]) -> list[list[Segment]]:
    """Segments grouped into visual rows (overlapping vertically), top to bottom, each left to right."""
    rows: list[list[Segment]] = []
    for seg in sorted(segments, key=lambda s: -s.box[3]):
        for row in rows:
            top, bottom = max(s.box[3] for s in row), min(s.box[1] for s in row)
            if _overlap(seg.box[1], seg.box[3], bottom, top) > 0.5 * min(seg.height, top - bottom):
                row.append(seg)
                break
        else:
            rows.append([seg])
    for row in rows:
        row.sort(key=lambda s: s.box[0])
    rows.sort(key=lambda r: -max(s.box[3] for s in r))
    return rows


def _is_prose(row: list[Segment], column: tuple[float, float]) -> bool:
    """A line of running text (one column's, or two columns' side by side), never a table row."""
    width = column[1] - column[0]
    if len(row) == 1 and row[0].width > 0.7 * width and len(row[0].text.split()) >= 7:
        return True
    long = [s for s in row if len(s.text.split()) >= 6 and s.width >= 0.3 * width]
    return len(long) >= 2 and len(row) <= 3  # two columns of running text side by side


def _table_rows(layout: PageLayout, caption: Box, column: tuple[float, float], below: bool,
                captions: list[Box]) -> list[list[Segment]]:
    inside = [s for s in layout.segments if s.box[0] >= column[0] and s.box[2] <= column[1]
              and (s.box[3] <= caption[1] + 1 if below else s.box[1] >= caption[3] - 1)]
    rows = _rows(inside)
    if not below:
        rows.reverse()
    taken: list[list[Segment]] = []
    edge = caption[1] if below else caption[3]
    first_height = 0.0
    for row in rows:
        top, bottom = max(s.box[3] for s in row), min(s.box[1] for s in row)
        height = max(top - bottom, 6.0)
        line = min(s.height for s in row)
        if first_height and line > 1.33 * first_height:
            break  # a heading in a larger type: the table ended
        first_height = first_height or line
        gap = edge - top if below else bottom - edge
        if gap > max(3.2 * height, 26 if not taken else 0):
            break
        if any(_overlap(bottom, top, c[1], c[3]) > 0 and _overlap(column[0], column[1], c[0], c[2]) > 0
               for c in captions):
            break
        if _is_prose(row, column):
            break
        taken.append(row)
        edge = bottom if below else top
    if not below:
        taken.reverse()
    while taken and len(taken[-1]) == 1 and len(taken) > 1 and len(taken[-1][0].text.split()) >= 7:
        taken.pop()  # a note under the table is not a row
    return taken


def _many(rows: list[list[Segment]]) -> int:
    return sum(len(row) > 1 for row in rows)


Rows = list[list[Segment]]


def _tied(below: Rows, above: Rows, caption: Box) -> bool:
    """Both sides hold a table at about the same distance: the layout alone cannot tell which is the caption's."""
    if _many(below) < 2 or _many(above) < 2:
        return False
    gap_below = caption[1] - max(s.box[3] for s in below[0])
    gap_above = min(s.box[1] for s in above[-1]) - caption[3]
    return abs(gap_below - gap_above) <= 4


def _nearer(below: list[list[Segment]], above: list[list[Segment]], caption: Box) -> list[list[Segment]]:
    """The table's side: the nearer run when both hold a table (the other is another caption's), else the larger."""
    if _many(below) >= 2 and _many(above) >= 2:
        gap_below = caption[1] - max(s.box[3] for s in below[0])
        gap_above = min(s.box[1] for s in above[-1]) - caption[3]
        return below if gap_below <= gap_above + 2 else above
    return below if _many(below) >= _many(above) else above


def _columns(rows: list[list[Segment]]) -> list[tuple[float, float]]:
    """Column extents: the x ranges where many-cell rows have text; a gap is where (almost) none has.

    A cell spanning several columns (a grouped header, a note) covers a gap in one row only, so
    gaps are found on the coverage of all rows, not on their union.
    """
    many = [row for row in rows if len(row) > 1]
    if not many:
        return []
    x_min = int(min(s.box[0] for row in many for s in row))
    x_max = int(max(s.box[2] for row in many for s in row)) + 1
    coverage = [0] * (x_max - x_min + 1)
    for row in many:
        for seg in row:
            for x in range(int(seg.box[0]) - x_min, int(seg.box[2]) - x_min + 1):
                coverage[x] += 1
    floor = max(1, len(many) // 6)
    columns: list[tuple[float, float]] = []
    start: int | None = None
    for x, covered in enumerate([*coverage, 0]):
        if covered >= floor and start is None:
            start = x
        elif covered < floor and start is not None:
            columns.append((start + x_min, x - 1 + x_min))
            start = None
    return columns


def _cells(row: list[Segment], columns: list[tuple[float, float]]) -> list[str]:
    cells = [""] * len(columns)
    for seg in row:
        centre = (seg.box[0] + seg.box[2]) / 2
        at = min(range(len(columns)), key=lambda i: 0 if columns[i][0] <= centre <= columns[i][1]
                 else min(abs(centre - columns[i][0]), abs(centre - columns[i][1])))
        cells[at] = f"{cells[at]} {seg.text}".strip().replace("\ufffe ", "-").replace("\ufffe", "-")
    return cells


def _table(rows: list[list[Segment]], rules: list[Graphic]) -> FoundTable | None:
    columns = _columns(rows)
    if len(columns) < 2:
        return None
    cell_rows = [_cells(row, columns) for row in rows]
    tops = [max(s.box[3] for s in row) for row in rows]
    ys = sorted({round(r.box[1]) for r in rules if tops[-1] - 20 <= r.box[1] <= tops[0] + 20}, reverse=True)
    header_end = 1
    if len(ys) >= 2:  # the rows between the top rule and the next one are the header
        below_first = [i for i, top in enumerate(tops) if top < ys[0] - 1]
        under_second = [i for i, top in enumerate(tops) if top < ys[1] - 1]
        if below_first and under_second and 0 < under_second[0] <= 6:
            header_end = under_second[0]
    header = [" ".join(c for c in column if c) for column in zip(*cell_rows[:header_end], strict=True)]
    if any(_NUMERIC.fullmatch(c) for c in header[1:] if c):  # "Total papers | 81.1M" is data, not a header
        header, header_end = [""] * len(columns), 0
    body = [r for r in cell_rows[header_end:] if any(r)]
    return FoundTable(header, body) if body else None


def _table_column(layout: PageLayout, caption: Box, column: tuple[float, float],
                  others: list[Box]) -> tuple[float, float]:
    """A short caption in one column may head a table as wide as the text: then the rows cross the gutter,
    with no line of running text among them."""
    text = [s.box for s in layout.segments]
    full = (min(b[0] for b in text) - 2, max(b[2] for b in text) + 2)
    if column[1] - column[0] > 0.75 * (full[1] - full[0]):
        return column
    best = column
    for below in (True, False):
        wide = _table_rows(layout, caption, full, below, others)
        width = full[1] - full[0]
        crossing = [row for row in wide if len(row) > 1 and min(s.box[0] for s in row) < column[1] < max(
            s.box[2] for s in row) and max(s.middle for s in row) - min(s.middle for s in row) < 2.5]
        long = any(len(s.text.split()) >= 6 and s.width >= 0.3 * width for row in wide for s in row)
        if len(crossing) >= 2 and len(crossing) >= 0.6 * len(wide) and not long:
            best = full
    return best


def _sides(layout: PageLayout, tables: list[tuple[Found, tuple[float, float], list[Box]]]) -> list[Rows]:
    """Each table caption's rows: the clear cases first; a caption with a table on both sides at the same
    distance then takes the side whose rows no other caption took (two tables stacked in one column)."""
    chosen: list[Rows | None] = []
    runs = []
    for item, column, others in tables:
        below = _table_rows(layout, item.caption_box, column, True, others)
        above = _table_rows(layout, item.caption_box, column, False, others)
        runs.append((below, above))
        chosen.append(None if _tied(below, above, item.caption_box) else _nearer(below, above, item.caption_box))
    taken = {id(seg) for rows in chosen if rows for row in rows for seg in row}
    for n, (below, above) in enumerate(runs):
        if chosen[n] is None:
            free = [side for side in (below, above) if not any(id(seg) in taken for row in side for seg in row)]
            chosen[n] = free[0] if len(free) == 1 else _nearer(below, above, tables[n][0].caption_box)
    return [rows or [] for rows in chosen]


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
            tables.append((item, _table_column(layout, box, column, others), others))
        found.append(item)
    for (item, _, _), rows in zip(tables, _sides(layout, tables), strict=True):
        table = _table(rows, rules) if rows else None
        if table is not None:
            item.table = table
            item.box = _pad(_union([s.box for row in rows for s in row]), layout, 2.0)
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
