"""Which part of the outline a heading asks the offline synthesis agent to write (pure).

Read by words rather than by the whole heading, because a mission may name its sections freely
("What are the limitations?", "Gaps and Contradictions"): the first kind whose words the heading
holds decides. The report's own classification of required sections is
:mod:`orchestrator.report.headings`; this one only chooses what the agent writes under a heading.
"""

from __future__ import annotations

__all__ = ["CONTRADICTION_WORDS", "kind_of"]

#: Words of a heading about contradictions ("Gaps and Contradictions" is about gaps, and these too).
CONTRADICTION_WORDS = ("contradiction", "conflict", "disagree")

#: Section kind -> words that select it in a heading (checked in this order).
_KINDS = (
    ("answer", ("answer",)),
    ("bibliography", ("bibliograph", "reference", "works cited", "sources")),
    ("summary", ("summary", "abstract", "tl;dr", "tldr")),
    ("gaps", ("gap", "limitation", "risk", "open question")),
    ("contradictions", CONTRADICTION_WORDS),
    ("findings", ("finding", "result")),
    ("evidence", ("evidence",)),
    ("quality", ("quality",)),
    ("method", ("method", "how this research", "approach")),
    ("conclusion", ("conclusion", "discussion", "outlook")),
    ("introduction", ("introduction", "background", "overview", "context", "scope")),
)


def kind_of(heading: str) -> str:
    low = heading.casefold()
    return next((kind for kind, words in _KINDS if any(w in low for w in words)), "custom")
