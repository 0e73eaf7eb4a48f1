"""academic-researcher and web-researcher with Claude: claims quoted verbatim from stored texts.

The model researches with the definition's tools, then submits sources, claims, entities,
relationships and gaps through one forced output tool. Before anything is written, every
evidence snippet is checked against the stored text (the orchestrator's own matcher) and
the model is re-asked with the closest passages, so most evidence problems are fixed within
the attempt instead of costing an orchestrator retry.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from agents.claude import (
    agent_client,
    agent_converse,
    agent_entry,
    definition_of,
    previous_files,
    task_section,
)
from agents.claude.client import ClaudeClient
from agents.claude.output_spec import OutputSpec
from agents.claude.scholarly import ScholarlyBackend
from agents.claude.source_library import SourceLibrary
from agents.claude.tools import Toolbox
from agents.offline.text import sentence_spans
from agents.runtime import AgentContext
from orchestrator.graph.evidence import DEFAULT_THRESHOLD, verify_snippet

SPEC = OutputSpec(
    "submit_research",
    ("sources.json", "claims.json", "entities.json", "relationships.json", "gaps.json"),
    "Submit your findings: the sources you fetched (optional extra metadata), claims with verbatim "
    "evidence, entities, relationships and gaps. Call this once, when your research is done.",
    required=("claims",),
)
#: Fields of a fetched source that come from the fetch itself and are never taken from the model.
_FIXED = ("id", "content_sha256", "url", "doi", "arxiv_id", "pdf_url", "accessed_at")
_MAX_LISTED_SOURCES = 40
#: Types a fetch assigns when it knows nothing better; the model may refine these.
_GENERIC_TYPES = ("web-page", "other")


def _clip(text: str, limit: int = 300) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def closest_passage(matched: str, pages: tuple[str, ...], page: int | None) -> str:
    """The verifier's (case- and space-folded) match, found in the stored text and widened to whole
    sentences, so the model can quote it as written."""
    words = matched.split()
    if not words:
        return matched
    pattern = re.compile(r"\s+".join(re.escape(w) for w in words), re.IGNORECASE)
    for text in ([pages[page - 1]] if page and 0 < page <= len(pages) else []) + list(pages):
        found = pattern.search(text)
        if found:
            spans = [(a, b) for a, b in sentence_spans(text) if a < found.end() and b > found.start()]
            start, end = (spans[0][0], spans[-1][1]) if spans else found.span()
            return text[start:end]
    return matched


def check_research(data: dict[str, Any], library: SourceLibrary, threshold: float) -> list[str]:
    """References resolve and every snippet is found in its source's stored text (with fixes)."""
    problems: list[str] = []
    declared = {s.get("id") for s in data.get("sources", []) if isinstance(s, dict)}
    claims = data.get("claims", [])
    entity_ids = {e.get("id") for e in data.get("entities", [])}
    claim_ids = [c.get("id") for c in claims]
    for dup in sorted({i for i in claim_ids if claim_ids.count(i) > 1}):
        problems.append(
            f"claims.json: the claim id {dup!r} is used more than once; give each claim its own id"
        )
    for i, claim in enumerate(claims):
        for ref in claim.get("entity_ids", []):
            if ref not in entity_ids and ":" not in ref:
                problems.append(
                    f"claims.json at /claims/{i}/entity_ids: {ref!r} is not in your entities; "
                    "add the entity or remove the reference"
                )
        for j, evidence in enumerate(claim.get("evidence", [])):
            where = f"claims.json at /claims/{i}/evidence/{j}"
            ref = evidence.get("source_id", "")
            doc = library.document(ref)
            if doc is None:
                why = (
                    "it has no stored text (it was never fetched)"
                    if ref in declared
                    else "no source has this id"
                )
                problems.append(
                    f"{where}/source_id: cannot cite {ref!r}: {why}. Cite a source_id shown by "
                    "search_passages, read_source_page or a fetch tool, or drop this evidence"
                )
                continue
            page = (evidence.get("locator") or {}).get("page")
            found = verify_snippet(
                evidence.get("snippet", ""),
                "\f".join(doc.pages),
                page if isinstance(page, int) else None,
                threshold,
            )
            if not found.verified:
                passage = closest_passage(found.matched_text, doc.pages, found.page or page)
                closest = (
                    f' The closest passage (page {found.page or page or "?"}) is "{_clip(passage, 500)}".'
                    if found.matched_text
                    else ""
                )
                problems.append(
                    f"{where}/snippet: {found.reason} in {ref} (match score {found.score:.0f}, "
                    f"{threshold:.0f} needed).{closest} Quote the source verbatim with the right "
                    "page, or drop the claim"
                )
    refs = set(claim_ids) | entity_ids
    for i, rel in enumerate(data.get("relationships", [])):
        for end in ("subject", "object"):
            ref = rel.get(end, "")
            if ref not in refs and ":" not in ref:
                problems.append(
                    f"relationships.json at /relationships/{i}/{end}: {ref!r} is not one of your "
                    "entities or claims"
                )
    return problems


def final_sources(given: list[dict[str, Any]], library: SourceLibrary) -> list[dict[str, Any]]:
    """Fetched sources are authoritative: the provider's record wins and the model only fills gaps,
    except that it may refine a generic type (a fetched page is stored as ``web-page`` until the
    model says it is, say, documentation)."""
    by_id = {s["id"]: s for s in given if isinstance(s, dict) and "id" in s}
    out = []
    for sid, record in library.own_sources.items():
        offered = {k: v for k, v in by_id.pop(sid, {}).items() if k not in _FIXED}
        merged = {**offered, **record}
        if record.get("type") in _GENERIC_TYPES and "type" in offered:
            merged["type"] = offered["type"]
        out.append(merged)
    return out + list(by_id.values())


def research_brief(context: AgentContext, library: SourceLibrary, tools: tuple[str, ...]) -> list[str]:
    """The lines of the first message (the retry section follows them on a retry)."""
    options = context.task.options
    lines = [task_section(context), ""]
    sources = library.graph_sources()
    if sources:
        lines.append(f"Stored sources in the session ({len(sources)}; search_passages searches all of them):")
        for s in sources[:_MAX_LISTED_SOURCES]:
            doc = library.document(s["id"])
            pages = len(doc.pages) if doc else 0
            lines.append(
                f"- {s['id']}: {_clip(s.get('title', ''), 120)} ({s.get('year', 'n.d.')}, {pages} page(s))"
            )
        if len(sources) > _MAX_LISTED_SOURCES:
            lines.append(f"- ... and {len(sources) - _MAX_LISTED_SOURCES} more")
    else:
        lines.append("The session has no stored sources yet; find and fetch them with your tools.")
    lines += [
        "",
        f"Your tools: {', '.join(tools) or '(none)'}.",
        f"Give at most {options.get('max_claims_per_question', 6)} claims per sub-question, each with "
        "sub_question_id set. Evidence snippets must match the stored text "
        f"(at least {float(options.get('evidence_threshold', DEFAULT_THRESHOLD)):.0f}/100 after ignoring "
        "case and whitespace) on the cited page.",
        "Record each sub-question you could not answer from the sources as a gap.",
    ]
    return lines


@agent_entry
def run(
    context: AgentContext, client: ClaudeClient | None = None, backend: ScholarlyBackend | None = None
) -> None:
    definition = definition_of(context)
    with agent_client(context, definition, client) as client:
        threshold = float(context.task.options.get("evidence_threshold", DEFAULT_THRESHOLD))
        library = SourceLibrary(context, context.graph())
        retried = previous_files(context) if context.task.attempt > 1 else {}
        for name, data in retried.items():  # a retry keeps citing what the rejected attempt fetched
            if name.startswith("sources"):
                for record in data.get("sources", []) if isinstance(data, dict) else []:
                    library.adopt(record)
        toolbox = Toolbox(definition.tools, library, client.config, backend=backend)
        result = agent_converse(
            context,
            definition,
            client,
            research_brief(context, library, toolbox.enabled),
            spec=SPEC,
            purpose="research",
            tools=toolbox,
            check=lambda d: check_research(d, library, threshold),
        )
    files = result.files
    sources = final_sources(files.get("sources.json", {}).get("sources", []), library)
    claims: list[dict[str, Any]] = files.get("claims.json", {}).get("claims", [])
    if sources:
        context.write_items("sources", "sources", sources)
    context.write_items("claims", "claims", claims)
    for name, key in (("entities", "entities"), ("relationships", "relationships"), ("gaps", "gaps")):
        items = files.get(f"{name}.json", {}).get(key)
        if items:
            context.write_items(name, key, items)
    summary = (
        f"{len(claims)} claim(s) from {len({e['source_id'] for c in claims for e in c['evidence']})} "
        f"source(s); fetched {len(library.own_sources)} source(s) in {result.turns} model turn(s) and "
        f"{result.tool_calls} tool call(s) (${client.total_cost_usd:.4f})."
    )
    notes = _notes(result.warnings, files)
    context.complete("completed" if claims and not result.warnings else "partial", summary, notes)


def _notes(warnings: list[str], files: Mapping[str, Any]) -> str | None:
    parts = []
    if warnings:
        parts.append(f"{len(warnings)} problem(s) left after re-asking: " + " | ".join(warnings[:5]))
    gaps = files.get("gaps.json", {}).get("gaps", [])
    if gaps:
        parts.append(f"{len(gaps)} gap(s) recorded")
    return "; ".join(parts) or None
