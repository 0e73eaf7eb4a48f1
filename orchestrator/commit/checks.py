"""The checks of a submission whose files were read and passed their schemas, in the order they run.

Each check takes the judging context and the :class:`Submission` and returns the problems it
found (errors reject the submission, warnings go with the merge). Every check runs, so an agent
learns about all its problems at once; the merge check fills in ``submission.contribution``, which
the checks after it read. SHACL on the merge's graph comes after all of them (commit/judging.py).

To add a check: write a function ``(context, submission) -> list[Problem]`` here, put it in
:data:`CHECKS` where it belongs, and test it in tests/test_checks.py (docs/architecture.md,
"Adding a check"). Its problems need a file, a JSON pointer, a rule, a message and a hint
(model/problems.py): that is what the agent reads in its retry instructions.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from orchestrator.commit.context import JudgingContext
from orchestrator.commit.document_checks import document_problems, stored_problems
from orchestrator.contract.artifacts import ArtifactSet
from orchestrator.contract.sourcetexts import source_text_problems
from orchestrator.graph.dependents import broken_references, broken_support
from orchestrator.graph.evidence import bind_evidence
from orchestrator.graph.evidence_budget import Budget
from orchestrator.graph.merge import build_contribution
from orchestrator.graph.relation_support import unsupported_relationships
from orchestrator.graph.section_check import section_problems
from orchestrator.graph.statement_support import unsupported_statements
from orchestrator.model.problems import Problem
from orchestrator.model.records import Contribution, Record

__all__ = ["CHECKS", "Check", "Submission", "run_checks"]


@dataclass
class Submission:
    """One agent's artifact set on its way through the checks."""

    agent: str
    attempt: int
    artifact_set: ArtifactSet
    #: the agent's current record (a retry replaces it), or None
    current: Record | None
    merged_at: str
    #: its items with global ids and resolved references (set by :func:`merge`)
    contribution: Contribution | None = None
    #: its files merged into one object, its namespace in knowledge-graph.json (set by :func:`merge`)
    namespace: dict[str, Any] | None = None
    #: the work its evidence checks may do, shared by the snippet and the document checks
    budget: Budget = field(default_factory=Budget)

    def merged(self) -> Contribution:
        assert self.contribution is not None, "the merge check runs first"
        return self.contribution


Check = Callable[[JudgingContext, Submission], list[Problem]]


def source_texts(context: JudgingContext, submission: Submission) -> list[Problem]:
    """Every stored text a source names exists and matches its name (sha256)."""
    return source_text_problems(submission.artifact_set, context.texts)


def stored_objects(context: JudgingContext, submission: Submission) -> list[Problem]:
    """Every figure image and table's cells a document item names is stored under its sha256 and well formed."""
    return stored_problems(submission.artifact_set, context.texts)


def merge(context: JudgingContext, submission: Submission) -> list[Problem]:
    """The files merge into one namespace, every item gets its global id and every reference resolves."""
    result = build_contribution(
        submission.agent, submission.artifact_set.files, context.graph.state.excluding(submission.agent),
        attempt=submission.attempt, merged_at=submission.merged_at, artifact_sha256=submission.artifact_set.sha256,
    )
    submission.contribution, submission.namespace = result.contribution, result.namespace
    return result.problems


def kept_references(context: JudgingContext, submission: Submission) -> list[Problem]:
    """A retry keeps the items other agents cite."""
    agent, graph = submission.agent, context.graph
    previous = submission.current["contribution"] if submission.current else None
    return broken_references(agent, submission.merged(), previous,
                             lambda: {a: graph.state.records[a] for a in graph.lazy.referrers_of(agent)})


def evidence(context: JudgingContext, submission: Submission) -> list[Problem]:
    """Each snippet is checked against its source's stored text; the verdict is recorded on the evidence item.

    No problem here: whether an unverified snippet rejects its claim is SHACL's rule (high priority).
    """
    bind_evidence(submission.merged(), lambda gid: context.graph.state.item("sources", gid), context.texts.text,
                  context.evidence_threshold, submission.budget)
    return []


def sections(context: JudgingContext, submission: Submission) -> list[Problem]:
    """A document without pages is cited by section: the cited heading stands open above the quoted snippet."""
    return section_problems(submission.merged(), lambda gid: context.graph.state.item("sources", gid),
                            context.texts.text)


def document_parts(context: JudgingContext, submission: Submission) -> list[Problem]:
    """Captions stand on their page; evidence naming a table or figure is verified against its cells or caption."""
    return document_problems(submission.merged(), context.graph.state, context.texts, submission.budget)


def relationships(context: JudgingContext, submission: Submission) -> list[Problem]:
    """A relationship is stated by one of its supporting claims (both ends named, the relation said, not negated)."""
    state = context.graph.state
    return unsupported_relationships(submission.merged(), lambda gid: state.item("claims", gid),
                                     lambda gid: state.item("entities", gid))


def statements(context: JudgingContext, submission: Submission) -> list[Problem]:
    """A claim's statement keeps the numbers and the negation of its verified quotes (the report states it)."""
    return unsupported_statements(submission.merged())


def kept_support(context: JudgingContext, submission: Submission) -> list[Problem]:
    """A retry keeps stating the relationships other agents rest on its claims (after the evidence check)."""
    agent, graph = submission.agent, context.graph
    previous = submission.current["contribution"] if submission.current else None
    return broken_support(agent, submission.merged(), previous,
                          lambda: {a: graph.state.records[a] for a in graph.lazy.referrers_of(agent)},
                          lambda gid: graph.state.item("claims", gid), lambda gid: graph.state.item("entities", gid))


def citations(context: JudgingContext, submission: Submission) -> list[Problem]:
    """Report outline markers cite claims of the graph that have verified evidence."""
    outlines = [f for f in submission.artifact_set.files if isinstance(f.data.get("report_outline"), dict)]
    if not outlines:
        return []
    # Only now: importing the citation checks costs ~50-150 ms, and most agents have no outline.
    from orchestrator.graph.citations import check_outline

    agent, state = submission.agent, context.graph.state
    own = {c["id"]: c for c in submission.merged()["items"]["claims"]}
    view = state.excluding(agent)

    def resolve(ref: str) -> str | None:
        if ":" in ref:
            return ref if ref in own or view.exists("claims", ref) else None
        if f"{agent}:{ref}" in own:
            return f"{agent}:{ref}"
        candidates = view.by_local("claims", ref)
        return candidates[0] if len(candidates) == 1 else None

    def claim(global_id: str) -> dict[str, Any] | None:
        return own.get(global_id) or state.item("claims", global_id)

    problems: list[Problem] = []
    for art in outlines:
        problems += check_outline(art.data["report_outline"], resolve, claim, art.rel, "/report_outline")
    return problems


#: The checks, in order: the merge before the checks that read its contribution.
CHECKS: tuple[Check, ...] = (source_texts, stored_objects, merge, kept_references, evidence, statements, sections,
                             document_parts, relationships, kept_support, citations)


def run_checks(context: JudgingContext, submission: Submission) -> list[Problem]:
    problems: list[Problem] = []
    for check in CHECKS:
        problems += check(context, submission)
    return problems
