"""The mission's quality gate: each success criterion checked against the score and the graph (pure).

A failed criterion always comes with a recommendation that names what to fix (papers by title,
gaps by what they say), so the next research round, or the reader of the report, knows what to do.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from orchestrator.graph.quality import LIST_LIMIT, Check, GateResult, QualityReport
from orchestrator.graph.relevance import relevant


def _ids(items: Iterable[str]) -> str:
    items = list(items)
    shown = ", ".join(items[:LIST_LIMIT])
    return shown + (f" and {len(items) - LIST_LIMIT} more" if len(items) > LIST_LIMIT else "")



class _Gate:
    """Collects checks and the advice for each failed one."""

    def __init__(self) -> None:
        self.checks: list[Check] = []
        self.recommendations: list[str] = []

    def check(self, criterion: str, required: Any, actual: Any, passed: bool, message: str,
              advice: str) -> None:
        self.checks.append(
            Check(criterion=criterion, required=required, actual=actual, passed=passed, message=message)
        )
        if not passed:
            self.recommendations.append(advice)


def gate(report: QualityReport, graph: Mapping[str, Any], criteria: Mapping[str, Any], *,
         question: str = "") -> GateResult:
    """Check each of the mission's success criteria present in ``criteria`` and recommend fixes.

    The graph is read to point at sources that are present but not yet cited, and only at those
    that bear on ``question`` (:mod:`orchestrator.graph.relevance`): more sources are worth citing
    only when they have something to say about it. ``required_sections`` is not checked here: the
    renderer always emits every required section.
    """
    counts = report.counts
    g = _Gate()
    sources = [s for s in graph.get("sources") or () if isinstance(s, dict)]
    idle = relevant((s for s in sources if s.get("id") not in report.cited_sources), question)
    unused = _ids(_title(s) for s in idle)
    unused_reviewed = _ids(_title(s) for s in idle if s.get("peer_reviewed") is True)
    more = ("; no other source in the graph bears on the question: add documents that do to the input "
            "(--input-dir), or use a mission that does not count sources (local-documents)")
    if "confidence_threshold" in criteria:
        need, mean = criteria["confidence_threshold"], report.mean_confidence
        shown = "n/a (no claims)" if mean is None else f"{mean:.2f}"
        g.check("confidence_threshold", need, mean, mean is not None and mean >= need,
                f"mean effective claim confidence is {shown}; at least {need} required",
                "Research the question: the graph has no claims yet." if mean is None else
                "Raise confidence: corroborate low-confidence claims with more independent sources "
                "and have the fact-checker re-assess them.")
    if "min_sources" in criteria:
        need, have = criteria["min_sources"], counts["cited_sources"]
        g.check("min_sources", need, have, have >= need,
                f"{have} sources are cited by claim evidence ({counts['sources']} in the graph); "
                f"at least {need} required",
                f"Cite at least {need - have} more distinct sources in claim evidence"
                + (f"; in the graph, uncited, and about the question: {unused}." if unused else more + "."))
    if "min_peer_reviewed_sources" in criteria:
        need, have = criteria["min_peer_reviewed_sources"], counts["cited_peer_reviewed_sources"]
        g.check("min_peer_reviewed_sources", need, have, have >= need,
                f"{have} cited sources are peer reviewed; at least {need} required",
                f"Add evidence from at least {need - have} more peer-reviewed sources (papers with "
                "peer_reviewed: true)"
                + (f"; in the graph, uncited, and about the question: {unused_reviewed}." if unused_reviewed
                   else more + "."))
    if "all_claims_cited" in criteria:
        required = criteria["all_claims_cited"] is True
        uncited = len(report.uncited_claims)
        g.check("all_claims_cited", required, uncited == 0, uncited == 0 or not required,
                f"{uncited} of {counts['claims']} claims have no evidence resolving to a source"
                + ("" if required else " (not required by the mission)"),
                f"Add evidence with a source_id to the {uncited} uncited claims "
                f"({_ids(report.uncited_claims)}), or remove them.")
    if "min_quality_score" in criteria:
        need = criteria["min_quality_score"]
        weakest = max(report.components, key=lambda c: c.weight - c.weighted)
        g.check("min_quality_score", need, report.score, report.score >= need,
                f"quality score is {report.score}/100 ({report.band}); at least {need} required",
                f"Improve the weakest component, {weakest.label.lower()} "
                f"({weakest.score}/100: {weakest.detail}).")
    if "min_verified_evidence_ratio" in criteria:
        need = criteria["min_verified_evidence_ratio"]
        total, ok = counts["evidence_items"], counts["verified_evidence"]
        ratio = round(ok / total, 4) if total else 0.0
        g.check("min_verified_evidence_ratio", need, ratio, total > 0 and ratio >= need,
                f"{ok} of {total} evidence snippets are verified against stored source texts "
                f"(ratio {ratio:.2f}); at least {need} required",
                "Quote snippets verbatim from stored source texts (content_sha256) so they verify; "
                f"unverified: {_ids(report.unverified_evidence) or 'none, there is no evidence at all'}.")
    if "min_answered_sub_questions" in criteria:
        _answered_check(g, report, float(criteria["min_answered_sub_questions"]))
    if criteria.get("contradictions_surfaced") is True:
        _surfaced_check(g, report, graph)
    skip_uncited = any(c["criterion"] == "all_claims_cited" and not c["passed"] for c in g.checks)
    g.recommendations.extend(_flag_recommendations(report, graph, skip_uncited=skip_uncited))
    return GateResult(passed=all(c["passed"] for c in g.checks), checks=g.checks,
                      recommendations=g.recommendations)


def _answered_check(g: _Gate, report: QualityReport, need: float) -> None:
    """The plan's sub-questions that a claim with verified evidence answers; without a plan, the question
    itself (any verified evidence)."""
    total, answered = report.counts["sub_questions"], report.counts["verified_answered_sub_questions"]
    if not total:
        total, answered = 1, int(report.counts["verified_evidence"] > 0)
    share = round(answered / total, 4)
    missing = _ids(f"{q['id']} ({q.get('question', '?')})" for q in report.unverified_sub_questions)
    g.check("min_answered_sub_questions", need, share, share >= need,
            f"{answered} of {total} sub-questions are answered by a claim with verified evidence (share "
            f"{share:.2f}); at least {need:g} required",
            "The documents did not answer "
            + (f"these sub-questions: {missing}" if missing else "the question")
            + ". Add documents that do (--input-dir), or ask a narrower question.")


def _surfaced_check(g: _Gate, report: QualityReport, graph: Mapping[str, Any]) -> None:
    """Every open contradiction can be quoted on both sides: each side's claim has verified evidence."""
    quotable = {str(c.get("id")) for c in graph.get("claims") or () if isinstance(c, dict)
                and any((e.get("verification") or {}).get("verified") is True
                        for e in c.get("evidence") or () if isinstance(e, dict))}
    contradictions = {str(c.get("id")): c for c in graph.get("contradictions") or () if isinstance(c, dict)}
    hidden = [cid for cid in report.open_contradictions
              if not set(map(str, (contradictions.get(cid) or {}).get("claim_ids") or ())) <= quotable
              or len((contradictions.get(cid) or {}).get("claim_ids") or ()) < 2]
    total = len(report.open_contradictions)
    g.check("contradictions_surfaced", True, not hidden, not hidden,
            f"{total - len(hidden)} of {total} open contradictions are quoted in the report with both sides cited",
            f"Give each side of these contradictions verified evidence, or resolve them: {_ids(hidden)}.")


def _title(source: Mapping[str, Any]) -> str:
    """How a person knows a paper: its title, quoted (the internal id only when it has none)."""
    title = " ".join(str(source.get("title") or "").split())
    if not title:
        return str(source.get("id"))
    return f"\u201c{title if len(title) <= 90 else title[:89] + chr(0x2026)}\u201d"


def _named(ids: Iterable[str], graph: Mapping[str, Any], collection: str, field: str) -> list[str]:
    """Items of ``collection`` named by their ``field`` (a title, a description) instead of their ids."""
    index: dict[str, Mapping[str, Any]] = {}
    for item in graph.get(collection) or ():
        if isinstance(item, dict):
            for key in (item.get("id"), *(item.get("aliases") or ())):
                index[str(key)] = item
    names = []
    for gid in ids:
        item = index.get(gid)
        if item is None:
            names.append(gid)
        elif collection == "sources":
            names.append(_title(item))
        else:
            text = " ".join(str(item.get(field) or gid).split())
            names.append(text if len(text) <= 90 else text[:89] + "\u2026")
    return names


def _flag_recommendations(report: QualityReport, graph: Mapping[str, Any], *, skip_uncited: bool) -> list[str]:
    """Advice for what is flagged, even when no criterion fails."""
    advice = []
    if not report.counts["claims"]:
        advice.append("The graph has no claims: run the research agents before synthesis.")
    if report.unanswered_sub_questions:
        listed = _ids(f"{q['id']} ({q.get('question', '?')})" for q in report.unanswered_sub_questions)
        advice.append(f"Research the sub-questions that have no claim yet: {listed}.")
    if report.uncited_claims and not skip_uncited:
        advice.append(f"{len(report.uncited_claims)} claims are uncited ({_ids(report.uncited_claims)}): "
                      "add evidence with a source_id.")
    if report.open_contradictions:
        advice.append(f"Resolve the {len(report.open_contradictions)} open contradictions "
                      f"({_ids(report.open_contradictions)}): have the fact-checker weigh the evidence "
                      "and write a contradictions.json item naming both claims with status 'resolved' and a "
                      "resolution.")
    if report.unverified_high_priority_claims:
        advice.append(f"Verify the {len(report.unverified_high_priority_claims)} high-priority claims "
                      f"without verified support ({_ids(report.unverified_high_priority_claims)}).")
    if report.open_high_priority_gaps:
        advice.append(f"Close the {len(report.open_high_priority_gaps)} high-priority gaps: "
                      f"{_ids(_named(report.open_high_priority_gaps, graph, 'gaps', 'description'))}.")
    if report.sources_without_identifier:
        advice.append(f"Add a DOI, arXiv id or URL to the {len(report.sources_without_identifier)} sources "
                      f"without one: {_ids(_named(report.sources_without_identifier, graph, 'sources', 'title'))}.")
    return advice
