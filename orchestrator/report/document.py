"""Which sections a report has, in which order, and the whole document (pure).

:func:`build_document` turns the graph, the synthesis agent's outline, the quality report
and the session into a :class:`~orchestrator.report.blocks.Document`. The mission's required
sections keep their order; the outline's paragraphs fill them, and generated content from
:mod:`orchestrator.report.sections` fills what the outline leaves empty.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from orchestrator.graph.citations import Citer, claim_resolver
from orchestrator.graph.quality import score_graph
from orchestrator.graph.quality_gate import gate
from orchestrator.model.clock import commit_time, iso_timestamp
from orchestrator.report.blocks import Block, Document, Line, Para, Section, text_line
from orchestrator.report.context import Context
from orchestrator.report.figures import Objects, figures_section
from orchestrator.report.headings import kind_of, normalize_heading
from orchestrator.report.sections import build_section

#: Sections every report has; appended in this order when the mission does not place them.
APPENDIX: tuple[tuple[str, str], ...] = (
    ("evidence", "Evidence"), ("gaps", "Gaps and Contradictions"), ("contradictions", "Contradictions"),
    ("quality", "Quality Assessment"),
    ("methodology", "How this research was done"), ("bibliography", "Bibliography"),
)
DEFAULT_SECTIONS = ("Executive Summary", "Key Findings", *(heading for _, heading in APPENDIX))

#: Kinds whose generated content follows the outline's paragraphs instead of replacing them.
ALWAYS_BUILT = frozenset({"evidence", "gaps", "contradictions", "quality", "methodology", "bibliography"})


def _unwrap(outline: Mapping[str, Any] | None) -> Mapping[str, Any]:
    if not outline:
        return {}
    inner = outline.get("report_outline")
    return inner if isinstance(inner, dict) else outline


def _plan(required: list[str], outline_sections: list[Mapping[str, Any]]) -> list[tuple[str, str, list[str]]]:
    """(heading, kind, outline paragraphs) in document order.

    Required sections keep the mission's order. An outline section fills the required section
    of the same heading, or else of the same kind ("Findings" fills "Key Findings"); other
    outline sections follow the last one placed (the first required section at the start).
    Appendix sections the mission does not place come last.
    """
    slots: list[tuple[str, str, list[str]]] = [(h, kind_of(h), []) for h in required]
    by_heading = {normalize_heading(h): i for i, h in enumerate(required)}
    by_kind: dict[str, int] = {}
    for i, (_, kind, _) in enumerate(slots):
        if kind != "custom":
            by_kind.setdefault(kind, i)
    extra: dict[int, list[tuple[str, str, list[str]]]] = {}
    front: list[tuple[str, str, list[str]]] = []  # an outline's direct answer opens the report
    anchor = 0
    for section in outline_sections:
        heading = " ".join(str(section.get("heading", "")).split())
        paragraphs = [p for p in section.get("paragraphs") or () if isinstance(p, dict)]
        texts = [str(p["text"]) for p in paragraphs if p.get("text")]
        slot = by_heading.get(normalize_heading(heading), by_kind.get(kind_of(heading)))
        if slot is None and kind_of(heading) == "answer":
            front.append((heading, "answer", texts))
        elif slot is None:
            extra.setdefault(anchor, []).append((heading, kind_of(heading), texts))
        else:
            anchor = slot
            slots[slot][2].extend(texts)
    ordered: list[tuple[str, str, list[str]]] = list(front)
    for position, slot_item in enumerate(slots):
        ordered.append(slot_item)
        ordered.extend(extra.get(position, []))
    if not slots:
        ordered.extend(extra.get(0, []))
    present = {kind for _, kind, _ in ordered}
    if "contradictions" not in present and "gaps" in present:  # next to the gaps the mission placed
        at = max(i for i, (_, kind, _) in enumerate(ordered) if kind == "gaps") + 1
        ordered.insert(at, ("Contradictions", "contradictions", []))
        present.add("contradictions")
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
    objects: Objects | None = None,
) -> Document:
    """The report's content. ``quality`` is ``quality.json`` (computed here when None);
    ``outline`` is the synthesis agent's ``report_outline`` (bare claim refs resolve in
    ``outline_agent``'s namespace first); ``mission`` is the mission in its schema form;
    ``objects(sha256, suffix)`` reads the stored images and table cells the cited figures and tables show.
    """
    criteria = (mission or {}).get("success_criteria") or {}
    if quality is None:
        report = score_graph(graph, now=commit_time(graph, ledger))
        question = str(session.get("query") or "")
        quality = report.to_json(gate(report, graph, criteria, question=question) if criteria else None)
    body = _unwrap(outline)
    citer = Citer(graph)
    resolve = claim_resolver(graph, outline_agent)
    ctx = Context(graph, session, quality, mission, list(ledger or []), citer, resolve)
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
        if not texts or kind in ALWAYS_BUILT:
            section.blocks.extend(build_section(kind, heading, ctx))
    for section, texts in sorted(deferred, key=lambda item: item[0].kind != "evidence"):
        section.blocks.extend(Para(ctx.line(t)) for t in texts)
        section.blocks.extend(build_section(section.kind, section.heading, ctx))
    parts = figures_section(ctx, objects)  # after every other section: it shows what they cite
    if parts is not None:
        at = next((i for i, s in enumerate(built) if s.kind in ("evidence", "bibliography")), len(built))
        built.insert(at, parts)
    title = " ".join(str(body.get("title") or session.get("query") or "Research report").split())
    passed = quality.get("passed")
    titles = {number: " ".join(str(source.get("title") or source["id"]).split())
              for number, source in citer.bibliography()}
    checks = [c for c in quality.get("checks") or () if isinstance(c, Mapping)]
    criteria = (sum(1 for c in checks if c.get("passed")), len(checks)) if checks else None
    return Document(title, byline(ctx), lead, built, quality.get("score"), quality.get("band"),
                    passed if isinstance(passed, bool) else None, criteria=criteria, titles=titles)


def byline(ctx: Context) -> Line:
    """Mission, session and the graph commit the report was built from."""
    parts = []
    if ctx.mission and ctx.mission.get("name"):
        parts.append(f"Mission: {ctx.mission['name']}")
    if ctx.session.get("id"):
        parts.append(f"Session: {ctx.session['id']}")
    graph = ctx.graph
    made = commit_time(graph, ctx.ledger)
    parts.append(f"Knowledge graph commit {graph.get('commit_seq', '-')}"
                 + (f" of {iso_timestamp(made)}" if made else ""))
    return text_line(" · ".join(parts))
