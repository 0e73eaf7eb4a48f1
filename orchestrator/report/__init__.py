"""The mission report, built from the validated knowledge graph only (pure).

:func:`build_document` turns the graph, the synthesis agent's outline, the quality
report and the session into a small document model (sections of paragraphs, lists and
tables whose text is kept apart from citations), so the Markdown and HTML renderers show
exactly the same content and only escape differently. Citations go through
:class:`~orchestrator.report.citations.Citer`, which cites verified evidence only.

Renderers: :func:`orchestrator.report.markdown.render_markdown` and
:func:`orchestrator.report.html.render_html` (also importable from this package).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from orchestrator.report.citations import Citation, Citer, claim_resolver, find_markers


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


Block = Para | Bullets | Table | References


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


#: Section kinds and the headings (normalized) that select them.
KIND_HEADINGS: dict[str, tuple[str, ...]] = {
    "summary": ("summary", "executive summary", "abstract", "tl dr", "tldr"),
    "introduction": ("introduction", "background", "overview", "market overview", "context", "scope",
                     "technical background"),
    "key_findings": ("key findings", "findings", "main findings", "results", "key results"),
    "conclusion": ("conclusion", "conclusions", "discussion and conclusion", "discussion and conclusions"),
    "evidence": ("evidence", "citation analysis", "supporting evidence"),
    "gaps": ("gaps", "research gaps", "gaps and contradictions", "limitations", "open questions",
             "risks and gaps", "contradictions", "knowledge gaps", "gaps and limitations"),
    "quality": ("quality", "quality assessment", "quality score", "quality report"),
    "methodology": ("methodology", "methods", "method", "how this research was done", "research method",
                    "research methodology"),
    "bibliography": ("bibliography", "references", "sources", "works cited"),
}
_KIND_OF = {heading: kind for kind, headings in KIND_HEADINGS.items() for heading in headings}
#: Sections every report has; appended in this order when the mission does not place them.
APPENDIX: tuple[tuple[str, str], ...] = (
    ("evidence", "Evidence"), ("gaps", "Gaps and Contradictions"), ("quality", "Quality Assessment"),
    ("methodology", "How this research was done"), ("bibliography", "Bibliography"),
)
DEFAULT_SECTIONS = ("Executive Summary", "Key Findings", *(heading for _, heading in APPENDIX))


def normalize_heading(heading: str) -> str:
    return " ".join(re.sub(r"[^a-z0-9 ]", " ", heading.lower().replace("&", " and ")).split())


def kind_of(heading: str) -> str:
    return _KIND_OF.get(normalize_heading(heading), "custom")


def inline_text(text: str, citer: Citer, resolve: Any) -> Line:
    """Paragraph text with ``[@ref]`` markers -> inlines, markers cited (or shown as missing)."""
    parts: list[Inline] = []
    position = 0
    text = " ".join(text.split())
    for start, end, refs in find_markers(text):
        if text[position:start]:
            parts.append(Text(text[position:start]))
        ids = [resolve(ref) for ref in refs]
        citation = citer.cite(*(i for i in ids if i))
        if citation:
            parts.append(Cite(citation))
        cited = set(citation.claim_ids) if citation else set()
        parts.extend(Missing(ref) for ref, cid in zip(refs, ids, strict=True) if cid not in cited)
        position = end
    if text[position:]:
        parts.append(Text(text[position:]))
    return tuple(parts)


@dataclass
class Context:
    """Everything a section builder may read."""

    graph: Mapping[str, Any]
    session: Mapping[str, Any]
    quality: Mapping[str, Any]
    mission: Mapping[str, Any] | None
    ledger: list[dict[str, Any]]
    citer: Citer
    resolve: Any

    def line(self, text: str) -> Line:
        return inline_text(text, self.citer, self.resolve)


def _unwrap(outline: Mapping[str, Any] | None) -> Mapping[str, Any]:
    if not outline:
        return {}
    inner = outline.get("report_outline")
    return inner if isinstance(inner, dict) else outline


def _plan(required: list[str], outline_sections: list[Mapping[str, Any]]) -> list[tuple[str, str, list[str]]]:
    """(heading, kind, outline paragraphs) in document order.

    Required sections keep the mission's order; an outline section matching a required heading
    fills it, other outline sections follow the last matched one. Appendix sections the mission
    does not place come last.
    """
    slots: list[tuple[str, str, list[str]]] = [(h, kind_of(h), []) for h in required]
    index = {normalize_heading(h): i for i, h in enumerate(required)}
    extra: dict[int, list[tuple[str, str, list[str]]]] = {}
    anchor = 0
    for section in outline_sections:
        heading = " ".join(str(section.get("heading", "")).split())
        texts = [str(p["text"]) for p in section.get("paragraphs") or () if isinstance(p, dict) and p.get("text")]
        key = normalize_heading(heading)
        if key in index:
            anchor = index[key]
            slots[anchor][2].extend(texts)
        else:
            extra.setdefault(anchor, []).append((heading, kind_of(heading), texts))
    ordered: list[tuple[str, str, list[str]]] = []
    for position, slot in enumerate(slots):
        ordered.append(slot)
        ordered.extend(extra.get(position, []))
    if not slots:
        ordered.extend(extra.get(0, []))
    present = {kind for _, kind, _ in ordered}
    ordered.extend((heading, kind, []) for kind, heading in APPENDIX if kind not in present)
    return ordered


def build_document(
    graph: Mapping[str, Any],
    *,
    session: Mapping[str, Any],
    quality: Mapping[str, Any] | None,
    mission: Mapping[str, Any] | None,
    outline: Mapping[str, Any] | None,
    ledger: list[dict[str, Any]] | None,
    outline_agent: str = "synthesis-agent",
) -> Document:
    from orchestrator.report import content

    if quality is None:
        from orchestrator.quality import score_graph

        quality = score_graph(graph, now=content.graph_time(graph)).to_json()
    body = _unwrap(outline)
    citer = Citer(graph)
    ctx = Context(graph, session, quality, mission, list(ledger or []), citer, claim_resolver(graph, outline_agent))
    criteria = (mission or {}).get("success_criteria") or {}
    required = list(criteria.get("required_sections") or DEFAULT_SECTIONS)
    plan = _plan(required, [s for s in body.get("sections") or () if isinstance(s, dict)])
    summary = body.get("summary") if isinstance(body.get("summary"), str) else None
    has_summary_slot = any(kind == "summary" for _, kind, _ in plan)
    lead: list[Block] = [Para(ctx.line(summary))] if summary and not has_summary_slot else []

    built: list[Section] = []
    deferred: list[tuple[Section, list[str]]] = []
    for heading, kind, texts in plan:
        section = Section(heading, kind)
        built.append(section)
        if kind in ("evidence", "bibliography"):
            deferred.append((section, texts))  # they list what the rest of the report cites
            continue
        if kind == "summary" and not texts and summary:
            texts = [summary]
        section.blocks.extend(Para(ctx.line(t)) for t in texts)
        if not texts or kind in content.ALWAYS_BUILT:
            section.blocks.extend(content.build(kind, heading, ctx))
    for section, texts in sorted(deferred, key=lambda item: item[0].kind != "evidence"):
        section.blocks.extend(Para(ctx.line(t)) for t in texts)
        section.blocks.extend(content.build(section.kind, section.heading, ctx))
    title = " ".join(str(body.get("title") or session.get("query") or "Research report").split())
    return Document(title, content.byline(ctx), lead, built, quality.get("score"), quality.get("band"))


def __getattr__(name: str) -> Any:
    """Re-export the renderers lazily (they import this module)."""
    if name == "render_markdown":
        from orchestrator.report.markdown import render_markdown

        return render_markdown
    if name == "render_html":
        from orchestrator.report.html import render_html

        return render_html
    raise AttributeError(name)
