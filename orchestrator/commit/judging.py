"""Judging one submission: from its ``<agent>.kg.lock`` to a verdict, the path every lock takes.

    judge(context, name)
      lock seen ................. an event, then the agent name is checked
      claim ..................... the lock moves into .cconductor/claims/ (commit/locks.py)
      read ...................... artifacts/<agent>/: safe read, strict JSON, schemas (contract/artifacts.py)
      checks .................... stored texts and objects, merge, kept references, evidence, document parts,
                                  relationships, citations (commit/checks.py)
      graph ..................... its RDF, installed in the union with what its validation reaches
      SHACL ..................... on the nodes it touched and their neighbours
      conclude .................. merged (its record joins the graph), rejected, or deferred

A rejected submission leaves the graph as it was. An unexpected failure while one agent is judged
becomes that agent's rejection (``internal.error``), never the sweep's. The processor
(commit/processor.py) commits what this returns; a burst of locks takes the same steps with
SHACL run once for many agents (commit/burst/).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

from orchestrator.commit import locks
from orchestrator.commit.checks import Submission, run_checks
from orchestrator.commit.context import JudgingContext
from orchestrator.commit.internal_errors import internal_error_problem, log_internal_error
from orchestrator.commit.outcomes import Judged, Outcome
from orchestrator.contract.artifacts import ArtifactSet, folder_fingerprint, read_artifact_set
from orchestrator.model.clock import iso_timestamp
from orchestrator.model.errors import InvalidAgentName, SessionGone
from orchestrator.model.layout import check_agent_name
from orchestrator.model.problems import Problem, errors
from orchestrator.model.records import Record

if TYPE_CHECKING:
    from orchestrator.rdf.state import Undo

__all__ = ["Checked", "check", "conclude", "judge"]

T = TypeVar("T")


@dataclass(frozen=True)
class Checked:
    """A submission that passed every check but SHACL: its graph is in the union, ``undo`` takes it out."""

    name: str
    attempt: int
    artifact_set: ArtifactSet
    #: what the checks found that does not reject it (warnings)
    problems: list[Problem]
    record: Record
    undo: Undo


def judge(context: JudgingContext, name: str) -> Judged | None:
    """Judge one pending submission; None if its lock went away before it was claimed."""
    def whole() -> Judged | None:
        checked = _check(context, name)
        if not isinstance(checked, Checked):
            return checked
        return conclude(context, checked, context.graph.rdf.validate_agent(name))

    return _guarded(context, name, whole)


def check(context: JudgingContext, name: str) -> Judged | Checked | None:
    """Every step but SHACL: a verdict already (rejected, already merged), or the submission with its graph
    installed, waiting for SHACL (:func:`conclude`); None if its lock went away."""
    return _guarded(context, name, lambda: _check(context, name))


def _check(context: JudgingContext, name: str) -> Judged | Checked | None:
    paths, events = context.paths, context.events
    events.emit("lock.seen", f"lock {name}.kg.lock seen", agent=name)
    rejected = _invalid_name(context, name)
    if rejected is not None:
        return rejected
    if not locks.claim(paths, name):
        return None  # the lock went away before it could be claimed: nothing was submitted
    if locks.claim_path(paths, name).is_dir():
        problem = Problem(f"{name}.kg.lock", "", "path.lock_not_file", f"{name}.kg.lock is a folder, not a file",
                          f"remove the folder {name}.kg.lock.error and create {name}.kg.lock as an "
                          "empty file (touch) after writing the artifacts")
        return Judged(Outcome(name, "rejected", context.ledger.attempts(name) + 1, [problem]))
    artifact_set = read_artifact_set(paths, name, context.registry, context.required_files(name))
    current = context.graph.state.records.get(name)
    if artifact_set.ok and current and current["artifact_sha256"] == artifact_set.sha256:
        return Judged(Outcome(name, "noop", current["attempt"], seq=current.get("seq")), artifact_set)
    attempt = attempt_for(context, name, artifact_set.sha256)
    events.emit(
        "validation.completed",
        f"{name}: {len(artifact_set.files)} file(s) read, {len(errors(artifact_set.problems))} problem(s)",
        agent=name, attempt=attempt, files=[f.rel for f in artifact_set.files],
        problems=[p.to_dict() for p in artifact_set.problems], notes=[p.to_dict() for p in artifact_set.notes],
    )
    if not artifact_set.ok:
        return Judged(Outcome(name, "rejected", attempt, list(artifact_set.problems)), artifact_set)
    submission = Submission(name, attempt, artifact_set, current, iso_timestamp())
    problems = run_checks(context, submission)
    if errors(problems):
        return Judged(Outcome(name, "rejected", attempt, problems), artifact_set)
    return _install(context, submission, problems)


def _install(context: JudgingContext, submission: Submission, problems: list[Problem]) -> Checked:
    """The submission's RDF graph in the union, with every agent graph its validation can read."""
    from orchestrator.rdf.convert import contribution_to_graph

    name, artifact_set, contribution = submission.agent, submission.artifact_set, submission.merged()
    own_claims = {c["id"] for c in contribution["items"]["claims"]}
    state = context.graph.state
    graph = contribution_to_graph(context.session_id, contribution,
                                  kind_of=lambda gid: "claim" if gid in own_claims else state.kind_of(gid))
    record: Record = {
        "agent": name,
        "attempt": submission.attempt,
        "merged_at": submission.merged_at,
        "artifact_sha256": artifact_set.sha256,
        "files": [{"name": f.name, "rel": f.rel, "sha256": f.sha256, "size": artifact_set.sizes.get(f.rel)}
                  for f in artifact_set.files],
        "raw": {f.name: f.data for f in artifact_set.files},
        "namespace": submission.namespace or {},
        "contribution": contribution,
    }
    context.graph.lazy.prepare(name, graph)
    undo = context.graph.rdf.replace_agent(graph)
    return Checked(name, submission.attempt, artifact_set, problems, record, undo)


def conclude(context: JudgingContext, checked: Checked, shacl_problems: list[Problem], *,
             folder_unchanged: bool | None = None) -> Judged:
    """The verdict once SHACL has judged the installed graph; a rejection or deferral undoes the install.

    Merged: the record becomes the agent's current one in the graph (committed by the processor).
    ``folder_unchanged``: what the caller found comparing the artifact folder with the one read.
    """
    name, attempt, artifact_set = checked.name, checked.attempt, checked.artifact_set
    context.events.emit(
        "shacl.completed",
        f"{name}: SHACL found {len(errors(shacl_problems))} violation(s), "
        f"{len(shacl_problems) - len(errors(shacl_problems))} warning(s)",
        agent=name, attempt=attempt, problems=[p.to_dict() for p in shacl_problems],
    )
    shacl_problems = [p if _own_file(p, name) else _as_breakage(p, name) for p in shacl_problems]
    problems = checked.problems + shacl_problems
    if errors(shacl_problems):
        checked.undo()
        return Judged(Outcome(name, "rejected", attempt, problems), artifact_set)
    if not (folder_still_read(context, checked) if folder_unchanged is None else folder_unchanged):
        checked.undo()
        return Judged(Outcome(name, "deferred", attempt), artifact_set)
    context.graph.put(name, checked.record, staged=True)
    return Judged(Outcome(name, "merged", attempt, [p for p in problems if not p.is_error]), artifact_set,
                  checked.record)


def folder_still_read(context: JudgingContext, checked: Checked) -> bool:
    """The artifact folder still holds the files that were read (else the merge waits for the new lock)."""
    return folder_fingerprint(context.paths.agent_artifacts(checked.name)) == checked.artifact_set.fingerprint


def attempt_for(context: JudgingContext, agent: str, sha: str) -> int:
    """The attempt number of a submission: a lock re-seen after a crash (same rejected set) keeps its number."""
    last = context.ledger.last_entry(agent)
    attempts = context.ledger.attempts(agent)
    return attempts if last and last["action"] == "reject" and last["artifact_sha256"] == sha else attempts + 1


def _invalid_name(context: JudgingContext, name: str) -> Judged | None:
    try:
        check_agent_name(name)
    except InvalidAgentName as exc:
        short = len(name) <= 100
        message = str(exc) if short else (
            f"invalid agent name ({len(name)} characters, starting {name[:40]!r}): agent names have at most "
            "64 characters, a lowercase letter first, then lowercase letters, digits or hyphens")
        problem = Problem(f"{name}.kg.lock" if short else f"{name[:40]}....kg.lock", "", "agent_name.invalid",
                          message, "rename the lock and artifacts/<agent>/ to a valid, unreserved agent name")
        return Judged(Outcome(name, "rejected", context.ledger.attempts(name) + 1, [problem]))
    return None


def _guarded(context: JudgingContext, name: str, step: Callable[[], T]) -> T | Judged:
    """``step()``; an unexpected failure undoes what it installed and becomes the agent's rejection."""
    committed = context.graph.state.records.get(name)
    try:
        return step()
    except SessionGone:
        raise
    except Exception as exc:
        with contextlib.suppress(Exception):  # the graph goes back to the committed record
            context.graph.state.put(name, committed)
            context.graph.lazy.restore(name, committed)
        detail = log_internal_error(context.paths, f"evaluating {name}", exc)
        context.events.emit("processor.agent_failed", f"{name}: internal error while evaluating: {exc!r}",
                            agent=name, error=repr(exc), log=detail)
        problem = internal_error_problem(name, exc, detail)
        return Judged(Outcome(name, "rejected", context.ledger.attempts(name) + 1, [problem]))


def _own_file(problem: Problem, agent: str) -> bool:
    return problem.file is None or f"{problem.file}/".startswith(f"artifacts/{agent}/")


def _as_breakage(problem: Problem, agent: str) -> Problem:
    """A violation in another agent's file caused by this submission: the fix is in this agent's files."""
    where = f"{problem.file}{' at ' + problem.pointer if problem.pointer else ''}"
    return Problem(
        f"artifacts/{agent}", "", "reference.breaks_other_agent",
        f"this submission makes another agent's item invalid ({where}): {problem.message}",
        "change your own files so that the other agent's item stays valid (for example keep the items it "
        "cites, with the same ids); do not edit the other agent's files",
        problem.severity, {"other_file": problem.file, "other_pointer": problem.pointer, "rule": problem.rule},
    )
