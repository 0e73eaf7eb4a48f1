"""Section kinds: which headings select which generated content (pure).

A mission or an outline names sections by heading; the kind decides what the report
builds for it, so "Findings" and "Key Findings" get the same content.
"""

from __future__ import annotations

import re

#: Section kinds and the headings (normalized) that select them.
KIND_HEADINGS: dict[str, tuple[str, ...]] = {
    "answer": ("answer", "direct answer", "short answer"),
    "summary": ("summary", "executive summary", "abstract", "tl dr", "tldr"),
    "introduction": ("introduction", "background", "overview", "market overview", "context", "scope",
                     "technical background"),
    "key_findings": ("key findings", "findings", "main findings", "results", "key results"),
    "conclusion": ("conclusion", "conclusions", "discussion and conclusion", "discussion and conclusions"),
    "evidence": ("evidence", "citation analysis", "supporting evidence"),
    "gaps": ("gaps", "research gaps", "gaps and contradictions", "limitations", "open questions",
             "risks and gaps", "knowledge gaps", "gaps and limitations"),
    "contradictions": ("contradictions", "conflicting evidence", "conflicting claims", "disagreements"),
    "quality": ("quality", "quality assessment", "quality score", "quality report"),
    "methodology": ("methodology", "methods", "method", "how this research was done", "research method",
                    "research methodology"),
    "bibliography": ("bibliography", "references", "sources", "works cited"),
}
_KIND_OF = {heading: kind for kind, headings in KIND_HEADINGS.items() for heading in headings}


def normalize_heading(heading: str) -> str:
    return " ".join(re.sub(r"[^a-z0-9 ]", " ", heading.lower().replace("&", " and ")).split())


def kind_of(heading: str) -> str:
    return _KIND_OF.get(normalize_heading(heading), "custom")
