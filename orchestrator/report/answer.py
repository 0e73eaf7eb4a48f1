"""The report's direct answer as plain text, for the terminal, batch summaries and session.json (pure).

Taken from the report's :class:`~orchestrator.report.model.Document` (never parsed back out of a
rendered file), so it says exactly what the report says. Each numbered citation ("[1, p. 6]")
is spelled with the source's short title ("[S2ORC, p. 6]") so it can be read without opening the
report.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from orchestrator.report.model import (
    Bullets,
    Cite,
    Document,
    Line,
    Missing,
    Para,
    Quote,
    Text,
    quote_without_source_markers,
    without_source_markers,
)

__all__ = ["DirectAnswer", "direct_answer", "short_title"]

#: The first sentence with its citations: up to . ! or ? (and the brackets after it) where a capital,
#: a digit or a quote starts the next one, so "e.g. the" and "81.1M" do not end it.
_FIRST_SENTENCE = re.compile(r"^.*?[.!?](?:\s\[[^\]]*\])*(?=\s+[A-Z0-9\u201c\"(]|\s*$)")


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


def _spell(line: Line, titles: dict[int, str], cited: list[str]) -> str:
    out = []
    for part in line:
        if isinstance(part, Cite):
            refs = []
            for ref in part.citation.refs:
                label = short_title(titles.get(ref.number, str(ref.number)))
                pages = ref.label().partition(", ")[2]
                refs.append(label + (f", {pages}" if pages else ""))
            cited.extend(refs)
            out.append(" [" + "; ".join(refs) + "]")
        elif isinstance(part, Missing):
            out.append(" [citation needed]")
        elif isinstance(part, Quote):
            out.append(f"\u201c{quote_without_source_markers(part.text)}\u201d")
        elif isinstance(part, Text):
            out.append(without_source_markers(part.text))
        else:
            out.append(getattr(part, "text", ""))
    return " ".join("".join(out).split())


def direct_answer(document: Document) -> DirectAnswer | None:
    """The Answer section (or a summary standing in for it), None when the report has neither."""
    section = next((s for s in document.sections if s.kind == "answer"), None)
    if section is None:
        return None
    cited: list[str] = []
    lines = [b.line for b in section.blocks if isinstance(b, Para)]
    lines += [line for b in section.blocks if isinstance(b, Bullets) for item in b.items for line in item]
    text = " ".join(t for t in (_spell(line, document.titles, cited) for line in lines) if t)
    if not text:
        return None
    found = _FIRST_SENTENCE.match(text)
    first = found.group(0) if found else text
    return DirectAnswer(text, first, cited[0] if cited else None)
