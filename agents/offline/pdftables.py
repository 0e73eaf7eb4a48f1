"""A table's rows and cells, next to its caption: which side it stands on, its columns and header.

Rows are the text segments that overlap vertically; the table is the run of them next to the caption
up to running text, a heading in a larger type or another caption. Columns are where the rows' cells
have text (the gaps line up, a cell spanning columns does not close one); the rows between the top
rule and the next one are the header, unless they hold numbers. Part of ``pdfstructure``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from agents.offline.pdflayout import Box, Graphic, PageLayout, Segment, overlap

__all__ = ["FoundTable", "Rows", "table_cells", "table_column", "table_sides"]


_NUMERIC = re.compile(r"[-+±~<>≈]?\s*[\d.,]+\s*[%MBKk]?(?:\s*\([\d.,%]+\))?[*†‡]*")


@dataclass
class FoundTable:
    header: list[str]
    rows: list[list[str]]


def _rows(segments: list[Segment]) -> list[list[Segment]]:
    """Segments grouped into visual rows (overlapping vertically), top to bottom, each left to right."""
    rows: list[list[Segment]] = []
    for seg in sorted(segments, key=lambda s: -s.box[3]):
        for row in rows:
            top, bottom = max(s.box[3] for s in row), min(s.box[1] for s in row)
            if overlap(seg.box[1], seg.box[3], bottom, top) > 0.5 * min(seg.height, top - bottom):
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
    if len(row) == 1 and len(row[0].text.split()) >= 8 and row[0].width > 0.5 * width:
        return True  # one long line of words (the column may be wider than the text: margins, notes)
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
        if any(overlap(bottom, top, c[1], c[3]) > 0 and overlap(column[0], column[1], c[0], c[2]) > 0
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


def table_cells(rows: list[list[Segment]], rules: list[Graphic]) -> FoundTable | None:
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


def table_column(layout: PageLayout, caption: Box, column: tuple[float, float],
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


def table_sides(layout: PageLayout, tables: list[tuple[Box, tuple[float, float], list[Box]]]) -> list[Rows]:
    """Each table caption's rows: the clear cases first; a caption with a table on both sides at the same
    distance then takes the side whose rows no other caption took (two tables stacked in one column)."""
    chosen: list[Rows | None] = []
    runs = []
    for caption, column, others in tables:
        below = _table_rows(layout, caption, column, True, others)
        above = _table_rows(layout, caption, column, False, others)
        runs.append((below, above))
        chosen.append(None if _tied(below, above, caption) else _nearer(below, above, caption))
    taken = {id(seg) for rows in chosen if rows for row in rows for seg in row}
    for n, (below, above) in enumerate(runs):
        if chosen[n] is None:
            free = [side for side in (below, above) if not any(id(seg) in taken for row in side for seg in row)]
            chosen[n] = free[0] if len(free) == 1 else _nearer(below, above, tables[n][0])
    return [rows or [] for rows in chosen]
