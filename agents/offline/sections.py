"""Which part of a paper a sentence is in (Abstract, Methods, Results, Limitations...), from its headings.

Papers announce their parts with short heading lines ("2 Methods", "MATERIALS AND METHODS",
"3.1. Results", "Limitations"); structured abstracts use run-in labels ("Methods:") that stay part
of the abstract. Retrieval uses the section to prefer a paper's own results over its introduction's
account of other work, and to find the limitations paragraph when a question asks for it.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["SECTION_NAMES", "Sections", "detect_sections", "heading_above", "heading_kind"]

#: Canonical section -> heading words that announce it (matched on a whole short line).
SECTION_NAMES: dict[str, tuple[str, ...]] = {
    "abstract": ("abstract", "summary"),
    "introduction": ("introduction", "background", "background and motivation", "related work", "literature review",
                     "motivation", "overview"),
    "methods": ("methods?", "materials and methods", "methodology", "methods and materials", "study design",
                "experimental(?: setup| design| procedures?)?", "data(?: collection| and methods)?",
                "participants", "implementation", "approach", "design", "setting", "statistical analysis"),
    "results": ("results?", "findings", "evaluation", "experiments?", "results and discussion", "benchmarking"),
    "discussion": ("discussion", "general discussion"),
    "limitations": ("limitations?(?: of (?:the|this) study)?", "strengths and limitations", "study limitations",
                    "ethical considerations"),
    "conclusion": ("conclusions?", "concluding remarks", "summary and conclusions?", "future work"),
    "references": ("references", "bibliography", "literature cited", "works cited"),
    "backmatter": ("acknowledge?ments?", "funding", "competing interests", "author contributions",
                   "authors'? contributions", "appendix(?: [a-z])?", "supplementary (?:material|information)",
                   "supporting information", "additional information and declarations", "declarations",
                   "conflicts? of interest"),
}
_NUMBER = r"(?:(?:\d{1,2}|[IVX]{1,4}|[A-H])(?:\.\d{1,2})*\.?\s+)?"
_HEADINGS = [(kind, re.compile(rf"(?i){_NUMBER}(?:{'|'.join(words)})\s*[:.]?"))
             for kind, words in SECTION_NAMES.items()]
#: Run-in abstract label or "Abstract" at the start of a line followed by its text.
_ABSTRACT_START = re.compile(r"(?i)^(?:abstract|summary)\b[\s:.\-\u2013]*\S")


def heading_kind(line: str) -> str | None:
    """The section a heading line opens, or None when the line is not a known heading."""
    text = " ".join(_ATX.sub("", line).split())
    if not text or len(text) > 60 or len(text.split()) > 7:
        return None
    for kind, pattern in _HEADINGS:
        if pattern.fullmatch(text):
            return kind
    return None


#: A Markdown heading line of a stored text ("## Fleet"): the text readers keep headings so.
_ATX = re.compile(r"^#{1,6}[ \t]+")
_ATX_LINE = re.compile(r"^(#{1,6})[ \t]+(\S[^\n]*?)[ \t]*$", re.M)


def heading_above(text: str, offset: int) -> str:
    """The heading of the innermost section holding ``offset`` of a text with Markdown headings, or ''.

    What a citation of a document without pages names ("§ Fleet"); the orchestrator checks the
    heading stands before the quote (orchestrator/graph/section_check.py).
    """
    found = ""
    for match in _ATX_LINE.finditer(text):
        if match.start() > offset:  # a quote may start with its own heading (a table under it)
            break
        found = match.group(2)
    return found


@dataclass(frozen=True)
class Sections:
    """Section starts of one document as sorted (page, offset) positions with their kinds."""

    starts: tuple[tuple[int, int], ...]
    kinds: tuple[str, ...]

    def at(self, page: int, offset: int) -> str:
        """The section holding ``offset`` of 1-based ``page`` ('front' before the first heading)."""
        i = bisect.bisect_right(self.starts, (page, offset)) - 1
        return self.kinds[i] if i >= 0 else "front"


def detect_sections(pages: Sequence[str]) -> Sections:
    """Headings found line by line; run-in labels of a structured abstract stay in the abstract.

    A heading of the same kind as the current section is ignored (running headers repeat), and
    "references" only counts in the second half of the document (a heading "References" in a
    table of contents is not the reference list).
    """
    starts: list[tuple[int, int]] = []
    kinds: list[str] = []
    for number, page in enumerate(pages, start=1):
        offset = 0
        for line in page.split("\n"):
            kind = heading_kind(line)
            if kind is None and _ABSTRACT_START.match(line.strip()) and not kinds:
                kind = "abstract"
            if kind and kinds and kinds[-1] == "abstract" and kind in ("methods", "results", "conclusion",
                                                                        "abstract") and number <= 2 \
                    and "introduction" not in kinds:
                kind = None  # "Methods:" inside a structured abstract
            if kind == "references" and number * 2 <= len(pages):
                kind = None
            if kind and (not kinds or kinds[-1] != kind):
                starts.append((number, offset))
                kinds.append(kind)
            offset += len(line) + 1
    return Sections(tuple(starts), tuple(kinds))
