"""A document's answer candidates: prose sentences, list items and table rows, each with its context.

Revenue, prices, fleet sizes and trial results often stand in bullet lists ("- Revenue: $12.4
million"), in number-heavy lines and in table rows, which a filter for well-formed prose drops.
Here every line that can hold an answer is a candidate:

- a prose sentence (``sentences.informative``, or a number-heavy sentence that is still a sentence);
- a list item, with the lead-in line it completes ("The fleet consists of:") as its context;
- a table row (a line of cells: ``|``-separated, or several numbers), with the table's caption
  and header row as its context.

A unit's quote is always a verbatim slice of its page, so the evidence check can find it; a
short item or row is quoted together with its lead-in or header when they are adjacent. The
context is what a reader needs to understand the row ("Revenue ($M) ... Q3 2024 | 12.4"): it is
indexed with the row and shown before it in the claim's statement. Units depend only on the
document's own pages, so they are computed once per document content (see ``doccache``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from agents.offline.documents import Document
from agents.offline.sections import detect_sections
from agents.offline.sentences import _BOILERPLATE_RE, _CAPTION_RE, informative, line_key, reference_like
from agents.offline.text import normalize_ws, sentence_spans
from orchestrator.model.terms import search_words

__all__ = ["SKIPPED_SECTIONS", "Unit", "document_units", "quotable", "row_label", "statement_line"]

SKIPPED_SECTIONS = frozenset({"references", "backmatter"})
MIN_QUOTE_CHARS = 20  # orchestrator.graph.evidence.MIN_SNIPPET_CHARS: a shorter snippet never verifies
MIN_QUOTE_WORDS = 4
MAX_CONTEXT_GAP = 600  # a row is quoted with its header only when they are this close

_BULLET = re.compile(r"^\s*(?:[-*+\u2022\u25aa\u25e6\u2013]|\d{1,2}[.)]|[a-z][.)])\s+")
_NUMBER = re.compile(r"(?<![\w.])[-+$\u20ac\u00a3(]?\d[\d,.]*%?\)?")
_CELL_BREAK = re.compile(r"\s*(?:\||\t)\s*")
_WORD = re.compile(r"[^\W\d_]{3,}")
_RUN_IN_KINDS = {
    "introduction": ("background", "objective", "objectives", "aim", "aims", "purpose", "introduction", "context",
                     "background and objectives", "summary of background data", "rationale", "hypothesis"),
    "methods": ("methods", "method", "materials and methods", "design", "setting", "participants", "patients",
                "interventions", "study design", "measurements", "main outcome measures", "case description"),
    "results": ("results", "findings", "result"),
    "conclusion": ("conclusion", "conclusions", "interpretation", "discussion"),
}
_RUN_IN = re.compile(r"(?i)^\s*(" + "|".join(sorted({w for ws in _RUN_IN_KINDS.values() for w in ws}, key=len,
                                                     reverse=True)) + r")\s*:")
#: A compound upper-case label of a structured abstract: "MEASUREMENTS AND MAIN RESULTS:", "PATIENTS AND METHOD:".
_CAPS_LABEL = re.compile(r"^\s*([A-Z]{2,}(?:(?: AND | OF |[ /&,-]+)[A-Z]{2,}){1,6})\s*:")
#: The words that say what a compound label holds, the strongest first: "MEASUREMENTS AND MAIN RESULTS" is results.
_LABEL_WORDS = (("results", re.compile(r"RESULTS?|FINDINGS")),
                ("conclusion", re.compile(r"CONCLUSIONS?|INTERPRETATION")),
                ("methods", re.compile(r"METHODS?|DESIGN|SETTING|PARTICIPANTS?|PATIENTS|INTERVENTIONS?|MEASURES?|"
                                       r"MEASUREMENTS|OUTCOMES?|MATERIALS|SUBJECTS")),
                ("introduction", re.compile(r"BACKGROUND|OBJECTIVES?|AIMS?|PURPOSE|INTRODUCTION|CONTEXT|RATIONALE")))


def run_in_kind(text: str) -> str:
    """The kind of section ("results", "methods", ...) a structured abstract's run-in label opens, or ""."""
    known = _RUN_IN.match(text)
    if known:
        return next(kind for kind, words in _RUN_IN_KINDS.items() if known.group(1).casefold() in words)
    compound = _CAPS_LABEL.match(text)
    if compound:
        words = set(re.split(r"[ /&,-]+", compound.group(1)))
        return next((kind for kind, pattern in _LABEL_WORDS if any(pattern.fullmatch(w) for w in words)), "")
    return ""


_INDEX_LINE = re.compile(r"(?i)^(?:key ?words|index terms|abbreviations|subject areas?|mesh terms)\b")
_LABELLED = re.compile(r"^[^:|]{2,60}:\s+\S")


@dataclass(frozen=True)
class Unit:
    """One candidate: ``pages[page-1][start:end]`` is its verbatim quote."""

    page: int
    start: int
    end: int
    section: str
    quotable: bool
    kind: str = "sentence"  # sentence | item | row
    context: str = ""  # lead-in or table header, shown before the quote (never part of it)


def quotable(text: str) -> bool:
    """A sentence worth quoting (:func:`sentences.informative`); one may open with a number ("64 known ...")."""
    flat = text.lstrip()
    if flat[:1].isdigit():
        number = re.match(r"[\d.,]+", flat)
        flat = "Many" + flat[number.end() if number else 0 :]
    return informative(flat)


def statement_line(text: str) -> bool:
    """A line that states something though it is not polished prose: "Revenue: $12.4 million (Q3)",
    "Q3 2024 | 12.4 | 11.9", "Net income rose 8% to $2.1M in 2024" (a caption, a reference, a
    running header or a bare heading is not)."""
    flat = normalize_ws(_BULLET.sub("", text))
    if not 8 <= len(flat) <= 450 or len(_WORD.findall(flat)) < 1:
        return False
    if _CAPTION_RE.match(flat) or _BOILERPLATE_RE.search(flat) or reference_like(flat) or _INDEX_LINE.match(flat):
        return False
    has_value = bool(_NUMBER.search(flat)) or re.search(r"\w:\s+\S", flat) is not None or "|" in flat
    if not has_value:  # a plain list item: it must say something
        return len(flat.split()) >= 4 and len(_WORD.findall(flat)) >= 3
    letters = sum(ch.isalpha() for ch in flat)
    return letters >= 3 and len(flat.split()) >= 2


def row_label(row: str) -> str:
    """A table row's label, case-folded: its first cell, or the words before its first number ("N-domain 21.03
    ..."); "" when that holds no letter. A question that names it asks about this row, not its neighbours."""
    cells = _CELL_BREAK.split(row.strip().strip("|").strip())
    number = _NUMBER.search(row)  # the numbers a row is recognised by (_cells)
    first = cells[0] if len(cells) > 1 else row[: number.start()] if number else row
    label = " ".join(first.casefold().split())
    return label if any(c.isalpha() for c in label) else ""


def _cells(line: str) -> int:
    """How many cells a table-like line has: ``|``-separated, or label plus numbers."""
    s = line.strip()
    if s.count("|") >= 2 or (s.count("|") == 1 and not s.startswith("|")):
        return len([c for c in s.strip("|").split("|") if c.strip()])
    numbers = _NUMBER.findall(s)
    if len(numbers) < 2 or len(numbers) < 0.3 * len(s.split()):
        return 0  # prose that mentions two numbers ("between 30 and 36 C") is not a row
    return len(numbers) + (1 if _WORD.search(s) else 0)


def _row_like(line: str) -> bool:
    return _cells(line) >= 2 and len(line.strip()) <= 300


@dataclass
class _Line:
    start: int
    end: int
    text: str


def _lines(page: str, a: int, b: int) -> list[_Line]:
    out, pos = [], a
    for raw in page[a:b].split("\n"):
        stripped = raw.strip()
        if stripped:
            offset = pos + raw.index(stripped[0])
            out.append(_Line(offset, offset + len(stripped), stripped))
        pos += len(raw) + 1
    return out


class _Page:
    """Cuts one page into units, remembering the lead-in and the table header in force."""

    def __init__(self, page_no: int, page: str, section_at: object, skip: object) -> None:
        self.page_no, self.page = page_no, page
        self.section_at, self.skip = section_at, skip
        self.label = ""  # the run-in label of a structured abstract in force ("RESULTS:")
        self.lead: _Line | None = None  # "... as follows:" / "Key figures:"
        self.header: list[_Line] = []  # caption and header row of the table being read
        self.units: list[Unit] = []
        lengths = sorted(len(x.strip()) for x in page.split("\n") if len(x.strip()) > 20)
        self.typical = lengths[len(lengths) // 2] if lengths else 80  # a wrapped prose line is about this long

    def add(self, a: int, b: int, kind: str, context: list[_Line]) -> None:
        section = self.section_at(self.page_no, a)  # type: ignore[operator]
        text = self.page[a:b]
        label = run_in_kind(text)
        if label:
            self.label = label
        if self.label and section in ("abstract", "front"):
            section = self.label  # "RESULTS: ..." of a structured abstract is its results
        if section in SKIPPED_SECTIONS or self.skip(self.page_no, a, text) or len(search_words(text, sqlite=True)) < 2:  # type: ignore[operator]
            return
        said = " ".join([*(c.text for c in context), text]) if kind != "sentence" else text
        ok = quotable(text) or (statement_line(said) if kind != "sentence" or "\n" not in text.strip()
                                else _number_sentence(text))
        start = a
        shown = [c for c in context if c.end <= a]
        if ok and shown and (len(normalize_ws(text)) < MIN_QUOTE_CHARS or len(text.split()) < MIN_QUOTE_WORDS):
            first = shown[0]
            if a - first.start <= MAX_CONTEXT_GAP and all(
                    _row_like(x.text) or x in shown for x in _lines(self.page, first.start, a)):
                start = first.start  # header (or lead-in) and row are quoted together
                shown = []
        quote = normalize_ws(self.page[start:b])
        if len(quote) < MIN_QUOTE_CHARS or len(quote.split()) < MIN_QUOTE_WORDS or (
                kind == "sentence" and (_heading(quote) or quote.endswith(":"))):  # a lead-in is context
            ok = False
        label = "\n".join(normalize_ws(c.text) for c in shown)
        self.units.append(Unit(self.page_no, start, b, section, ok, kind, label))

    def span(self, a: int, b: int) -> None:
        lines = _lines(self.page, a, b)
        if not lines:
            return
        rows = [line for line in lines if _row_like(line.text)]
        if len(rows) >= 2 and len(rows) >= 0.6 * len(lines):  # a table (or part of one): a unit per line
            seen = False
            for line in lines:
                if not _row_like(line.text):
                    self.header, seen = [line], False  # a caption or heading inside the table block
                elif not seen and _fewer_numbers(line.text):
                    self.header, seen = [*self.header[-1:], line], True  # the header row, after its caption
                else:
                    seen = True
                    self.add(line.start, line.end, "row", self._context())
            return
        text = self.page[lines[0].start : lines[-1].end]
        if self._items(lines):
            return
        if _BULLET.match(lines[0].text):
            self.add(lines[0].start, lines[-1].end, "item", [self.lead] if self.lead else [])
            return
        if len(lines) == 1 and _row_like(lines[0].text) and (self.header or self.lead):
            self.add(lines[0].start, lines[0].end, "row", self._context())
            return
        self.header = [lines[-1]] if len(lines) <= 2 and len(text) <= 160 and not text.rstrip().endswith(".") \
            else []
        if len(lines) == 1 and _row_like(lines[0].text) and _fewer_numbers(lines[0].text):
            return  # a table's header row: the context of the rows below, never an answer itself
        self.add(lines[0].start, lines[-1].end, "sentence", [])
        self.lead = lines[-1] if text.rstrip().endswith(":") else None

    def _items(self, lines: list[_Line]) -> bool:
        """Lines after a lead-in ("Key figures:") or "Label: value" lines: one item each."""
        lead = lines[0].text.endswith(":")
        rest = lines[1:] if lead else lines
        labelled = sum(_LABELLED.match(x.text) is not None for x in lines)
        if len(lines) < 2 or not (lead or labelled * 2 >= len(lines) >= 2) or not all(
                len(x.text) <= 200 and (x.text[:1].isupper() or x.text[:1] in "$\u20ac\u00a3(-*+\u2022" or
                                        x.text[:1].isdigit()) for x in rest):
            return False  # prose wrapped over lines
        if any(x.text.endswith((",", "-", ";")) or len(x.text) >= 0.85 * self.typical for x in rest[:-1]) \
                and labelled * 2 < len(lines):
            return False  # lines cut at the page's width: a paragraph, not a list
        if lead:
            self.lead = lines[0]
        for line in rest:
            self.add(line.start, line.end, "item", [self.lead] if self.lead else [])
        return True

    def _context(self) -> list[_Line]:
        return ([self.lead] if self.lead else []) + self.header


def _heading(text: str) -> bool:
    """A title or heading line ("Q3 2025 Business Update"): short, no verb-like ending, no value marker."""
    return len(text.split()) <= 8 and not text.endswith((".", "!", "?")) and ":" not in text and "|" not in text


def _fewer_numbers(line: str) -> bool:
    """A header row: cells of words (or years) rather than measured values."""
    numbers = [n for n in _NUMBER.findall(line) if not re.fullmatch(r"\(?(?:19|20)\d\d\)?", n)]
    return not numbers


def _number_sentence(text: str) -> bool:
    """A sentence that is mostly figures ("Revenue was $12.4M in Q3 2024, up 8% from $11.5M.")."""
    flat = normalize_ws(text)
    return (flat[:1].isupper() or flat[:1] in "$(") and flat.endswith((".", ")")) and statement_line(flat) \
        and len(flat.split()) >= 5


def document_units(doc: Document, boilerplate: set[str], references: tuple[tuple[int, int], tuple[int, int]] | None,
                   ) -> list[Unit]:
    """Every candidate of a document in reading order (reference lists, back matter, headers excluded)."""
    sections = detect_sections(doc.pages)

    def skip(page_no: int, offset: int, text: str) -> bool:
        if references and references[0] <= (page_no, offset) < references[1]:
            return True
        return any(line_key(line) in boilerplate for line in text.split("\n"))

    units: list[Unit] = []
    for page_no, page in enumerate(doc.pages, start=1):
        reader = _Page(page_no, page, sections.at, skip)
        for a, b in sentence_spans(page):
            reader.span(a, b)
        units += reader.units
    return units
