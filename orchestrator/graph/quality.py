"""The 0-100 quality score, computed from the graph alone (pure); the gate is in quality_gate.py.

Upstream documented a 30/25/20/15/10 score but never computed it, and enforced none of a
mission's success criteria. Here both are deterministic functions of ``knowledge-graph.json``
in O(claims + evidence + sources), and every failure or flag yields a specific
recommendation so the next iteration knows what to fix.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, TypedDict

from orchestrator.contradictions import unresolved
from orchestrator.contradictions.summary import Penalty, contradiction_penalty
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
    unverified_sub_questions: tuple[dict[str, Any], ...] = ()  # no claim with verified evidence answers them
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
    verified_answered: dict[str, list[str]] = field(default_factory=dict)  # by a claim with verified evidence

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
            if any(flags):
                self.verified_answered.setdefault(ref.rpartition(":")[2], []).append(ref)

    def answers(self, question: Mapping[str, Any], *, verified: bool = False) -> bool:
        qid = str(question.get("id"))
        refs = (self.verified_answered if verified else self.answered).get(qid.rpartition(":")[2], ())
        return any(same_ref(qid, ref) for ref in refs)


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
    unverified = tuple(q for q in questions if not tally.answers(q, verified=True))
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
        "verified_answered_sub_questions": len(questions) - len(unverified),
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
        unverified_sub_questions=unverified,
        open_contradictions=open_contradictions,
        unverified_high_priority_claims=tuple(tally.high_unverified),
        open_high_priority_gaps=high_gaps,
        cited_sources=frozenset(tally.cited_sources),
        penalties=penalties,
        sources_without_identifier=tuple(  # a user's own note has no DOI to add
            s["id"] for s in sources
            if not (s.get("doi") or s.get("arxiv_id") or s.get("url")) and s.get("type") != "local-document"),
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
