"""The generated content of each section kind, read from the graph through a :class:`Context` (pure).

Builders cite only through the context's :class:`~orchestrator.graph.citations.Citer`, so
everything they cite has verified evidence; a heading of no known kind gets the verified
claims categorised under it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from orchestrator.graph.citations import Citation, Ref, claim_resolver
from orchestrator.graph.quality import effective_confidence, plan_sub_questions, same_ref
from orchestrator.report.bibliography import reference_parts
from orchestrator.report.blocks import (
    Block,
    Bullets,
    Cite,
    Emph,
    Inline,
    Line,
    Link,
    Quote,
    References,
    Strong,
    Table,
    Text,
    bullet_list,
    para,
    table_row,
    text_line,
)
from orchestrator.report.context import PRIORITY_RANK, Context, agent_names, local_id
from orchestrator.report.contradictions import contradictions_section
from orchestrator.report.headings import normalize_heading
from orchestrator.report.methodology import methodology_section

#: Longest snippet quoted in the Evidence section, in characters.
SNIPPET_CHARS = 600


def _cite_line(ctx: Context, text: str, *claim_ids: str) -> Line:
    citation = ctx.citer.cite(*claim_ids)
    return (Text(text + " "), Cite(citation)) if citation else (Text(text),)


def _findings(ctx: Context) -> tuple[list[tuple[str, list[str]]], int]:
    """Key findings with a citable claim (synthesis agent first), and how many had none.

    Without any key findings: the best-supported verified claims.
    """
    found: list[tuple[int, str, list[str]]] = []
    omitted = 0
    for agent in sorted(agent_names(ctx.graph), key=lambda a: (a != "synthesis-agent", a)):
        resolve = claim_resolver(ctx.graph, agent)
        for finding in ctx.graph[agent].get("key_findings") or ():
            if not isinstance(finding, dict) or not finding.get("statement"):
                continue
            ids = [i for i in map(resolve, map(str, finding.get("claim_ids") or ())) if i]
            ids = [i for i in ids if ctx.citer.supported(i)]
            rank = PRIORITY_RANK.get(str(finding.get("importance")), 1)
            if ids:
                found.append((rank, str(finding["statement"]), ids))
            omitted += not ids
    if found or omitted:
        return [(statement, ids) for _, statement, ids in sorted(found, key=lambda f: f[0])], omitted
    claims = [c for c in ctx.graph.get("claims") or () if ctx.citer.supported(c["id"])]
    claims.sort(key=lambda c: (-(effective_confidence(c) or 0), PRIORITY_RANK.get(c.get("priority"), 1), c["id"]))
    return [(str(c["statement"]), [c["id"]]) for c in claims[:10]], 0


def _summary(heading: str, ctx: Context) -> list[Block]:
    q = ctx.quality
    supported = [c["id"] for c in ctx.graph.get("claims") or () if ctx.citer.supported(c["id"])]
    sources = {s["id"] for cid in supported for _, s in ctx.citer.supported(cid)}
    query = ctx.session.get("query")
    text = f"This report answers the question “{query}”. " if query else ""
    text += (f"It rests on {len(supported)} claims whose quoted evidence was verified in {len(sources)} "
             f"sources. The quality score is {q.get('score')}/100 ({q.get('band')})")
    text += _criteria_said(q, " and ")
    blocks: list[Block] = [para(text + ".")]
    findings, _ = _findings(ctx)
    if findings:
        top = [_cite_line(ctx, statement, *ids) for statement, ids in findings[:3]]
        blocks += [para(Strong("Main findings:")), bullet_list(top)]
    return blocks


def _criteria_said(quality: Mapping[str, Any], lead: str) -> str:
    """'... 5 of 7 of the mission's success criteria are met' (empty when the mission checks none)."""
    checks = list(quality.get("checks") or ())
    if not checks:
        return ""
    met = sum(1 for c in checks if c.get("passed"))
    if met == len(checks):
        return f"{lead}all {len(checks)} of the mission's success criteria are met"
    return f"{lead}{met} of {len(checks)} of the mission's success criteria are met (see Quality Assessment)"


def _introduction(heading: str, ctx: Context) -> list[Block]:
    blocks: list[Block] = []
    if ctx.session.get("query"):
        blocks.append(para("Research question: ", Emph(str(ctx.session["query"]))))
    if ctx.mission and ctx.mission.get("objective"):
        blocks.append(para("Objective: " + str(ctx.mission["objective"])))
    questions = plan_sub_questions(ctx.graph)
    if questions:
        refs = [c["sub_question_id"] for c in ctx.graph.get("claims") or () if c.get("sub_question_id")]
        lines = []
        for q in questions:
            n = sum(1 for r in refs if same_ref(q["id"], r))
            status = f"answered by {n} claim{'s' if n != 1 else ''}" if n else "not answered yet"
            text = f" ({q.get('priority', 'medium')}) {q.get('question', '')} "
            lines.append(text_line(Strong(local_id(q["id"])), text, Emph(f"({status})")))
        blocks += [para(f"The question was broken into {len(questions)} sub-questions:"), bullet_list(lines)]
    return blocks or [para("No research question or plan was recorded.")]


def _key_findings(heading: str, ctx: Context) -> list[Block]:
    findings, omitted = _findings(ctx)
    if findings:
        blocks: list[Block] = [bullet_list([_cite_line(ctx, s, *ids) for s, ids in findings])]
    else:
        blocks = [para("No finding is backed by verified evidence yet.")]
    if omitted:
        blocks.append(para(Emph(f"{omitted} further findings are not shown because none of their claims "
                                 "has verified evidence.")))
    return blocks


def _conclusion(heading: str, ctx: Context) -> list[Block]:
    claims = list(ctx.graph.get("claims") or ())
    supported = sum(1 for c in claims if ctx.citer.supported(c["id"]))
    open_contradictions = (ctx.quality.get("counts") or {}).get("open_contradictions", 0)
    blocks: list[Block] = [para(
        f"Of the {len(claims)} claims in the knowledge graph, {supported} are backed by verified evidence. "
        f"{open_contradictions} contradictions remain open and {len(ctx.graph.get('gaps') or ())} gaps "
        "were reported.")]
    findings, _ = _findings(ctx)
    if findings:
        statement, ids = findings[0]
        blocks.append(para("The best-supported finding: ", *_cite_line(ctx, statement, *ids)))
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
        return [para(Emph(f"No section “{heading}” was written and no verified claim is categorised "
                           "under it."))]
    return [bullet_list([_cite_line(ctx, str(c["statement"]), c["id"]) for c in claims])]


def _evidence(heading: str, ctx: Context) -> list[Block]:
    items: list[tuple[Line, ...]] = []
    for claim_id, entries in list(ctx.citer.cited.items()):
        citation = ctx.citer.cite(claim_id)
        statement = " ".join(str(ctx.citer.claims[claim_id]["statement"]).split())
        cite = [Cite(citation)] if citation else []
        quoted: list[Line] = []
        for entry in entries:
            snippet = " ".join(str(entry.evidence.get("snippet", "")).split())
            if len(snippet) > SNIPPET_CHARS:
                snippet = snippet[: SNIPPET_CHARS - 1] + "…"
            page = _pdf_page(entry.ref)
            score = (entry.evidence.get("verification") or {}).get("score")
            match = f"; match {score}%" if isinstance(score, int | float) else ""
            title = " ".join(str(entry.source.get("title", "")).split())
            quoted.append(text_line(Quote(snippet), " — ", Cite(Citation((claim_id,), (entry.ref,))),
                                    f" {title}{page}{match}"))
        if len(entries) == 1 and _same_words(statement, str(entries[0].evidence.get("snippet", ""))):
            # a claim that is its quote (every offline claim): the sentence once, as the quote
            items.append((text_line(Strong(claim_id), " ", *quoted[0]),))
            continue
        items.append((text_line(Strong(claim_id), f" {statement} ", *cite), *quoted))
    if not items:
        return [para("No claim is cited in this report.")]
    return [para("Every cited claim, with the snippet quoted from its source and verified against the "
                  "stored source text:"), Bullets(tuple(items))]


def _same_words(statement: str, snippet: str) -> bool:
    return " ".join(statement.split()).casefold() == " ".join(snippet.split()).casefold()


def _gap_key(gap: Mapping[str, Any]) -> tuple[str, str]:
    return " ".join(str(gap.get("description", "")).split()).casefold(), local_id(str(gap.get("sub_question_id", "")))


def _gaps(heading: str, ctx: Context) -> list[Block]:
    blocks: list[Block] = []
    gaps = sorted(ctx.graph.get("gaps") or (), key=lambda g: PRIORITY_RANK.get(g.get("priority"), 1))
    first: dict[tuple[str, str], Mapping[str, Any]] = {}
    for gap in gaps:  # the same hole reported alike by two research rounds: listed once
        first.setdefault(_gap_key(gap), gap)
    gaps = list(first.values())
    if gaps:
        lines = []
        for gap in gaps:
            line: list[str | Inline] = [Strong(f"[{gap.get('priority')}]"), f" {gap.get('description', '')}"]
            if gap.get("sub_question_id"):
                line.append(Emph(f" (sub-question {local_id(str(gap['sub_question_id']))})"))
            if gap.get("suggested_queries"):
                line.append(" Suggested searches: " + "; ".join(map(str, gap["suggested_queries"])) + ".")
            lines.append(text_line(*line))
        blocks += [para(Strong("Gaps reported by the agents")), bullet_list(lines)]
    unanswered = set((ctx.quality.get("flags") or {}).get("unanswered_sub_questions") or ())
    questions = [q for q in plan_sub_questions(ctx.graph) if q["id"] in unanswered]
    if questions:
        blocks += [para(Strong("Sub-questions without any claim")),
                   bullet_list([text_line(Strong(local_id(q["id"])), f" {q.get('question', '')}") for q in questions])]
    contradictions = list(ctx.graph.get("contradictions") or ())
    if contradictions:
        blocks.append(para(f"Contradictions between claims ({len(contradictions)}) are listed, both sides cited, "
                           "under Contradictions."))
    return blocks or [para("No gaps, unanswered sub-questions or contradictions were recorded.")]


def _quality(heading: str, ctx: Context) -> list[Block]:
    q = ctx.quality
    verdict = _criteria_said(q, " ")
    verdict = verdict[:2].upper() + verdict[2:] + "." if verdict else ""
    breakdown = [table_row(c["label"], str(c["weight"]), str(c["score"]), str(c["weighted"]), c["detail"])
                 for c in q.get("breakdown") or ()]
    breakdown += [table_row(p["label"], "", "", str(p["points"]), p["detail"]) for p in q.get("penalties") or ()]
    breakdown.append(table_row(Strong("Total"), "100", "", Strong(str(q.get("score"))), ""))
    blocks: list[Block] = [
        para("Quality score: ", Strong(f"{q.get('score')}/100"),
              f" ({q.get('band')}), computed from the knowledge graph at {q.get('computed_at')}.{verdict}"),
        Table(("Component", "Weight", "Score", "Points", "Basis"), tuple(breakdown)),
    ]
    if q.get("checks"):
        checks = tuple(table_row(c["criterion"], str(c["required"]), str(c["actual"]),
                            Strong("pass" if c["passed"] else "FAIL"), c["message"]) for c in q["checks"])
        blocks += [para(Strong("Mission success criteria")),
                   Table(("Criterion", "Required", "Actual", "Result", "Detail"), checks)]
    counts = q.get("counts") or {}
    blocks.append(para(f"Open contradictions: {counts.get('open_contradictions', 0)}. High-priority claims "
                        f"without verified support: {counts.get('unverified_high_priority_claims', 0)}."))
    if q.get("recommendations"):
        blocks += [para(Strong("Recommendations")), bullet_list([text_line(str(r)) for r in q["recommendations"]])]
    return blocks


def _pdf_page(ref: Ref) -> str:
    """Where the snippet stands: the PDF page when the citation shows another (printed) number; the section
    in a document without pages."""
    if ref.sections:
        return f", {ref.section_text()}"
    if not ref.pages:
        return ", page not given"
    printed = ref.page_texts()[0]
    return f", p. {printed}" if printed == str(ref.pages[0]) else f", p. {printed} (PDF page {ref.pages[0]})"


#: Said once, under the references, when a citation shows a page's printed number.
PRINTED_PAGES_NOTE = ("Page numbers in citations are the numbers printed on the pages of the cited document "
                      "(its PDF page is given with each quoted snippet; in the HTML report each page number "
                      "opens that page of the PDF).")


def _bibliography(heading: str, ctx: Context) -> list[Block]:
    entries = []
    for number, source in ctx.citer.bibliography():
        parts = reference_parts(source)
        line: list[str | Inline] = [f"{parts['authors']} "] if "authors" in parts else []
        line += [f"({parts['year']}). "] if "year" in parts else []
        line += [Emph(parts["title"]), ". "]
        line += [f"{parts[k]}. " for k in ("venue", "publisher") if k in parts]
        if "link" in parts:
            line.append(Link(parts["link"], parts["link"]))
        elif "location" in parts:
            line.append(parts["location"])
        line.append(Emph(f" [{parts['kind']}]"))
        entries.append((number, text_line(*line)))
    if not entries:
        return [para("No source is cited.")]
    blocks: list[Block] = [References(tuple(entries))]
    return blocks + ([para(PRINTED_PAGES_NOTE)] if ctx.citer.printed_pages() else [])


_BUILDERS = {
    "summary": _summary, "introduction": _introduction, "key_findings": _key_findings,
    "conclusion": _conclusion, "evidence": _evidence, "gaps": _gaps, "quality": _quality,
    "methodology": methodology_section, "bibliography": _bibliography, "contradictions": contradictions_section,
}


def build_section(kind: str, heading: str, ctx: Context) -> list[Block]:
    return _BUILDERS.get(kind, _custom)(heading, ctx)
