"""The report's direct answer as plain text, for the terminal, batch summaries and session.json (pure).

Taken from the report's :class:`~orchestrator.report.blocks.Document` (never parsed back out of a
rendered file), so it says exactly what the report says. Each numbered citation ("[1, p. 6]")
is spelled with the source's short title ("[S2ORC, p. 6]") so it can be read without opening the
report.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from orchestrator.report.blocks import (
    Bullets,
    Cite,
    Document,
    Emph,
    Line,
    Missing,
    Para,
    Quote,
    Text,
    quote_without_source_markers,
    without_source_markers,
)

__all__ = ["DirectAnswer", "direct_answer", "short_title"]

#: Where a sentence may end: . ! or ? with the closing quotes or brackets after it.
_END = re.compile(r"[.!?][\"')\]\u201d\u2019]*")
#: Words whose full stop ends no sentence ("e.g. BERT", "Fig. 2", "et al. Found", "v. 2").
_ABBREVIATIONS = frozenset({
    "e.g", "i.e", "al", "etc", "fig", "figs", "eq", "eqs", "tab", "no", "nos", "vs", "v", "cf", "viz", "resp",
    "dr", "mr", "mrs", "ms", "prof", "st", "approx", "ca", "p", "pp", "vol", "sec", "ch", "ref", "refs", "incl"})
#: Initials and dotted acronyms ("J.", "U.S.", "e.g.") also end no sentence.
_DOTTED = re.compile(r"^(?:[a-z]\.)*[a-z]$")


def short_title(title: str, words: int = 6) -> str:
    """'S2ORC: The Semantic Scholar ...' -> 'S2ORC'; a long title without a colon -> its first words."""
    head = title.split(":", 1)[0].strip()
    if ":" in title and 2 <= len(head) <= 40:
        return head
    parts = title.split()
    return " ".join(parts[:words]) + ("\u2026" if len(parts) > words else "")


@dataclass(frozen=True)
class DirectAnswer:
    """The answer's text with readable citations, its first sentence and the first source it cites."""

    text: str
    first_sentence: str
    top_citation: str | None

    def to_json(self) -> dict[str, Any]:
        return {"text": self.text, "first_sentence": self.first_sentence, "top_citation": self.top_citation}


def _spell(line: Line, titles: dict[int, str], cited: list[str]) -> list[tuple[bool, str]]:
    """The line as pieces (is it a citation, its text), each numbered citation spelled with short titles;
    each citation's first source goes into ``cited``."""
    out: list[tuple[bool, str]] = []
    for part in line:
        if isinstance(part, Cite):
            refs = []
            for ref in part.citation.refs:
                label = short_title(titles.get(ref.number, str(ref.number)))
                pages = ref.label().partition(", ")[2]
                refs.append(label + (f", {pages}" if pages else ""))
            cited.extend(refs[:1])
            out.append((True, "[" + "; ".join(refs) + "]"))
        elif isinstance(part, Missing):
            out.append((True, "[citation needed]"))
        elif isinstance(part, Quote):
            out.append((False, f"\u201c{quote_without_source_markers(part.text)}\u201d"))
        elif isinstance(part, Text):
            out.append((False, without_source_markers(part.text)))
        else:
            out.append((False, getattr(part, "text", "")))
    return out


def _joined(pieces: list[tuple[bool, str]]) -> tuple[str, list[tuple[int, int]]]:
    """The pieces as one line (runs of white space made one space, a space before each citation), and where
    each citation is in it."""
    text, spans = "", []
    for is_cite, piece in pieces:
        if is_cite:
            text = text.rstrip() + " " if text.strip() else ""
            spans.append((len(text), len(text) + len(piece)))
            text += piece
        else:
            piece = re.sub(r"\s+", " ", piece)
            text += piece[1:] if piece.startswith(" ") and (not text or text.endswith(" ")) else piece
    stripped = text.rstrip()
    return stripped, [(a, min(b, len(stripped))) for a, b in spans]


def _ends_sentence(text: str, at: int) -> bool:
    """Does the stop at ``at`` end a sentence (rather than an abbreviation, an initial or "p." in a citation)?"""
    if text[at] != ".":
        return True
    words = text[:at].split()
    last = re.sub(r"^\W+", "", words[-1]).lower() if words else ""
    return not (last in _ABBREVIATIONS or _DOTTED.match(last))


def _first_sentence(text: str, spans: list[tuple[int, int]]) -> str:
    """Up to the first stop that ends a sentence before a capital, a digit, a quote or the end, with the
    citations right after it; a stop inside a citation ("p. 6") is none."""
    for found in _END.finditer(text):
        if any(a <= found.start() < b for a, b in spans) or not _ends_sentence(text, found.start()):
            continue
        end = after = found.end()
        while True:  # the citations after the stop belong to its sentence
            gap = len(text[after:]) - len(text[after:].lstrip())
            span = next((s for s in spans if s[0] == after + gap), None)
            if span is None:
                break
            end = after = span[1]
        rest = text[after:]
        following = rest.lstrip()[:1]
        if not following or (rest[:1].isspace() and (following.isupper() or following.isdigit()
                                                     or following in "\"'(\u201c\u2018")):
            return text[:end]
    return text


def direct_answer(document: Document) -> DirectAnswer | None:
    """The Answer section (or a summary standing in for it), None when the report has neither."""
    section = next((s for s in document.sections if s.kind == "answer"), None)
    if section is None:
        return None
    lines = [b.line for b in section.blocks if isinstance(b, Para)]
    lines += [line for b in section.blocks if isinstance(b, Bullets) for item in b.items for line in item]
    lines = [line for line in lines if not all(isinstance(part, Emph) for part in line)]  # a placeholder's note
    pieces: list[tuple[bool, str]] = []
    cited: list[str] = []
    for line in lines:
        pieces += [*_spell(line, document.titles, cited), (False, " ")]
    text, spans = _joined(pieces)
    text_start = len(text) - len(text.lstrip())
    text, spans = text.lstrip(), [(a - text_start, b - text_start) for a, b in spans]
    if not text:
        return None
    return DirectAnswer(text, _first_sentence(text, spans), cited[0] if cited else None)
