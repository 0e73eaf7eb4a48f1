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
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from orchestrator.paths import RESERVED_KEYS
from orchestrator.quality import effective_confidence, gate, plan_sub_questions, same_ref, score_graph
from orchestrator.report.bibliography import reference_parts
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
    gate: bool | None = None


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


def inline_text(text: str, citer: Citer, resolve: Callable[[str], str | None]) -> Line:
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
    resolve: Callable[[str], str | None]

    def line(self, text: str) -> Line:
        return inline_text(text, self.citer, self.resolve)


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
    anchor = 0
    for section in outline_sections:
        heading = " ".join(str(section.get("heading", "")).split())
        paragraphs = [p for p in section.get("paragraphs") or () if isinstance(p, dict)]
        texts = [str(p["text"]) for p in paragraphs if p.get("text")]
        slot = by_heading.get(normalize_heading(heading), by_kind.get(kind_of(heading)))
        if slot is None:
            extra.setdefault(anchor, []).append((heading, kind_of(heading), texts))
        else:
            anchor = slot
            slots[slot][2].extend(texts)
    ordered: list[tuple[str, str, list[str]]] = []
    for position, slot_item in enumerate(slots):
        ordered.append(slot_item)
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
    """The report's content. ``quality`` is ``quality.json`` (computed here when None);
    ``outline`` is the synthesis agent's ``report_outline`` (bare claim refs resolve in
    ``outline_agent``'s namespace first); ``mission`` is the mission in its schema form.
    """
    criteria = (mission or {}).get("success_criteria") or {}
    if quality is None:
        report = score_graph(graph, now=graph_time(graph))
        quality = report.to_json(gate(report, graph, criteria) if criteria else None)
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
    title = " ".join(str(body.get("title") or session.get("query") or "Research report").split())
    passed = quality.get("passed")
    return Document(title, byline(ctx), lead, built, quality.get("score"), quality.get("band"),
                    passed if isinstance(passed, bool) else None)


# -- section content -------------------------------------------------------------------

#: Kinds whose generated content follows the outline's paragraphs instead of replacing them.
ALWAYS_BUILT = frozenset({"evidence", "gaps", "quality", "methodology", "bibliography"})
_PRIORITY = {"high": 0, "medium": 1, "low": 2}
SNIPPET_CHARS = 600


def graph_time(graph: Mapping[str, Any]) -> datetime | None:
    """The graph's own timestamp, so a report rendered twice from one graph is identical."""
    try:
        return datetime.fromisoformat(str(graph.get("generated_at")).replace("Z", "+00:00"))
    except ValueError:
        return None


def _agents(graph: Mapping[str, Any]) -> list[str]:
    return sorted(k for k, v in graph.items() if k not in RESERVED_KEYS and isinstance(v, dict))


def _local(item_id: str) -> str:
    return item_id.rpartition(":")[2]


def _line(*parts: str | Inline) -> Line:
    return tuple(Text(p) if isinstance(p, str) else p for p in parts)


def _para(*parts: str | Inline) -> Para:
    return Para(_line(*parts))


def _row(*cells: str | Inline) -> tuple[Line, ...]:
    return tuple(_line(c) for c in cells)


def _bullets(lines: list[Line]) -> Bullets:
    return Bullets(tuple((line,) for line in lines))


def _cite_line(ctx: Context, text: str, *claim_ids: str) -> Line:
    citation = ctx.citer.cite(*claim_ids)
    return (Text(text + " "), Cite(citation)) if citation else (Text(text),)


def _findings(ctx: Context) -> tuple[list[tuple[str, list[str]]], int]:
    """Key findings with a citable claim (synthesis agent first), and how many had none.

    Without any key findings: the best-supported verified claims.
    """
    found: list[tuple[int, str, list[str]]] = []
    omitted = 0
    for agent in sorted(_agents(ctx.graph), key=lambda a: (a != "synthesis-agent", a)):
        resolve = claim_resolver(ctx.graph, agent)
        for finding in ctx.graph[agent].get("key_findings") or ():
            if not isinstance(finding, dict) or not finding.get("statement"):
                continue
            ids = [i for i in map(resolve, map(str, finding.get("claim_ids") or ())) if i]
            ids = [i for i in ids if ctx.citer.supported(i)]
            rank = _PRIORITY.get(str(finding.get("importance")), 1)
            if ids:
                found.append((rank, str(finding["statement"]), ids))
            omitted += not ids
    if found or omitted:
        return [(statement, ids) for _, statement, ids in sorted(found, key=lambda f: f[0])], omitted
    claims = [c for c in ctx.graph.get("claims") or () if ctx.citer.supported(c["id"])]
    claims.sort(key=lambda c: (-(effective_confidence(c) or 0), _PRIORITY.get(c.get("priority"), 1), c["id"]))
    return [(str(c["statement"]), [c["id"]]) for c in claims[:10]], 0


def _summary(heading: str, ctx: Context) -> list[Block]:
    q = ctx.quality
    supported = [c["id"] for c in ctx.graph.get("claims") or () if ctx.citer.supported(c["id"])]
    sources = {s["id"] for cid in supported for _, s in ctx.citer.supported(cid)}
    query = ctx.session.get("query")
    text = f"This report answers the question “{query}”. " if query else ""
    text += (f"It rests on {len(supported)} claims whose quoted evidence was verified in {len(sources)} "
             f"sources. The quality score is {q.get('score')}/100 ({q.get('band')})")
    if "passed" in q:
        text += f" and the mission's quality gate {'passed' if q['passed'] else 'failed'}"
    blocks: list[Block] = [_para(text + ".")]
    findings, _ = _findings(ctx)
    if findings:
        top = [_cite_line(ctx, statement, *ids) for statement, ids in findings[:3]]
        blocks += [_para(Strong("Main findings:")), _bullets(top)]
    return blocks


def _introduction(heading: str, ctx: Context) -> list[Block]:
    blocks: list[Block] = []
    if ctx.session.get("query"):
        blocks.append(_para("Research question: ", Emph(str(ctx.session["query"]))))
    if ctx.mission and ctx.mission.get("objective"):
        blocks.append(_para("Objective: " + str(ctx.mission["objective"])))
    questions = plan_sub_questions(ctx.graph)
    if questions:
        refs = [c["sub_question_id"] for c in ctx.graph.get("claims") or () if c.get("sub_question_id")]
        lines = []
        for q in questions:
            n = sum(1 for r in refs if same_ref(q["id"], r))
            status = f"answered by {n} claim{'s' if n != 1 else ''}" if n else "not answered yet"
            text = f" ({q.get('priority', 'medium')}) {q.get('question', '')} "
            lines.append(_line(Strong(_local(q["id"])), text, Emph(f"({status})")))
        blocks += [_para(f"The question was broken into {len(questions)} sub-questions:"), _bullets(lines)]
    return blocks or [_para("No research question or plan was recorded.")]


def _key_findings(heading: str, ctx: Context) -> list[Block]:
    findings, omitted = _findings(ctx)
    if findings:
        blocks: list[Block] = [_bullets([_cite_line(ctx, s, *ids) for s, ids in findings])]
    else:
        blocks = [_para("No finding is backed by verified evidence yet.")]
    if omitted:
        blocks.append(_para(Emph(f"{omitted} further findings are not shown because none of their claims "
                                 "has verified evidence.")))
    return blocks


def _conclusion(heading: str, ctx: Context) -> list[Block]:
    claims = list(ctx.graph.get("claims") or ())
    supported = sum(1 for c in claims if ctx.citer.supported(c["id"]))
    open_contradictions = (ctx.quality.get("counts") or {}).get("open_contradictions", 0)
    blocks: list[Block] = [_para(
        f"Of the {len(claims)} claims in the knowledge graph, {supported} are backed by verified evidence. "
        f"{open_contradictions} contradictions remain open and {len(ctx.graph.get('gaps') or ())} gaps "
        "were reported.")]
    findings, _ = _findings(ctx)
    if findings:
        statement, ids = findings[0]
        blocks.append(_para("The best-supported finding: ", *_cite_line(ctx, statement, *ids)))
    return blocks


def _custom(heading: str, ctx: Context) -> list[Block]:
    """A heading nobody wrote: the verified claims whose category or tags name it."""
    slug = normalize_heading(heading)
    claims = [
        c for c in ctx.graph.get("claims") or ()
        if ctx.citer.supported(c["id"])
        and slug in {normalize_heading(str(t)) for t in (c.get("category"), *(c.get("tags") or ())) if t}
    ]
    if not claims:
        return [_para(Emph(f"No section “{heading}” was written and no verified claim is categorised "
                           "under it."))]
    return [_bullets([_cite_line(ctx, str(c["statement"]), c["id"]) for c in claims])]


def _evidence(heading: str, ctx: Context) -> list[Block]:
    items = []
    for claim_id, entries in list(ctx.citer.cited.items()):
        citation = ctx.citer.cite(claim_id)
        statement = " ".join(str(ctx.citer.claims[claim_id]["statement"]).split())
        cite = [Cite(citation)] if citation else []
        lines: list[Line] = [_line(Strong(claim_id), f" {statement} ", *cite)]
        for entry in entries:
            snippet = " ".join(str(entry.evidence.get("snippet", "")).split())
            if len(snippet) > SNIPPET_CHARS:
                snippet = snippet[: SNIPPET_CHARS - 1] + "…"
            page = f", p. {entry.ref.pages[0]}" if entry.ref.pages else ", page not given"
            score = (entry.evidence.get("verification") or {}).get("score")
            match = f"; match {score}%" if isinstance(score, int | float) else ""
            title = " ".join(str(entry.source.get("title", "")).split())
            lines.append(_line(Quote(snippet), " — ", Cite(Citation((claim_id,), (entry.ref,))),
                               f" {title}{page}{match}"))
        items.append(tuple(lines))
    if not items:
        return [_para("No claim is cited in this report.")]
    return [_para("Every cited claim, with the snippet quoted from its source and verified against the "
                  "stored source text:"), Bullets(tuple(items))]


def _gaps(heading: str, ctx: Context) -> list[Block]:
    blocks: list[Block] = []
    gaps = sorted(ctx.graph.get("gaps") or (), key=lambda g: _PRIORITY.get(g.get("priority"), 1))
    if gaps:
        lines = []
        for gap in gaps:
            line: list[str | Inline] = [Strong(f"[{gap.get('priority')}]"), f" {gap.get('description', '')}"]
            if gap.get("sub_question_id"):
                line.append(Emph(f" (sub-question {_local(str(gap['sub_question_id']))})"))
            if gap.get("suggested_queries"):
                line.append(" Suggested searches: " + "; ".join(map(str, gap["suggested_queries"])) + ".")
            lines.append(_line(*line))
        blocks += [_para(Strong("Gaps reported by the agents")), _bullets(lines)]
    unanswered = set((ctx.quality.get("flags") or {}).get("unanswered_sub_questions") or ())
    questions = [q for q in plan_sub_questions(ctx.graph) if q["id"] in unanswered]
    if questions:
        blocks += [_para(Strong("Sub-questions without any claim")),
                   _bullets([_line(Strong(_local(q["id"])), f" {q.get('question', '')}") for q in questions])]
    contradictions = list(ctx.graph.get("contradictions") or ())
    if contradictions:
        lines = []
        for item in contradictions:
            line = [Strong(f"[{item.get('status')}]"), f" {item.get('description', '')} Claims: "]
            for n, claim_id in enumerate(item.get("claim_ids") or ()):
                citation = ctx.citer.cite(claim_id)
                line += [("; " if n else "") + _local(claim_id)]
                line += [" ", Cite(citation)] if citation else [Emph(" (no verified evidence)")]
            if item.get("resolution"):
                line.append(f". Resolution: {item['resolution']}")
            lines.append(_line(*line))
        blocks += [_para(Strong("Contradictions")), _bullets(lines)]
    return blocks or [_para("No gaps, unanswered sub-questions or contradictions were recorded.")]


def _quality(heading: str, ctx: Context) -> list[Block]:
    q = ctx.quality
    verdict = ""
    if "passed" in q:
        verdict = " The mission's quality gate " + ("passed." if q["passed"] else "failed.")
    breakdown = [_row(c["label"], str(c["weight"]), str(c["score"]), str(c["weighted"]), c["detail"])
                 for c in q.get("breakdown") or ()]
    breakdown.append(_row(Strong("Total"), "100", "", Strong(str(q.get("score"))), ""))
    blocks: list[Block] = [
        _para("Quality score: ", Strong(f"{q.get('score')}/100"),
              f" ({q.get('band')}), computed from the knowledge graph at {q.get('computed_at')}.{verdict}"),
        Table(("Component", "Weight", "Score", "Points", "Basis"), tuple(breakdown)),
    ]
    if q.get("checks"):
        checks = tuple(_row(c["criterion"], str(c["required"]), str(c["actual"]),
                            Strong("pass" if c["passed"] else "FAIL"), c["message"]) for c in q["checks"])
        blocks += [_para(Strong("Mission success criteria")),
                   Table(("Criterion", "Required", "Actual", "Result", "Detail"), checks)]
    counts = q.get("counts") or {}
    blocks.append(_para(f"Open contradictions: {counts.get('open_contradictions', 0)}. High-priority claims "
                        f"without verified support: {counts.get('unverified_high_priority_claims', 0)}."))
    if q.get("recommendations"):
        blocks += [_para(Strong("Recommendations")), _bullets([_line(str(r)) for r in q["recommendations"]])]
    return blocks


def _methodology(heading: str, ctx: Context) -> list[Block]:
    blocks: list[Block] = []
    mission = ctx.mission or {}
    if mission.get("name"):
        purpose = mission.get("objective") or mission.get("description") or ""
        blocks.append(_para("Mission ", Strong(str(mission["name"])), f": {purpose}"))
    phases = [(k.replace("_", " ").capitalize(), v) for k, v in (mission.get("phases") or {}).items() if v]
    if phases:
        blocks.append(_bullets([_line(Strong(f"{name}:"), " " + ", ".join(v)) for name, v in phases]))
    stats, counts = ctx.graph.get("stats") or {}, ctx.quality.get("counts") or {}
    blocks.append(_para(
        f"{stats.get('agents', len(_agents(ctx.graph)))} agents contributed {counts.get('sources', 0)} "
        "sources "
        f"({counts.get('peer_reviewed_sources', 0)} peer reviewed), {counts.get('claims', 0)} claims and "
        f"{counts.get('evidence_items', 0)} evidence items; {counts.get('verified_evidence', 0)} snippets "
        "were verified by matching them against the stored source text. Each citation number stands for one "
        "source; only claims with verified evidence are cited, with the page the snippet was found on."))
    agents = dict(ctx.session.get("agents") or {})
    actions: dict[str, dict[str, int]] = {}
    for entry in ctx.ledger:
        per_agent = actions.setdefault(str(entry.get("agent")), {})
        per_agent[str(entry.get("action"))] = per_agent.get(str(entry.get("action")), 0) + 1
    names = sorted(set(agents) | set(actions))
    if names:
        rows = []
        for name in names:
            state, done = agents.get(name) or {}, actions.get(name, {})
            rows.append(_row(name, str(state.get("state", "-")), str(state.get("attempts", "-")),
                             str(done.get("merge", 0)), str(done.get("reject", 0))))
        blocks.append(Table(("Agent", "State", "Attempts", "Merged", "Rejected"), tuple(rows)))
    run = []
    if ctx.session.get("iteration") is not None:
        run.append(f"{ctx.session['iteration']} iterations")
    if isinstance(ctx.session.get("cost_usd"), int | float):
        run.append(f"cost ${ctx.session['cost_usd']:.2f}")
    if ctx.session.get("status"):
        run.append(f"final status {ctx.session['status']}")
    if run:
        blocks.append(_para("Run: " + ", ".join(run) + "."))
    return blocks


def _bibliography(heading: str, ctx: Context) -> list[Block]:
    entries = []
    for number, source in ctx.citer.bibliography():
        parts = reference_parts(source)
        line: list[str | Inline] = [f"{parts['authors']} "] if "authors" in parts else []
        line += [f"({parts['year']}). ", Emph(parts["title"]), ". "]
        line += [f"{parts[k]}. " for k in ("venue", "publisher") if k in parts]
        if "link" in parts:
            line.append(Link(parts["link"], parts["link"]))
        elif "location" in parts:
            line.append(parts["location"])
        line.append(Emph(f" [{parts['kind']}]"))
        entries.append((number, _line(*line)))
    return [References(tuple(entries))] if entries else [_para("No source is cited.")]


_BUILDERS = {
    "summary": _summary, "introduction": _introduction, "key_findings": _key_findings,
    "conclusion": _conclusion, "evidence": _evidence, "gaps": _gaps, "quality": _quality,
    "methodology": _methodology, "bibliography": _bibliography,
}


def build_section(kind: str, heading: str, ctx: Context) -> list[Block]:
    return _BUILDERS.get(kind, _custom)(heading, ctx)


def byline(ctx: Context) -> Line:
    parts = []
    if ctx.mission and ctx.mission.get("name"):
        parts.append(f"Mission: {ctx.mission['name']}")
    if ctx.session.get("id"):
        parts.append(f"Session: {ctx.session['id']}")
    graph = ctx.graph
    parts.append(f"Knowledge graph commit {graph.get('commit_seq', '-')}, "
                 f"generated {graph.get('generated_at', '-')}")
    return _line(" · ".join(parts))


def __getattr__(name: str) -> Any:
    """Re-export the renderers lazily (they import this module)."""
    if name == "render_markdown":
        from orchestrator.report.markdown import render_markdown

        return render_markdown
    if name == "render_html":
        from orchestrator.report.html import render_html

        return render_html
    raise AttributeError(name)
