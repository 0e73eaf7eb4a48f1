"""The checks of commit/checks.py, each on its own: a submission in, problems out.

A new check is a function in commit/checks.py, an entry in ``CHECKS``, and a test here: build the
submission with :func:`submission`, call the check, look at its problems (and, for the merge, at
what it leaves for the checks after it). docs/architecture.md ("Adding a check") walks through it.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from orchestrator.commit import checks
from orchestrator.commit.checks import CHECKS, Submission, run_checks
from orchestrator.commit.processor import Processor
from orchestrator.contract.artifacts import read_artifact_set
from orchestrator.model.layout import SessionPaths
from tests.conftest import sample_claim, sample_source, store_text, write_artifacts

QUOTE = "merging knowledge from many agents is hard in practice"


@pytest.fixture
def processor(session: SessionPaths) -> Iterator[Processor]:
    proc = Processor(session)
    yield proc
    proc.close()


def submission(processor: Processor, agent: str, files: dict[str, Any]) -> Submission:
    """``files`` as an agent would submit them, read and schema-checked, ready for the checks."""
    write_artifacts(processor.paths, agent, files, lock=False)
    artifact_set = read_artifact_set(processor.paths, agent, processor.registry, ())
    assert artifact_set.ok, artifact_set.problems
    return Submission(agent, 1, artifact_set, None, "2026-01-02T03:04:05Z")


def test_the_checks_run_in_order_the_merge_before_what_reads_its_contribution() -> None:
    names = [check.__name__ for check in CHECKS]
    readers = ("kept_references", "evidence", "sections", "document_parts", "relationships", "citations")
    assert names.index("merge") < min(names.index(n) for n in readers)
    assert names.index("evidence") < names.index("sections")  # a section is checked where the snippet was found
    assert names.index("evidence") < names.index("document_parts")  # both spend the submission's budget


def test_source_texts_names_a_source_whose_stored_text_is_missing(processor: Processor) -> None:
    files = {"sources.json": {"sources": [sample_source("S1", content_sha256="0" * 64)]}}
    problems = checks.source_texts(processor.context, submission(processor, "alpha", files))
    assert [(p.rule, p.pointer) for p in problems] == [("source_text.invalid", "/sources/0/content_sha256")]


def test_merge_gives_global_ids_and_reports_a_reference_that_resolves_nowhere(processor: Processor) -> None:
    files = {"sources.json": {"sources": [sample_source("S1")]},
             "claims.json": {"claims": [sample_claim("C1", "S1"), sample_claim("C2", "nowhere")]}}
    work = submission(processor, "alpha", files)
    problems = checks.merge(processor.context, work)
    assert [c["id"] for c in work.merged()["items"]["claims"]] == ["alpha:C1", "alpha:C2"]
    assert [(p.rule, p.pointer) for p in problems] == [("reference.unresolved", "/claims/1/evidence/0/source_id")]


def test_evidence_records_a_verification_and_leaves_the_verdict_to_shacl(processor: Processor) -> None:
    sha = store_text(processor.paths, f"We found that {QUOTE}, again and again.\fPage two.")
    files = {"sources.json": {"sources": [sample_source("S1", content_sha256=sha)]},
             "claims.json": {"claims": [sample_claim("C1", "S1", QUOTE), sample_claim("C2", "S1", "a quote the "
                                                                                      "text does not hold at all")]}}
    work = submission(processor, "alpha", files)
    checks.merge(processor.context, work)
    assert checks.evidence(processor.context, work) == []
    verified = [c["evidence"][0]["verification"]["verified"] for c in work.merged()["items"]["claims"]]
    assert verified == [True, False]


def test_citations_rejects_a_report_marker_naming_no_claim(processor: Processor) -> None:
    files = {"claims.json": {"claims": [sample_claim("C1", "S1")]}, "sources.json": {"sources": [sample_source()]},
             "report-outline.json": {"report_outline": {"title": "Merging", "sections": [
                 {"heading": "Findings", "paragraphs": [{"text": "Merging is hard [@C9]."}]}]}}}
    work = submission(processor, "writer", files)
    checks.merge(processor.context, work)
    assert [p.rule for p in checks.citations(processor.context, work)] == ["citation.unresolved"]


def test_run_checks_reports_every_checks_problems_at_once(processor: Processor) -> None:
    files = {"sources.json": {"sources": [sample_source("S1", content_sha256="0" * 64)]},
             "claims.json": {"claims": [sample_claim("C1", "nowhere")]}}
    rules = {p.rule for p in run_checks(processor.context, submission(processor, "alpha", files))}
    assert rules == {"source_text.invalid", "reference.unresolved"}


def test_stored_objects_names_a_figure_whose_image_is_not_stored(processor: Processor) -> None:
    files = {"sources.json": {"sources": [sample_source("S1")]},
             "figures.json": {"figures": [{"id": "F1", "source_id": "S1", "label": "Figure 1", "page": 1,
                                           "image_sha256": "0" * 64}]}}
    problems = checks.stored_objects(processor.context, submission(processor, "alpha", files))
    assert [(p.rule, p.pointer) for p in problems] == [("stored_object.invalid", "/figures/0/image_sha256")]
    assert "does not exist" in problems[0].message


def test_document_parts_rejects_a_caption_not_on_its_page(processor: Processor) -> None:
    sha = store_text(processor.paths, "Page one.\fFigure 1: Merging knowledge from many agents over time.")
    caption = {"id": "K1", "source_id": "S1", "page": 1, "describes": "F1",
               "text": "Figure 1: Merging knowledge from many agents over time."}
    files = {"sources.json": {"sources": [sample_source("S1", content_sha256=sha)]},
             "figures.json": {"figures": [{"id": "F1", "source_id": "S1", "label": "Figure 1", "page": 2}]},
             "captions.json": {"captions": [caption]}}
    work = submission(processor, "alpha", files)
    checks.merge(processor.context, work)
    [problem] = checks.document_parts(processor.context, work)
    assert (problem.rule, problem.pointer, problem.is_error) == ("caption.not_found", "/captions/0/text", True)
    assert "found on page 2" in problem.message


def test_relationships_rejects_one_its_claims_do_not_state(processor: Processor) -> None:
    files = {"sources.json": {"sources": [sample_source("S1")]},
             "claims.json": {"claims": [sample_claim("C1", "S1", statement="The sky is blue on clear days.")]},
             "entities.json": {"entities": [{"id": "E1", "name": "Lisbon", "type": "city"},
                                            {"id": "E2", "name": "Spain", "type": "country"}]},
             "relationships.json": {"relationships": [{"id": "R1", "subject": "E1", "predicate": "capital of",
                                                       "object": "E2", "claim_ids": ["C1"]}]}}
    work = submission(processor, "alpha", files)
    checks.merge(processor.context, work)
    assert [(p.rule, p.pointer) for p in checks.relationships(processor.context, work)] == [
        ("relationship.unsupported", "/relationships/0")]


def test_sections_rejects_a_heading_the_quote_does_not_stand_under(processor: Processor) -> None:
    text = f"# Report\n\n## Fleet\n\nWe found that {QUOTE}.\n\n## Outlook\n\nMore next year.\n"
    sha = store_text(processor.paths, text)
    claim = sample_claim("C1", "S1", QUOTE)
    claim["evidence"][0]["locator"] = {"page": 1, "section": "Outlook"}
    files = {"sources.json": {"sources": [sample_source("S1", content_sha256=sha, local_path="/docs/report.md")]},
             "claims.json": {"claims": [claim]}}
    work = submission(processor, "alpha", files)
    checks.merge(processor.context, work)
    checks.evidence(processor.context, work)
    [problem] = checks.sections(processor.context, work)
    assert (problem.rule, problem.pointer, problem.is_error) == (
        "evidence.section_mismatch", "/claims/0/evidence/0/locator/section", True)
    assert "'Fleet'" in problem.hint
