"""SHACL shapes, the refcounted union graph and violation → Problem mapping (orchestrator/shacl.py)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from rdflib import BNode, Graph, Literal, URIRef
from rdflib.namespace import OWL, RDF, RDFS

from orchestrator.model.layout import resource_dir
from orchestrator.model.problems import errors
from orchestrator.rdf.convert import AgentGraph, Origin, contribution_to_graph
from orchestrator.rdf.shacl import CCSH, SH, parse_turtle, shapes
from orchestrator.rdf.state import RdfState
from orchestrator.rdf.vocabulary import CC

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning:rdflib")

def _without_bnodes(graph: Graph) -> set[tuple[Any, ...]]:
    return {(s, p, o, o.datatype, o.language) if isinstance(o, Literal) else (s, p, o) for s, p, o in graph
            if not isinstance(s, BNode) and not isinstance(o, BNode)}


@pytest.mark.parametrize("name", ["shapes.ttl", "cconductor.ttl", "memory.ttl"])
def test_turtle_parsed_by_pyoxigraph_is_the_graph_rdflib_parses(name: str) -> None:
    from rdflib.compare import isomorphic

    path = resource_dir("ontology") / name
    ours, reference = parse_turtle(path), Graph().parse(path, format="turtle")
    assert len(ours) == len(reference) > 10
    assert isomorphic(ours, reference)  # blank-node structure (sh:property [ ... ], lists) included
    # isomorphic() compares literals by value: check lexical form, datatype and language as well
    assert _without_bnodes(ours) == _without_bnodes(reference)
    assert {(str(o), o.datatype, o.language) for o in ours.objects() if isinstance(o, Literal)} == \
        {(str(o), o.datatype, o.language) for o in reference.objects() if isinstance(o, Literal)}


PLAN, ACA, WEB, DOC = "planner", "academic-researcher", "web-researcher", "pdf-analyzer"
MERGED = "2026-11-22T09:30:00Z"
Session = dict[str, dict[str, Any]]


def _prov(agent: str, file: str, pointer: str) -> dict[str, Any]:
    return {"agent": agent, "file": f"artifacts/{agent}/{file}", "pointer": pointer,
            "artifact_sha256": "a" * 64, "attempt": 1, "merged_at": MERGED}


def _contribution(agent: str, **items: list[dict[str, Any]]) -> dict[str, Any]:
    files = {"sources": "sources.json", "claims": "claims.json", "entities": "entities.json",
             "relationships": "relationships.json", "gaps": "gaps.json",
             "contradictions": "contradictions.json",
             "key_findings": "key-findings.json", "sub_questions": "plan.json",
             "confidence_scores": "confidence-scores.json", "coverage": "coverage.json",
             "sections": "sections.json", "figures": "figures.json", "tables": "tables.json",
             "captions": "captions.json"}
    for key, values in items.items():
        for i, item in enumerate(values):
            item["provenance"] = _prov(agent, files[key], f"/{key}/{i}")
    return {"agent": agent, "attempt": 1, "merged_at": MERGED, "artifact_sha256": "b" * 64,
            "files": {files[k]: "c" * 64 for k in items}, "items": items}


def _evidence(source: str, snippet: str, verified: bool = True) -> dict[str, Any]:
    closest = snippet if verified else "dispensing with recurrence and convolutions"
    return {"source_id": source, "source_ref": source, "snippet": snippet, "locator": {"page": 3},
            "verification": {"verified": verified, "score": 100.0 if verified else 62.5,
                             "matched_text": closest, "page": 3}}


def session() -> Session:
    """Three agents whose artifacts satisfy every shape (no errors, no warnings)."""
    return {
        PLAN: _contribution(PLAN, sub_questions=[
            {"id": f"{PLAN}:Q1", "question": "How do transformers work?", "priority": "high"}]),
        ACA: _contribution(
            ACA,
            sources=[{"id": f"{ACA}:S1", "type": "journal-article", "title": "Attention Is All You Need",
                      "year": 2017, "doi": "10.5555/3295222.3295349", "content_sha256": "e" * 64,
                      "citation_count": 100, "published": "2017-06-12"}],
            entities=[{"id": f"{ACA}:E1", "name": "Transformer"}],
            claims=[{"id": f"{ACA}:C1", "statement": "Transformers use attention only.", "confidence": 0.9,
                     "priority": "high", "entity_ids": [f"{ACA}:E1"], "sub_question_id": f"{PLAN}:Q1",
                     "evidence": [_evidence(f"{ACA}:S1", "based solely on attention mechanisms")]},
                    {"id": f"{ACA}:C2", "statement": "Recurrence is still needed.", "confidence": 0.2,
                     "priority": "medium",
                     "evidence": [_evidence(f"{ACA}:S1", "recurrent models", verified=False)]}],
            relationships=[{"id": f"{ACA}:R1", "subject": f"{ACA}:E1", "predicate": "described-by",
                            "object": f"{ACA}:C1", "confidence": 0.8, "claim_ids": [f"{ACA}:C1"]}],
            gaps=[{"id": f"{ACA}:G1", "description": "Low-resource languages", "priority": "low",
                   "sub_question_id": f"{PLAN}:Q1"}],
            contradictions=[{"id": f"{ACA}:X1", "claim_ids": [f"{ACA}:C1", f"{ACA}:C2"],
                             "description": "Attention-only vs recurrence", "status": "open"}],
            key_findings=[{"id": f"{ACA}:K1", "statement": "Attention suffices.", "claim_ids": [f"{ACA}:C1"],
                           "importance": "high"}],
            confidence_scores=[{"id": f"{ACA}:CS1", "claim_id": f"{ACA}:C1", "confidence": 0.9,
                                "status": "single-source", "supporting_source_ids": [f"{ACA}:S1"]}],
            coverage=[{"id": f"{ACA}:CV1", "sub_question_id": f"{PLAN}:Q1", "status": "covered",
                       "claim_ids": [f"{ACA}:C1"]}],
        ),
        DOC: _contribution(
            DOC,
            sections=[{"id": f"{DOC}:SEC1", "source_id": f"{ACA}:S1", "title": "3 Model Architecture", "page": 2}],
            figures=[{"id": f"{DOC}:F1", "source_id": f"{ACA}:S1", "label": "Figure 1", "page": 3,
                      "image_sha256": "d" * 64, "section_id": f"{DOC}:SEC1", "bbox": [10, 20, 300, 400]}],
            tables=[{"id": f"{DOC}:T1", "source_id": f"{ACA}:S1", "label": "Table 1", "page": 6,
                     "data_sha256": "f" * 64, "columns": ["Model", "BLEU"], "row_count": 2}],
            captions=[{"id": f"{DOC}:CAP1", "source_id": f"{ACA}:S1", "page": 3, "describes": f"{DOC}:F1",
                       "describes_kind": "figure", "text": "Figure 1: The Transformer - model architecture."},
                      {"id": f"{DOC}:CAP2", "source_id": f"{ACA}:S1", "page": 6, "describes": f"{DOC}:T1",
                       "describes_kind": "table", "text": "Table 1: BLEU scores."}],
        ),
        WEB: _contribution(WEB, claims=[
            {"id": f"{WEB}:C1", "statement": "Transformers replaced RNNs.", "confidence": 0.7,
             "priority": "high",
             "evidence": [_evidence(f"{ACA}:S1", "dispensing with recurrence entirely")]}]),
    }


def build(s: Session) -> tuple[RdfState, dict[str, AgentGraph]]:
    claims = {c["id"] for contribution in s.values() for c in contribution["items"].get("claims", [])}

    def kind_of(gid: str) -> str | None:
        return "claim" if gid in claims else None

    state = RdfState()
    graphs = {agent: contribution_to_graph("s-1", c, kind_of) for agent, c in s.items()}
    for g in graphs.values():
        state.replace_agent(g)
    return state, graphs


def add_caption(s: Session, describes: str, kind: str) -> None:
    """A third caption (captions.json /captions/2) describing ``describes``."""
    s[DOC]["items"]["captions"].append({
        "id": f"{DOC}:CAP3", "source_id": f"{ACA}:S1", "page": 4, "describes": describes, "describes_kind": kind,
        "text": "Figure 2: Attention heads.", "provenance": _prov(DOC, "captions.json", "/captions/2")})


def items(s: Session, agent: str, key: str, index: int = 0) -> dict[str, Any]:
    item: dict[str, Any] = s[agent]["items"][key][index]
    return item


def test_the_conforming_session_has_no_problems_at_all() -> None:
    state, _ = build(session())
    assert state.validate_full() == []
    for agent in (PLAN, ACA, WEB):
        assert state.validate_agent(agent) == []


Mutation = Callable[[Session], object]
# (mutation, agent, file, pointer, rule, severity, message, a field named in the hint, shape)
CASES: list[tuple[str, Mutation, str, str, str, str, str, str, str, str]] = [
    ("source-title", lambda s: items(s, ACA, "sources").pop("title"), ACA, "sources.json", "/sources/0",
     "MinCount", "error", f"Source '{ACA}:S1' needs exactly one non-empty title", "'title'",
     "SourceShape-title"),
    ("source-type", lambda s: items(s, ACA, "sources").update(type="blog"), ACA, "sources.json",
     "/sources/0/type", "In", "error", f"Source '{ACA}:S1' needs exactly one known type, found 'blog'",
     "'type'", "SourceShape-type"),
    ("source-year", lambda s: items(s, ACA, "sources").update(year=3000), ACA, "sources.json",
     "/sources/0/year", "MaxInclusive", "error",
     f"Source '{ACA}:S1' has year 3000, which is not a plausible publication year", "'year'",
     "SourceShape-year"),
    ("source-doi", lambda s: items(s, ACA, "sources").update(doi="https://doi.org/10.1/x"), ACA,
     "sources.json", "/sources/0/doi", "Pattern", "error",
     f"Source '{ACA}:S1' has DOI 'https://doi.org/10.1/x', which is not a bare DOI", "'doi'",
     "SourceShape-doi"),
    ("source-sha", lambda s: items(s, ACA, "sources").update(content_sha256="ABC"), ACA, "sources.json",
     "/sources/0/content_sha256", "Pattern", "error",
     f"Source '{ACA}:S1' has content_sha256 'ABC', which is not 64 lowercase hex digits",
     "'content_sha256'", "SourceShape-contentSha256"),
    ("source-citations", lambda s: items(s, ACA, "sources").update(citation_count=-1), ACA, "sources.json",
     "/sources/0/citation_count", "MinInclusive", "error",
     f"Source '{ACA}:S1' has citation_count -1, which is not a non-negative integer",
     "'citation_count'", "SourceShape-citationCount"),
    ("source-published", lambda s: items(s, ACA, "sources").update(published="2017-02-30"), ACA,
     "sources.json", "/sources/0/published", "Datatype", "error",
     f"Source '{ACA}:S1' has published date '2017-02-30', which is not a date", "'published'",
     "SourceShape-published"),
    ("source-locator", lambda s: [items(s, ACA, "sources").pop(k) for k in ("doi", "content_sha256")], ACA,
     "sources.json", "/sources/0", "MinCount", "warning",
     f"Source '{ACA}:S1' cannot be located or checked again", "'arxiv_id'", "SourceShape-locator"),
    ("claim-statement", lambda s: items(s, ACA, "claims").update(statement="  "), ACA, "claims.json",
     "/claims/0/statement", "Pattern", "error",
     f"Claim '{ACA}:C1' needs exactly one non-empty statement", "'statement'",
     "ClaimShape-statement"),
    ("claim-confidence", lambda s: items(s, ACA, "claims").update(confidence=1.5), ACA, "claims.json",
     "/claims/0/confidence", "MaxInclusive", "error",
     f"Claim '{ACA}:C1' needs one confidence between 0 and 1, found 1.5", "'confidence'",
     "ClaimShape-confidence"),
    ("claim-priority", lambda s: items(s, ACA, "claims").update(priority="urgent"), ACA, "claims.json",
     "/claims/0/priority", "In", "error",
     f"Claim '{ACA}:C1' needs one priority of high, medium or low, found 'urgent'", "'priority'",
     "ClaimShape-priority"),
    ("claim-entity", lambda s: items(s, ACA, "claims")["entity_ids"].append(f"{ACA}:E9"), ACA, "claims.json",
     "/claims/0/entity_ids/1", "Class", "error",
     f"Claim '{ACA}:C1' refers to '{ACA}:E9', which is not a known entity",
     "'entity_ids'", "ClaimShape-entity"),
    ("claim-sub-question", lambda s: items(s, ACA, "claims").update(sub_question_id=f"{PLAN}:Q9"), ACA,
     "claims.json", "/claims/0/sub_question_id", "Class", "warning",
     f"Claim '{ACA}:C1' names sub-question '{PLAN}:Q9', which is not in any plan.json",
     "'sub_question_id'", "ClaimShape-subQuestion"),
    ("claim-no-evidence", lambda s: items(s, ACA, "claims", 1).update(evidence=[]), ACA, "claims.json",
     "/claims/1", "Or", "warning", f"Claim '{ACA}:C2' cites no evidence", "'evidence'",
     "ClaimEvidenceShape"),
    ("claim-unbound", lambda s: items(s, ACA, "claims").update(
        evidence=[_evidence(f"{ACA}:S1", "we replace recurrence", verified=False)]), ACA, "claims.json",
     "/claims/0", "QualifiedMinCount", "error",
     f"High-priority claim '{ACA}:C1' has no evidence verified against a stored source text: "
     f"evidence 0 quotes \"we replace recurrence\" from source '{ACA}:S1', but the closest passage "
     "in that source is \"dispensing with recurrence and convolutions\" (match score 62.5, page 3)",
     "'priority'", "HighPriorityClaimShape-verifiedEvidence"),
    ("evidence-source", lambda s: items(s, ACA, "claims")["evidence"][0].update(source_id=f"{ACA}:S9"), ACA,
     "claims.json", "/claims/0/evidence/0/source_id", "Class", "error",
     f"Evidence '{ACA}:C1/evidence/0' must cite exactly one source that exists, "
     f"found '{ACA}:S9'", "'source_id'", "EvidenceShape-source"),
    ("evidence-no-source", lambda s: items(s, ACA, "claims")["evidence"][0].pop("source_id"), ACA,
     "claims.json", "/claims/0/evidence/0", "MinCount", "error",
     f"Evidence '{ACA}:C1/evidence/0' must cite exactly one source that exists, found (none)",
     "'source_id'", "EvidenceShape-source"),
    ("evidence-snippet", lambda s: items(s, ACA, "claims")["evidence"][0].update(snippet="x" * 2001), ACA,
     "claims.json", "/claims/0/evidence/0/snippet", "MaxLength", "error",
     f"Evidence '{ACA}:C1/evidence/0' needs exactly one non-empty snippet of at most 2000 "
     "characters", "'snippet'", "EvidenceShape-snippet"),
    ("evidence-page", lambda s: items(s, ACA, "claims")["evidence"][0]["locator"].update(page=0), ACA,
     "claims.json", "/claims/0/evidence/0/locator/page", "MinInclusive", "error",
     f"Evidence '{ACA}:C1/evidence/0' has page 0, but pages are numbered from 1", "'locator.page'",
     "EvidenceShape-page"),
    ("evidence-char-start", lambda s: items(s, ACA, "claims")["evidence"][0]["locator"].update(
        char_start=50, char_end=10), ACA, "claims.json", "/claims/0/evidence/0/locator/char_start",
     "LessThanOrEquals", "error",
     f"Evidence '{ACA}:C1/evidence/0' has char_start 50, which is negative or after char_end",
     "'locator.char_start'", "EvidenceShape-charStart"),
    ("evidence-char-end", lambda s: items(s, ACA, "claims")["evidence"][0]["locator"].update(char_end=-1),
     ACA, "claims.json", "/claims/0/evidence/0/locator/char_end", "MinInclusive", "error",
     f"Evidence '{ACA}:C1/evidence/0' has char_end -1, which is not a non-negative integer",
     "'locator.char_end'", "EvidenceShape-charEnd"),
    ("entity-name", lambda s: items(s, ACA, "entities").update(name=""), ACA, "entities.json",
     "/entities/0/name", "Pattern", "error", f"Entity '{ACA}:E1' needs exactly one non-empty name",
     "'name'", "EntityShape-name"),
    ("relationship-subject", lambda s: items(s, ACA, "relationships").update(subject=f"{ACA}:E9"), ACA,
     "relationships.json", "/relationships/0/subject", "Or", "error",
     f"Relationship '{ACA}:R1' needs one subject that is a known entity or claim, "
     f"found '{ACA}:E9'", "'subject'", "RelationshipShape-subject"),
    ("relationship-object", lambda s: items(s, ACA, "relationships").pop("object"), ACA, "relationships.json",
     "/relationships/0", "MinCount", "error",
     f"Relationship '{ACA}:R1' needs one object that is a known entity or claim, found (none)",
     "'object'", "RelationshipShape-object"),
    ("relationship-predicate", lambda s: items(s, ACA, "relationships").update(predicate=""), ACA,
     "relationships.json", "/relationships/0/predicate", "Pattern", "error",
     f"Relationship '{ACA}:R1' needs exactly one non-empty predicate", "'predicate'",
     "RelationshipShape-predicate"),
    ("relationship-confidence", lambda s: items(s, ACA, "relationships").update(confidence=2), ACA,
     "relationships.json", "/relationships/0/confidence", "MaxInclusive", "error",
     f"Relationship '{ACA}:R1' has confidence 2, which is not between 0 and 1", "'confidence'",
     "RelationshipShape-confidence"),
    ("relationship-claims", lambda s: items(s, ACA, "relationships").update(claim_ids=[f"{ACA}:C9"]), ACA,
     "relationships.json", "/relationships/0/claim_ids/0", "Class", "error",
     f"Relationship '{ACA}:R1' refers to '{ACA}:C9', which is not a known claim",
     "'claim_ids'", "RelationshipShape-claims"),
    ("gap-description", lambda s: items(s, ACA, "gaps").pop("description"), ACA, "gaps.json", "/gaps/0",
     "MinCount", "error", f"Gap '{ACA}:G1' needs exactly one non-empty description",
     "'description'", "GapShape-description"),
    ("gap-priority", lambda s: items(s, ACA, "gaps").update(priority="urgent"), ACA, "gaps.json",
     "/gaps/0/priority", "In", "error",
     f"Gap '{ACA}:G1' needs one priority of high, medium or low, found 'urgent'", "'priority'",
     "GapShape-priority"),
    ("gap-sub-question", lambda s: items(s, ACA, "gaps").update(sub_question_id="Q1"), ACA, "gaps.json",
     "/gaps/0/sub_question_id", "Class", "warning",
     f"Gap '{ACA}:G1' names sub-question '{ACA}:Q1', which is not in any plan.json",
     "'sub_question_id'", "GapShape-subQuestion"),
    ("contradiction-count", lambda s: items(s, ACA, "contradictions").update(claim_ids=[f"{ACA}:C1"] * 2),
     ACA, "contradictions.json", "/contradictions/0/claim_ids", "MinCount", "error",
     f"Contradiction '{ACA}:X1' names fewer than two distinct claims", "'claim_ids'",
     "ContradictionShape-claimCount"),
    ("contradiction-claims", lambda s: items(s, ACA, "contradictions")["claim_ids"].append(f"{ACA}:C9"), ACA,
     "contradictions.json", "/contradictions/0/claim_ids/2", "Class", "error",
     f"Contradiction '{ACA}:X1' refers to '{ACA}:C9', which is not a known claim",
     "'claim_ids'", "ContradictionShape-claims"),
    ("contradiction-description", lambda s: items(s, ACA, "contradictions").update(description=" "), ACA,
     "contradictions.json", "/contradictions/0/description", "Pattern", "error",
     f"Contradiction '{ACA}:X1' needs exactly one non-empty description", "'description'",
     "ContradictionShape-description"),
    ("contradiction-status", lambda s: items(s, ACA, "contradictions").update(status="pending"), ACA,
     "contradictions.json", "/contradictions/0/status", "In", "error",
     f"Contradiction '{ACA}:X1' needs a status of open or resolved, found 'pending'", "'status'",
     "ContradictionShape-status"),
    ("finding-count", lambda s: items(s, ACA, "key_findings").update(claim_ids=[]), ACA, "key-findings.json",
     "/key_findings/0/claim_ids", "MinCount", "error",
     f"Key finding '{ACA}:K1' is not supported by any claim", "'claim_ids'",
     "KeyFindingShape-claimCount"),
    ("finding-claims", lambda s: items(s, ACA, "key_findings").update(claim_ids=[f"{WEB}:C9"]), ACA,
     "key-findings.json", "/key_findings/0/claim_ids/0", "Class", "error",
     f"Key finding '{ACA}:K1' refers to '{WEB}:C9', which is not a known claim",
     "'claim_ids'", "KeyFindingShape-claims"),
    ("finding-statement", lambda s: items(s, ACA, "key_findings").pop("statement"), ACA, "key-findings.json",
     "/key_findings/0", "MinCount", "error",
     f"Key finding '{ACA}:K1' needs exactly one non-empty statement", "'statement'",
     "KeyFindingShape-statement"),
    ("finding-importance", lambda s: items(s, ACA, "key_findings").update(importance="huge"), ACA,
     "key-findings.json", "/key_findings/0/importance", "In", "error",
     f"Key finding '{ACA}:K1' has importance 'huge', which is not high, medium or low",
     "'importance'", "KeyFindingShape-importance"),
    ("sub-question-question", lambda s: items(s, PLAN, "sub_questions").update(question=""), PLAN,
     "plan.json", "/sub_questions/0/question", "Pattern", "error",
     f"Sub-question '{PLAN}:Q1' needs exactly one non-empty question", "'question'",
     "SubQuestionShape-question"),
    ("sub-question-priority", lambda s: items(s, PLAN, "sub_questions").update(priority=1), PLAN, "plan.json",
     "/sub_questions/0/priority", "In", "error",
     f"Sub-question '{PLAN}:Q1' needs one priority of high, medium or low, found 1", "'priority'",
     "SubQuestionShape-priority"),
    ("score-claim", lambda s: items(s, ACA, "confidence_scores").update(claim_id=f"{ACA}:C9"), ACA,
     "confidence-scores.json", "/confidence_scores/0/claim_id", "Class", "error",
     f"Confidence score '{ACA}:CS1' must be about exactly one known claim, "
     f"found '{ACA}:C9'", "'claim_id'", "ConfidenceAssessmentShape-claim"),
    ("score-confidence", lambda s: items(s, ACA, "confidence_scores").update(confidence=-0.1), ACA,
     "confidence-scores.json", "/confidence_scores/0/confidence", "MinInclusive", "error",
     f"Confidence score '{ACA}:CS1' needs one confidence between 0 and 1, found -0.1",
     "'confidence'", "ConfidenceAssessmentShape-confidence"),
    ("score-status", lambda s: items(s, ACA, "confidence_scores").update(status="maybe"), ACA,
     "confidence-scores.json", "/confidence_scores/0/status", "In", "error",
     f"Confidence score '{ACA}:CS1' needs a known status, found 'maybe'", "'status'",
     "ConfidenceAssessmentShape-status"),
    ("score-sources",
     lambda s: items(s, ACA, "confidence_scores").update(supporting_source_ids=[f"{ACA}:S9"]), ACA,
     "confidence-scores.json", "/confidence_scores/0/supporting_source_ids/0", "Class", "error",
     f"Confidence score '{ACA}:CS1' refers to '{ACA}:S9', which is not a known source",
     "'supporting_source_ids'", "ConfidenceAssessmentShape-sources"),
    ("coverage-sub-question", lambda s: items(s, ACA, "coverage").pop("sub_question_id"), ACA,
     "coverage.json", "/coverage/0", "MinCount", "error",
     f"Coverage entry '{ACA}:CV1' must name exactly one sub-question", "'sub_question_id'",
     "CoverageAssessmentShape-subQuestion"),
    ("coverage-known-sub-question", lambda s: items(s, ACA, "coverage").update(sub_question_id=f"{PLAN}:Q2"),
     ACA, "coverage.json", "/coverage/0/sub_question_id", "Class", "warning",
     f"Coverage entry '{ACA}:CV1' names sub-question '{PLAN}:Q2', which is not in any plan.json",
     "'sub_question_id'", "CoverageAssessmentShape-knownSubQuestion"),
    ("coverage-status", lambda s: items(s, ACA, "coverage").update(status="done"), ACA, "coverage.json",
     "/coverage/0/status", "In", "error",
     f"Coverage entry '{ACA}:CV1' needs a status of covered, partial or missing, found 'done'",
     "'status'", "CoverageAssessmentShape-status"),
    ("caption-describes-claim", lambda s: add_caption(s, f"{ACA}:C1", "claim"),
     DOC, "captions.json", "/captions/2/describes", "Or", "error",
     f"A caption must describe exactly one Figure or Table, and caption '{DOC}:CAP3' describes '{ACA}:C1'",
     "'describes'", "CaptionShape-describes"),
    ("caption-text", lambda s: items(s, DOC, "captions").update(text=" "), DOC, "captions.json",
     "/captions/0/text", "Pattern", "error", f"Caption '{DOC}:CAP1' needs exactly one non-empty text", "'text'",
     "CaptionShape-text"),
    ("caption-source", lambda s: items(s, DOC, "captions").update(source_id=f"{ACA}:S9"), DOC, "captions.json",
     "/captions/0/source_id", "Class", "error",
     f"Caption '{DOC}:CAP1' must belong to exactly one source, found '{ACA}:S9'", "'source_id'",
     "CaptionShape-source"),
    ("caption-page", lambda s: items(s, DOC, "captions").update(page=0), DOC, "captions.json",
     "/captions/0/page", "MinInclusive", "error", f"Caption '{DOC}:CAP1' needs one page counted from 1, found 0",
     "'page'", "CaptionShape-page"),
    ("figure-label", lambda s: items(s, DOC, "figures").pop("label"), DOC, "figures.json", "/figures/0",
     "MinCount", "error", f"Figure '{DOC}:F1' needs exactly one non-empty label", "'label'", "FigureShape-label"),
    ("figure-source", lambda s: items(s, DOC, "figures").update(source_id=f"{ACA}:C1"), DOC, "figures.json",
     "/figures/0/source_id", "Class", "error",
     f"Figure '{DOC}:F1' must belong to exactly one source, found '{ACA}:C1'", "'source_id'", "FigureShape-source"),
    ("figure-page", lambda s: items(s, DOC, "figures").update(page=-2), DOC, "figures.json", "/figures/0/page",
     "MinInclusive", "error", f"Figure '{DOC}:F1' needs one page counted from 1, found -2", "'page'",
     "FigureShape-page"),
    ("figure-image", lambda s: items(s, DOC, "figures").update(image_sha256="beef"), DOC, "figures.json",
     "/figures/0/image_sha256", "Pattern", "error",
     f"Figure '{DOC}:F1' has image_sha256 'beef', which is not 64 lowercase hex digits", "'image_sha256'",
     "FigureShape-image"),
    ("figure-two-captions", lambda s: add_caption(s, f"{DOC}:F1", "figure"),
     DOC, "figures.json", "/figures/0", "MaxCount", "error",
     f"Figure '{DOC}:F1' is described by more than one caption", "'describes'", "FigureShape-oneCaption"),
    ("figure-no-caption", lambda s: s[DOC]["items"]["captions"].pop(0),
     DOC, "figures.json", "/figures/0", "MinCount", "warning", f"Figure '{DOC}:F1' has no caption",
     "captions.json", "FigureShape-captioned"),
    ("table-label", lambda s: items(s, DOC, "tables").update(label=""), DOC, "tables.json", "/tables/0/label",
     "Pattern", "error", f"Table '{DOC}:T1' needs exactly one non-empty label", "'label'", "TableShape-label"),
    ("table-source", lambda s: items(s, DOC, "tables").update(source_id=f"{DOC}:F1"), DOC, "tables.json",
     "/tables/0/source_id", "Class", "error",
     f"Table '{DOC}:T1' must belong to exactly one source, found '{DOC}:F1'", "'source_id'", "TableShape-source"),
    ("table-page", lambda s: items(s, DOC, "tables").pop("page"), DOC, "tables.json", "/tables/0", "MinCount",
     "error", f"Table '{DOC}:T1' needs one page counted from 1, found (none)", "'page'", "TableShape-page"),
    ("table-data", lambda s: items(s, DOC, "tables").update(data_sha256="F" * 64), DOC, "tables.json",
     "/tables/0/data_sha256", "Pattern", "error",
     f"Table '{DOC}:T1' has data_sha256 '{'F' * 64}', which is not 64 lowercase hex digits", "'data_sha256'",
     "TableShape-data"),
    ("table-two-captions", lambda s: add_caption(s, f"{DOC}:T1", "table"),
     DOC, "tables.json", "/tables/0", "MaxCount", "error",
     f"Table '{DOC}:T1' is described by more than one caption", "'describes'", "TableShape-oneCaption"),
    ("table-no-caption", lambda s: s[DOC]["items"]["captions"].pop(1),
     DOC, "tables.json", "/tables/0", "MinCount", "warning", f"Table '{DOC}:T1' has no caption",
     "captions.json", "TableShape-captioned"),
    ("section-title", lambda s: items(s, DOC, "sections").update(title=" "), DOC, "sections.json",
     "/sections/0/title", "Pattern", "error", f"Section '{DOC}:SEC1' needs exactly one non-empty title", "'title'",
     "SectionShape-title"),
    ("section-source", lambda s: items(s, DOC, "sections").pop("source_id"), DOC, "sections.json", "/sections/0",
     "MinCount", "error", f"Section '{DOC}:SEC1' must belong to exactly one source, found (none)", "'source_id'",
     "SectionShape-source"),
    ("section-page", lambda s: items(s, DOC, "sections").update(page="2"), DOC, "sections.json",
     "/sections/0/page", "Datatype", "error", f"Section '{DOC}:SEC1' needs one page counted from 1, found '2'",
     "'page'", "SectionShape-page"),
    ("coverage-claims", lambda s: items(s, ACA, "coverage")["claim_ids"].insert(0, f"{ACA}:C9"), ACA,
     "coverage.json", "/coverage/0/claim_ids/0", "Class", "error",
     f"Coverage entry '{ACA}:CV1' refers to '{ACA}:C9', which is not a known claim",
     "'claim_ids'", "CoverageAssessmentShape-claims"),
]


@pytest.mark.parametrize(
    "mutate, agent, file, pointer, component, severity, message, hint_field, shape",
    [case[1:] for case in CASES], ids=[case[0] for case in CASES])
def test_each_shape_maps_to_the_file_pointer_and_message(
        mutate: Mutation, agent: str, file: str, pointer: str, component: str, severity: str, message: str,
        hint_field: str, shape: str) -> None:
    s = session()
    mutate(s)
    state, _ = build(s)
    full = state.validate_full()
    assert [(p.file, p.pointer, p.rule, p.severity, p.message) for p in full] == [
        (f"artifacts/{agent}/{file}", pointer, f"shacl.{component}ConstraintComponent", severity, message)]
    problem = full[0]
    assert hint_field in problem.hint and problem.details["shape"] == str(CCSH[shape])
    assert problem.details["agent"] == agent and problem.details["preview"] is not None
    assert "{$" not in problem.message + problem.hint and "{?" not in problem.message + problem.hint
    assert state.validate_agent(agent) == full  # the incremental path finds exactly the same


def test_every_rule_shape_has_a_violating_case() -> None:
    g = shapes().graph
    helpers = {CCSH[n] for n in ("IsEntity", "IsClaim", "IsHighPriorityClaim", "HasEvidence",
                                 "VerifiedEvidence", "VerifiedEvidence-verified")}
    rules = {ps for ps in g.objects(None, SH.property)} - helpers
    rules |= {s for s in g.subjects(SH.targetClass, None) if (s, SH.property, None) not in g}
    assert rules == {CCSH[case[-1]] for case in CASES}


def test_shapes_follow_the_conventions() -> None:
    g = shapes().graph
    shape_nodes = set(g.subjects(RDF.type, SH.PropertyShape)) | set(g.subjects(RDF.type, SH.NodeShape))
    shape_nodes |= set(g.subjects(SH.path, None)) | set(g.objects(None, SH.property))
    assert shape_nodes and all(isinstance(n, URIRef) for n in shape_nodes)  # property shapes have IRIs
    structural = {RDF.type, SH.targetClass, SH.property, RDFS.label}
    for node in shape_nodes:  # every shape that can report a result explains itself
        if set(g.predicates(node)) <= structural:
            continue
        message = g.value(node, SH.message)
        assert message is not None, node
        what, sep, how = str(message).partition(": ")
        assert sep and what.strip() and how.strip(), node
    assert not list(g.subjects(SH.sparql, None)) and not list(g.subjects(SH.select, None))
    for path in g.objects(None, SH.path):  # the only blank-node paths are alternative paths
        assert isinstance(path, URIRef) or (path, SH.alternativePath, None) in g or (path, SH.inversePath, None) in g


def test_ontology_declares_every_term_the_converter_uses() -> None:
    onto = Graph().parse(resource_dir("ontology") / "cconductor.ttl")
    declared = {s for s in onto.subjects(RDF.type, None) if isinstance(s, URIRef) and s.startswith(str(CC))}
    for term in declared:
        assert onto.value(term, RDFS.label) and onto.value(term, RDFS.comment), term
    _, graphs = build(session())
    used = {t for g in graphs.values() for s, p, o in g.triples for t in (p, o) if isinstance(t, URIRef)
            and t.startswith(str(CC))}
    assert used <= declared
    classes = set(onto.subjects(RDF.type, OWL.Class))
    assert {o for o in shapes().graph.objects(None, SH.targetClass)} <= classes
    assert (CC.HighPriorityClaim, RDFS.subClassOf, CC.Claim) in onto
    assert (CC.Agent, RDFS.subClassOf, URIRef("http://www.w3.org/ns/prov#SoftwareAgent")) in onto


def test_evidence_binding_message_explains_each_snippet() -> None:
    s = session()
    items(s, WEB, "claims")["evidence"] = [
        _evidence(f"{ACA}:S1", "we replace recurrence entirely", verified=False),
        {"source_id": f"{ACA}:S1", "snippet": "an unchecked quote"},
    ]
    state, _ = build(s)
    [problem] = state.validate_agent(WEB)
    assert (problem.file, problem.pointer, problem.is_error) == (
        f"artifacts/{WEB}/claims.json", "/claims/0", True)
    assert '"we replace recurrence entirely"' in problem.message
    assert "'academic-researcher:S1'" in problem.message
    assert '"dispensing with recurrence and convolutions" (match score 62.5, page 3)' in problem.message
    assert "evidence 1 quotes \"an unchecked quote\"" in problem.message
    assert "could not be checked because that source has no stored text" in problem.message
    assert "verbatim" in problem.hint and "'priority' to medium" in problem.hint
    items(s, WEB, "claims")["priority"] = "medium"  # lowering the priority is an accepted fix
    state, _ = build(s)
    assert state.validate_agent(WEB) == []


def test_high_priority_claim_without_evidence_is_one_error_not_also_a_warning() -> None:
    s = session()
    items(s, WEB, "claims")["evidence"] = []
    state, _ = build(s)
    [problem] = state.validate_full()
    assert problem.rule == "shacl.QualifiedMinCountConstraintComponent"
    assert problem.message.endswith("it has no evidence at all")


def test_warnings_do_not_count_as_errors() -> None:
    s = session()
    items(s, ACA, "claims", 1)["evidence"] = []
    items(s, ACA, "gaps")["sub_question_id"] = f"{PLAN}:Q7"
    state, _ = build(s)
    problems = state.validate_agent(ACA)
    assert len(problems) == 2 and {p.severity for p in problems} == {"warning"}
    assert errors(problems) == [] and not any(p.is_error for p in problems)


def test_incremental_validation_reaches_other_agents_that_point_at_the_change() -> None:
    s = session()
    state, _ = build(s)
    s[ACA]["items"]["sources"] = []  # the web agent cites this source
    smaller = contribution_to_graph("s-1", s[ACA])
    state.replace_agent(smaller)
    incremental = state.validate_agent(ACA)
    focus = {str(n) for n in state.focus_for(ACA)}
    assert incremental == [p for p in state.validate_full() if p.details["focus_node"] in focus]
    web_problems = [p for p in incremental if p.file == f"artifacts/{WEB}/claims.json"]
    assert [(p.pointer, p.rule) for p in web_problems] == [
        ("/claims/0/evidence/0/source_id", "shacl.ClassConstraintComponent")]
    assert web_problems[0].details["agent"] == WEB
    # removing the agent outright: the dangling references are found through the removed nodes
    state, _ = build(session())
    state.remove_agent(ACA)
    assert web_problems[0] in state.validate_agent(ACA)
    assert state.validate_agent(ACA) == [p for p in state.validate_full()
                                         if p.details["focus_node"] in {str(n) for n in state.focus_for(ACA)}]


def _snapshot(state: RdfState) -> tuple[Any, ...]:
    graphs = state.agent_graphs()
    origins = {n: state.origin(n) for g in graphs.values() for n in g.origins}
    return set(state.graph), state.triple_count, graphs, origins, {a: state.focus_for(a) for a in graphs}


def test_undo_restores_the_previous_state_exactly() -> None:
    s = session()
    state, _ = build(s)
    before = _snapshot(state)
    items(s, ACA, "claims")["statement"] = "Changed."
    s[ACA]["items"]["sources"] = []
    undo = state.replace_agent(contribution_to_graph("s-1", s[ACA]))
    assert _snapshot(state) != before and state.validate_full()
    undo()
    assert _snapshot(state) == before and state.validate_full() == []
    undo()  # a second call changes nothing
    assert _snapshot(state) == before
    undo_remove = state.remove_agent(WEB)
    assert WEB not in state.agent_graphs()
    undo_remove()
    assert _snapshot(state) == before
    new_agent = contribution_to_graph("s-1", _contribution("newcomer", gaps=[
        {"id": "newcomer:G1", "description": "d", "priority": "low"}]))
    undo_add = state.replace_agent(new_agent)
    undo_add()
    assert _snapshot(state) == before and state.origin(next(iter(new_agent.origins))) is None


def _graph(agent: str, *triples: tuple[URIRef, URIRef, Any]) -> AgentGraph:
    node = URIRef(f"urn:cconductor:entity:{agent}:E1")
    origin = Origin(f"artifacts/{agent}/entities.json", "/entities/0", "entity", "", {}, f"{agent}:E1", agent)
    return AgentGraph(agent, list(triples), {node: origin}, (node,))


def test_a_triple_two_agents_assert_survives_removing_one() -> None:
    shared = (URIRef("urn:x:thing"), RDFS.label, Literal("shared"))
    only_a = (URIRef("urn:x:thing"), RDFS.comment, Literal("a"))
    state = RdfState()
    state.replace_agent(_graph("a", shared, only_a))
    state.replace_agent(_graph("b", shared, shared))  # duplicates within one agent count once
    assert state.triple_count == 2
    state.remove_agent("a")
    assert shared in state.graph and only_a not in state.graph and state.triple_count == 1
    state.replace_agent(_graph("b", only_a))
    assert shared not in state.graph and only_a in state.graph
    undo = state.remove_agent("b")
    assert state.triple_count == 0 and len(state.graph) == 0
    undo()
    assert set(state.graph) == {only_a}
    assert not any(isinstance(t, BNode) for tr in state.graph for t in tr)


def test_public_api_fallback_finds_the_same_problems(monkeypatch: pytest.MonkeyPatch) -> None:
    """If a pyshacl upgrade removes the internals the fast path uses, results must not change."""
    import orchestrator.rdf.state as state_module

    s = session()
    items(s, ACA, "claims").update(confidence=1.5, evidence=[])
    items(s, ACA, "sources").pop("doi")
    state, _ = build(s)
    fast = state.validate_agent(ACA)
    monkeypatch.setattr(state_module, "FAST", False)
    assert state.validate_agent(ACA) == fast and len(fast) == 2


@pytest.mark.parametrize("priority", ["high", "medium"])
@pytest.mark.parametrize("evidence", [0, 1, 2])
def test_claims_vouched_for_by_their_evidence_are_skipped_with_the_same_results(
        monkeypatch: pytest.MonkeyPatch, priority: str, evidence: int) -> None:
    """ClaimEvidenceShape (sh:or of high priority / has evidence) is run only on claims without evidence."""
    import orchestrator.rdf.state as state_module

    assert shapes().passes_with == {CCSH.ClaimEvidenceShape: (CC.hasEvidence, 1)}
    s = session()
    claim = items(s, ACA, "claims", 1)
    claim["priority"] = priority
    claim["evidence"] = [_evidence(f"{ACA}:S1", f"recurrent models {i}", verified=False) for i in range(evidence)]
    state, _ = build(s)
    fast = state.validate_agent(ACA)
    many = state.validate_many({ACA: state.focus_for(ACA), WEB: state.focus_for(WEB)})
    monkeypatch.setattr(state_module, "FAST", False)  # the public API: every shape on every node
    reference = state.validate_agent(ACA)
    assert fast == reference == many[ACA]
    assert many[WEB] == state.validate_agent(WEB)
    assert any(p.message.endswith("cites no evidence") or "cites no evidence" in p.message
               for p in reference) == (evidence == 0 and priority == "medium")
