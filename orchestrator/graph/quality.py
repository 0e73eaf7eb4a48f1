"""The 0-100 quality score and the mission's quality gate, computed from the graph alone (pure).

Upstream documented a 30/25/20/15/10 score but never computed it, and enforced none of a
mission's success criteria. Here both are deterministic functions of ``knowledge-graph.json``
in O(claims + evidence + sources), and every failure or flag yields a specific
recommendation so the next iteration knows what to fix.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, TypedDict

from orchestrator.graph.contradiction_summary import Penalty, contradiction_penalty
from orchestrator.graph.contradictions import unresolved
from orchestrator.model.clock import iso_timestamp, utc_now
from orchestrator.model.layout import RESERVED_KEYS

#: Component name -> (weight, label). Weights add up to 100.
WEIGHTS: dict[str, tuple[int, str]] = {
    "source_quality": (30, "Source quality"),
    "citation_coverage": (25, "Citation coverage"),
    "completeness": (20, "Completeness"),
    "evidence_verification": (15, "Evidence verification"),
    "confidence": (10, "Confidence"),
}
BANDS = ((90, "excellent"), (80, "very good"), (70, "good"), (60, "acceptable"), (0, "needs work"))
#: Credibility of a source that is not marked peer reviewed, by type (out of 40).
TYPE_CREDIBILITY = {
    "journal-article": 30, "conference-paper": 30, "book": 28, "book-chapter": 25, "thesis": 25,
    "report": 22, "dataset": 22, "preprint": 18, "documentation": 18, "news-article": 12,
    "local-document": 10, "web-page": 8, "other": 5,
}
GAP_WEIGHT = {"high": 1.0, "medium": 0.5, "low": 0.25}
LIST_LIMIT = 5


def band(score: float) -> str:
    return next(name for floor, name in BANDS if score >= floor)


def source_score(source: Mapping[str, Any]) -> float:
    """0-100: credibility (40), the strongest identifier (30), bibliographic metadata (30)."""
    peer_reviewed = source.get("peer_reviewed") is True
    credibility = 40 if peer_reviewed else TYPE_CREDIBILITY.get(str(source.get("type")), 5)
    if source.get("doi"):
        identifier = 30
    elif source.get("arxiv_id"):
        identifier = 22
    elif source.get("url") or source.get("pdf_url"):
        identifier = 12
    else:
        identifier = 0
    metadata = 10 * sum(
        (bool(source.get("year") or source.get("published")), bool(source.get("authors")),
         bool(source.get("venue") or source.get("publisher")))
    )
    return float(credibility + identifier + metadata)


def _verified(evidence: Mapping[str, Any]) -> bool:
    return (evidence.get("verification") or {}).get("verified") is True


def effective_confidence(claim: Mapping[str, Any]) -> float | None:
    """The fact-checkers' assessed confidence (mean) when present, else the claim's own."""
    assessments = claim.get("assessments") or ()
    assessed = [a["confidence"] for a in assessments if isinstance(a.get("confidence"), int | float)]
    if assessed:
        return sum(assessed) / len(assessed)
    own = claim.get("confidence")
    return float(own) if isinstance(own, int | float) else None


def same_ref(a: str, b: str) -> bool:
    """Whether two ids name the same item: equal, or equal local parts when one is bare."""
    if a == b:
        return True
    if (":" in a) == (":" in b):
        return False
    return a.rpartition(":")[2] == b.rpartition(":")[2]


def plan_sub_questions(graph: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Sub-questions of every planning agent's namespace, with global ids."""
    found = []
    for agent, namespace in graph.items():
        if agent in RESERVED_KEYS or not isinstance(namespace, dict):
            continue
        for question in namespace.get("sub_questions") or ():
            if isinstance(question, dict) and isinstance(question.get("id"), str):
                found.append({**question, "id": f"{agent}:{question['id']}"})
    return found


def _ids(items: Iterable[str]) -> str:
    items = list(items)
    shown = ", ".join(items[:LIST_LIMIT])
    return shown + (f" and {len(items) - LIST_LIMIT} more" if len(items) > LIST_LIMIT else "")


@dataclass(frozen=True)
class Component:
    name: str
    label: str
    score: float
    weight: int
    detail: str

    @property
    def weighted(self) -> float:
        return self.score * self.weight / 100

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "label": self.label, "score": self.score, "weight": self.weight,
                "weighted": round(self.weighted, 2), "detail": self.detail}


@dataclass(frozen=True)
class QualityReport:
    score: float
    band: str
    components: tuple[Component, ...]
    counts: dict[str, int]
    mean_confidence: float | None
    computed_at: str
    uncited_claims: tuple[str, ...] = ()
    unverified_evidence: tuple[str, ...] = ()
    unanswered_sub_questions: tuple[dict[str, Any], ...] = ()
    open_contradictions: tuple[str, ...] = ()
    unverified_high_priority_claims: tuple[str, ...] = ()
    open_high_priority_gaps: tuple[str, ...] = ()
    sources_without_identifier: tuple[str, ...] = ()
    cited_sources: frozenset[str] = frozenset()
    penalties: tuple[Penalty, ...] = ()

    def component(self, name: str) -> Component:
        return next(c for c in self.components if c.name == name)

    def to_json(self, gate: GateResult | None = None) -> dict[str, Any]:
        """The ``quality.json`` document; ``components`` maps name -> score for quick display."""
        data: dict[str, Any] = {
            "score": self.score,
            "band": self.band,
            "components": {c.name: c.score for c in self.components},
            "breakdown": [c.to_dict() for c in self.components],
            "penalties": [p.to_dict() for p in self.penalties],
            "counts": dict(self.counts),
            "mean_confidence": self.mean_confidence,
            "flags": {
                "uncited_claims": list(self.uncited_claims),
                "unverified_evidence": list(self.unverified_evidence),
                "unanswered_sub_questions": [q["id"] for q in self.unanswered_sub_questions],
                "open_contradictions": list(self.open_contradictions),
                "unverified_high_priority_claims": list(self.unverified_high_priority_claims),
                "open_high_priority_gaps": list(self.open_high_priority_gaps),
                "sources_without_identifier": list(self.sources_without_identifier),
            },
            "computed_at": self.computed_at,
        }
        if gate is not None:
            data.update(gate.to_json())
        return data


class Check(TypedDict):
    criterion: str
    required: Any
    actual: Any
    passed: bool
    message: str


@dataclass(frozen=True)
class GateResult:
    passed: bool
    checks: list[Check] = field(default_factory=list)
    recommendations: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"passed": self.passed, "checks": [dict(c) for c in self.checks],
                "recommendations": list(self.recommendations)}


def _pct(part: int, whole: int) -> float:
    return round(100 * part / whole, 1) if whole else 0.0


def _component(name: str, score: float, detail: str) -> Component:
    weight, label = WEIGHTS[name]
    return Component(name, label, score, weight, detail)


@dataclass
class _Tally:
    """One pass over the claims collects everything the score and the flags need."""

    uncited: list[str] = field(default_factory=list)
    unverified: list[str] = field(default_factory=list)
    high_unverified: list[str] = field(default_factory=list)
    cited_sources: set[str] = field(default_factory=set)
    evidence: int = 0
    verified: int = 0
    confidences: list[float] = field(default_factory=list)
    answered: dict[str, list[str]] = field(default_factory=dict)

    def add(self, claim: Mapping[str, Any], canonical: Mapping[str, str]) -> None:
        evidence = [e for e in claim.get("evidence") or () if isinstance(e, dict)]
        resolving = {canonical[e["source_id"]] for e in evidence if e.get("source_id") in canonical}
        if not resolving:
            self.uncited.append(claim["id"])
        self.cited_sources |= resolving
        flags = [_verified(e) for e in evidence]
        self.evidence += len(flags)
        self.verified += sum(flags)
        self.unverified.extend(f"{claim['id']}/evidence/{i}" for i, ok in enumerate(flags) if not ok)
        statuses = {a.get("status") for a in claim.get("assessments") or ()}
        if claim.get("priority") == "high" and (not any(flags) or statuses & {"unverified", "contradicted"}):
            self.high_unverified.append(claim["id"])
        value = effective_confidence(claim)
        if value is not None:
            self.confidences.append(value)
        ref = claim.get("sub_question_id")
        if isinstance(ref, str):
            self.answered.setdefault(ref.rpartition(":")[2], []).append(ref)

    def answers(self, question: Mapping[str, Any]) -> bool:
        qid = str(question.get("id"))
        return any(same_ref(qid, ref) for ref in self.answered.get(qid.rpartition(":")[2], ()))


def score_graph(
    graph: Mapping[str, Any],
    sub_questions: list[dict[str, Any]] | None = None,
    *,
    now: datetime | None = None,
) -> QualityReport:
    """Score the graph; ``sub_questions`` default to the planners' ones found in the graph."""
    sources = [s for s in graph.get("sources") or () if isinstance(s, dict)]
    claims = [c for c in graph.get("claims") or () if isinstance(c, dict)]
    canonical = {alias: s["id"] for s in sources for alias in (s["id"], *(s.get("aliases") or ()))}
    peer_reviewed = {s["id"] for s in sources if s.get("peer_reviewed") is True}
    questions = plan_sub_questions(graph) if sub_questions is None else list(sub_questions)
    gaps = [g for g in graph.get("gaps") or () if isinstance(g, dict)]
    contradictions = [c for c in graph.get("contradictions") or () if isinstance(c, dict)]

    tally = _Tally()
    for claim in claims:
        tally.add(claim, canonical)
    unanswered = [q for q in questions if not tally.answers(q)]
    cited = len(claims) - len(tally.uncited)
    mean = sum(tally.confidences) / len(tally.confidences) if tally.confidences else None
    components = (
        _source_component(sources),
        _component("citation_coverage", _pct(cited, len(claims)),
                   f"{cited} of {len(claims)} claims have evidence resolving to a source"),
        _completeness(questions, unanswered, claims, gaps),
        _component("evidence_verification", _pct(tally.verified, tally.evidence),
                   f"{tally.verified} of {tally.evidence} evidence snippets verified against source texts"),
        _component("confidence", round(100 * mean, 1) if mean is not None else 0.0,
                   f"mean effective confidence of {len(tally.confidences)} claims "
                   "(the fact-checker's where assessed)"),
    )
    open_contradictions = tuple(str(c.get("id")) for c in unresolved(contradictions))
    penalties = (contradiction_penalty(open_contradictions),)
    score = round(max(0.0, sum(c.weighted for c in components) - sum(p.points for p in penalties)), 1)
    high_gaps = tuple(str(g.get("id")) for g in gaps if g.get("priority") == "high")
    counts = {
        "sources": len(sources),
        "cited_sources": len(tally.cited_sources),
        "peer_reviewed_sources": len(peer_reviewed),
        "cited_peer_reviewed_sources": len(tally.cited_sources & peer_reviewed),
        "claims": len(claims),
        "cited_claims": cited,
        "evidence_items": tally.evidence,
        "verified_evidence": tally.verified,
        "sub_questions": len(questions),
        "answered_sub_questions": len(questions) - len(unanswered),
        "open_contradictions": len(open_contradictions),
        "unverified_high_priority_claims": len(tally.high_unverified),
        "open_high_priority_gaps": len(high_gaps),
    }
    return QualityReport(
        score=score,
        band=band(score),
        components=components,
        counts=counts,
        mean_confidence=round(mean, 4) if mean is not None else None,
        computed_at=iso_timestamp(now or utc_now()),
        uncited_claims=tuple(tally.uncited),
        unverified_evidence=tuple(tally.unverified),
        unanswered_sub_questions=tuple(unanswered),
        open_contradictions=open_contradictions,
        unverified_high_priority_claims=tuple(tally.high_unverified),
        open_high_priority_gaps=high_gaps,
        cited_sources=frozenset(tally.cited_sources),
        penalties=penalties,
        sources_without_identifier=tuple(
            s["id"] for s in sources if not (s.get("doi") or s.get("arxiv_id") or s.get("url"))
        ),
    )


def _source_component(sources: list[dict[str, Any]]) -> Component:
    if not sources:
        return _component("source_quality", 0.0, "no sources")
    mean = sum(source_score(s) for s in sources) / len(sources)
    return _component("source_quality", round(mean, 1),
                      f"mean over {len(sources)} sources of peer review or type (40), "
                      "DOI/arXiv/URL (30), year, authors and venue (30)")


def _completeness(questions: list[dict[str, Any]], unanswered: list[dict[str, Any]],
                  claims: list[dict[str, Any]], gaps: list[dict[str, Any]]) -> Component:
    if questions:
        answered = len(questions) - len(unanswered)
        return _component("completeness", _pct(answered, len(questions)),
                          f"{answered} of {len(questions)} sub-questions have at least one claim")
    # Without a plan there is nothing to check against: weigh the claims against the
    # gaps the agents themselves reported, by priority.
    open_gaps = sum(GAP_WEIGHT.get(str(g.get("priority")), 0.5) for g in gaps)
    value = round(100 * len(claims) / (len(claims) + open_gaps), 1) if claims else 0.0
    return _component("completeness", value,
                      f"fallback, no sub-questions: {len(claims)} claims against {open_gaps:g} "
                      "priority-weighted gaps (high 1, medium 0.5, low 0.25)")


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


def gate(report: QualityReport, graph: Mapping[str, Any], criteria: Mapping[str, Any]) -> GateResult:
    """Check each of the mission's success criteria present in ``criteria`` and recommend fixes.

    The graph is read to point at sources that are present but not yet cited. ``required_sections``
    is not checked here: the renderer always emits every required section.
    """
    counts = report.counts
    g = _Gate()
    sources = [s for s in graph.get("sources") or () if isinstance(s, dict)]
    idle = [s for s in sources if s.get("id") not in report.cited_sources]
    unused = _ids(_title(s) for s in idle)
    unused_reviewed = _ids(_title(s) for s in idle if s.get("peer_reviewed") is True)
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
                + (f"; already in the graph but uncited: {unused}." if unused else "."))
    if "min_peer_reviewed_sources" in criteria:
        need, have = criteria["min_peer_reviewed_sources"], counts["cited_peer_reviewed_sources"]
        g.check("min_peer_reviewed_sources", need, have, have >= need,
                f"{have} cited sources are peer reviewed; at least {need} required",
                f"Add evidence from at least {need - have} more peer-reviewed sources (papers with "
                "peer_reviewed: true)"
                + (f"; already in the graph but uncited: {unused_reviewed}." if unused_reviewed else "."))
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
    skip_uncited = any(c["criterion"] == "all_claims_cited" and not c["passed"] for c in g.checks)
    g.recommendations.extend(_flag_recommendations(report, graph, skip_uncited=skip_uncited))
    return GateResult(passed=all(c["passed"] for c in g.checks), checks=g.checks,
                      recommendations=g.recommendations)


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
