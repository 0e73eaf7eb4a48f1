"""Judging one submission: from a claimed lock to an outcome and, when it passes, the record to commit.

The processor (commit/processor.py) owns the lock queue and the ledger; this module owns the
order of the checks (name, lock, artifacts and schemas, source texts, merge and references,
evidence and the sections it cites, relationships stated by their claims, report citations, SHACL
on the merge's neighbourhood) and what each failure tells the agent. The graph the checks run
against is the processor's: a rejected submission leaves it as it was.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from orchestrator.commit import locks
from orchestrator.commit.ahead import Prechecked, Speculation
from orchestrator.commit.document_checks import document_problems, stored_problems
from orchestrator.commit.judge import Assessed, Judge, Pending, attempt_for
from orchestrator.commit.outcomes import Outcome, Staged
from orchestrator.contract.artifacts import ArtifactSet, folder_fingerprint, read_artifact_set
from orchestrator.contract.sourcetexts import source_text_problems
from orchestrator.graph.dependents import broken_references
from orchestrator.graph.evidence import bind_evidence
from orchestrator.graph.merge import build_contribution
from orchestrator.graph.relation_support import unsupported_relationships
from orchestrator.graph.section_check import section_problems
from orchestrator.model.clock import iso_timestamp
from orchestrator.model.errors import InvalidAgentName
from orchestrator.model.layout import check_agent_name
from orchestrator.model.problems import Problem, errors

__all__ = ["Evaluation", "Judge", "Pending"]


def _nothing() -> None:
    """The undo of a speculation adopted as is: nothing of it was installed."""


class Evaluation:
    """The checks of one submission, against the processor's in-memory graph (call under its lock)."""

    def __init__(self, judge: Judge):
        self.paths, self.session_id, self.events = judge.paths, judge.session_id, judge.events
        self.store, self.state, self.lazy, self.texts = judge.store, judge.state, judge.lazy, judge.texts
        self.registry, self.required_files = judge.registry, judge.required_files
        self.evidence_threshold, self.readahead = judge.evidence_threshold, judge.readahead

    def evaluate(self, name: str) -> Staged | None:
        """Judge one pending submission: checks, merge, evidence, SHACL; the record to commit if it passes."""
        staged = self.stage(name)
        if not isinstance(staged, Pending):
            return staged
        verdict = staged.verdict if staged.verdict is not None else self.lazy.rdf.validate_agent(name)
        return self.conclude(staged, verdict)

    def stage(self, name: str) -> Staged | Pending | None:
        """Every check but SHACL; a submission that passes them has its graph installed in the union.

        Or, judged whole by a read-ahead helper where it is alone (:meth:`adopt`), it comes with its
        SHACL verdict and its graph is not installed.
        """
        try:
            check_agent_name(name)
        except InvalidAgentName as exc:
            message = str(exc) if len(name) <= 100 else (
                f"invalid agent name ({len(name)} characters, starting {name[:40]!r}): agent names have at most "
                "64 characters, a lowercase letter first, then lowercase letters, digits or hyphens")
            problem = Problem(f"{name}.kg.lock" if len(name) <= 100 else f"{name[:40]}....kg.lock", "",
                              "agent_name.invalid", message,
                              "rename the lock and artifacts/<agent>/ to a valid, unreserved agent name")
            return Outcome(name, "rejected", self.store.attempts(name) + 1, [problem]), None, None
        if not locks.claim(self.paths, name):
            return None  # the lock went away before it could be claimed: nothing was submitted
        if locks.claim_path(self.paths, name).is_dir():
            problem = Problem(f"{name}.kg.lock", "", "path.lock_not_file",
                              f"{name}.kg.lock is a folder, not a file",
                              f"remove the folder {name}.kg.lock.error and create {name}.kg.lock as an "
                              "empty file (touch) after writing the artifacts")
            return Outcome(name, "rejected", self.store.attempts(name) + 1, [problem]), None, None
        read = self.readahead.take(name)
        artifact_set = read.artifact_set if read else read_artifact_set(
            self.paths, name, self.registry, self.required_files(name))
        prechecked = read.prechecked if read else Prechecked()
        current = self.state.records.get(name)
        if artifact_set.ok and current and current["artifact_sha256"] == artifact_set.sha256:
            return Outcome(name, "noop", current["attempt"], seq=current.get("seq")), artifact_set, None
        attempt = self._attempt_for(name, artifact_set)
        self.events.emit(
            "validation.completed",
            f"{name}: {len(artifact_set.files)} file(s) read, {len(errors(artifact_set.problems))} problem(s)",
            agent=name, attempt=attempt, files=[f.rel for f in artifact_set.files],
            problems=[p.to_dict() for p in artifact_set.problems],
            notes=[p.to_dict() for p in artifact_set.notes],
        )
        if not artifact_set.ok:
            return Outcome(name, "rejected", attempt, list(artifact_set.problems)), artifact_set, None
        if read is not None and read.speculation is not None:
            adopted = self.adopt(name, read.speculation, artifact_set, current, attempt)
            if adopted is not None:
                return adopted
        assessed = self.assess(name, artifact_set, prechecked, current, attempt, iso_timestamp())
        if not isinstance(assessed, Assessed):
            return assessed
        self.lazy.prepare(name, assessed.graph)
        undo = self.lazy.rdf.replace_agent(assessed.graph)
        return Pending(name, attempt, artifact_set, assessed.problems, assessed.record, undo)

    def assess(self, name: str, artifact_set: ArtifactSet, prechecked: Prechecked, current: dict[str, Any] | None,
               attempt: int, merged_at: str) -> Staged | Assessed:
        """The checks after reading (texts, merge and references, evidence, citations) and the RDF graph.

        Reads the graph state but changes nothing (a helper runs it against an empty graph).
        """
        problems = source_text_problems(artifact_set, self.texts, prechecked.texts)
        problems += stored_problems(artifact_set, self.texts)
        result = build_contribution(
            name, artifact_set.files, self.state.excluding(name),
            attempt=attempt, merged_at=merged_at, artifact_sha256=artifact_set.sha256,
        )
        problems += result.problems
        problems += broken_references(name, result.contribution, (current or {}).get("contribution"),
                                      lambda: {a: self.state.records[a] for a in self.lazy.referrers_of(name)})
        bind_evidence(
            result.contribution,
            lambda gid: self.state.item("sources", gid),
            self.texts.text,
            self.evidence_threshold,
            checked_before=prechecked.verification(self.texts, self.evidence_threshold),
            deadline=prechecked.deadline(),
        )
        problems += document_problems(result.contribution, self.state, self.texts)
        problems += section_problems(result.contribution, lambda gid: self.state.item("sources", gid),
                                     self.texts.text)
        problems += unsupported_relationships(result.contribution, lambda gid: self.state.item("claims", gid),
                                              lambda gid: self.state.item("entities", gid))
        problems += self._check_citations(name, artifact_set, result.contribution)
        if errors(problems):
            return Outcome(name, "rejected", attempt, problems), artifact_set, None

        from orchestrator.rdf.convert import contribution_to_graph

        graph = contribution_to_graph(self.session_id, result.contribution, kind_of=self._kind_of(result.contribution))
        return Assessed(problems, {
            "agent": name,
            "attempt": attempt,
            "merged_at": merged_at,
            "artifact_sha256": artifact_set.sha256,
            "files": [
                {"name": f.name, "rel": f.rel, "sha256": f.sha256, "size": artifact_set.sizes.get(f.rel)}
                for f in artifact_set.files
            ],
            "raw": {f.name: f.data for f in artifact_set.files},
            "namespace": result.namespace,
            "contribution": result.contribution,
        }, graph)

    def adopt(self, name: str, speculation: Speculation, artifact_set: ArtifactSet, current: dict[str, Any] | None,
              attempt: int) -> Pending | None:
        """A helper's judging of the agent alone, if here too it is alone; else None (judged here).

        Alone here: no record yet (nothing of it to replace), no agent citing it (whose validation
        would reach its nodes), the same attempt number, and every stored text it read unchanged
        (a text that still matches its name has the same bytes). Its references name only its own
        items and its graph writes only about its own nodes (the helper kept no other), so every
        check before SHACL reads nothing of the graph, and SHACL reads only its own triples.
        """
        if current is not None or speculation.attempt != attempt or self.lazy.referrers_of(name):
            return None
        if any(self.texts.problem_with(sha, key) is not None for sha, key in speculation.texts.items()):
            return None
        return Pending(name, attempt, artifact_set, list(speculation.problems), speculation.record, _nothing,
                       verdict=list(speculation.shacl), installed=False, rendered=speculation.trig or None)

    def conclude(self, pending: Pending, shacl_problems: list[Problem], *,
                 folder_unchanged: bool | None = None) -> Staged:
        """The verdict once SHACL has judged the staged graph; a rejection or deferral undoes its install.

        ``folder_unchanged``: what the caller found comparing the artifact folder with the one read.
        """
        name, attempt, artifact_set, problems = pending.name, pending.attempt, pending.artifact_set, pending.problems
        undo, record = pending.undo, pending.record
        self.events.emit(
            "shacl.completed",
            f"{name}: SHACL found {len(errors(shacl_problems))} violation(s), "
            f"{len(shacl_problems) - len(errors(shacl_problems))} warning(s)",
            agent=name, attempt=attempt, problems=[p.to_dict() for p in shacl_problems],
        )
        shacl_problems = [p if _own_file(p, name) else _as_breakage(p, name) for p in shacl_problems]
        problems = problems + shacl_problems
        if errors(shacl_problems):
            undo()
            return Outcome(name, "rejected", attempt, problems), artifact_set, None
        if not (self.folder_unchanged(pending) if folder_unchanged is None else folder_unchanged):
            undo()
            return Outcome(name, "deferred", attempt), artifact_set, None
        self.state.put(name, record)
        self.lazy.note(name, record, staged=pending.installed, rendered=pending.rendered)
        return Outcome(name, "merged", attempt, [p for p in problems if not p.is_error]), artifact_set, record

    def folder_unchanged(self, pending: Pending) -> bool:
        """The artifact folder still holds the files that were read (else the merge waits for the new lock)."""
        return folder_fingerprint(self.paths.agent_artifacts(pending.name)) == pending.artifact_set.fingerprint

    def _check_citations(self, agent: str, artifact_set: ArtifactSet, contribution: dict[str, Any]) -> list[Problem]:
        """Report markers must cite claims of the graph that have verified evidence."""
        outlines = [f for f in artifact_set.files if isinstance(f.data.get("report_outline"), dict)]
        if not outlines:
            return []
        # Only now: importing the report package costs ~50-150 ms, and most agents have no outline.
        from orchestrator.graph.citations import check_outline

        own = {c["id"]: c for c in contribution["items"]["claims"]}
        view = self.state.excluding(agent)

        def resolve(ref: str) -> str | None:
            if ":" in ref:
                return ref if ref in own or view.exists("claims", ref) else None
            if f"{agent}:{ref}" in own:
                return f"{agent}:{ref}"
            candidates = view.by_local("claims", ref)
            return candidates[0] if len(candidates) == 1 else None

        def claim(global_id: str) -> dict[str, Any] | None:
            return own.get(global_id) or self.state.item("claims", global_id)

        problems: list[Problem] = []
        for art in outlines:
            problems += check_outline(art.data["report_outline"], resolve, claim, art.rel, "/report_outline")
        return problems

    def _kind_of(self, contribution: dict[str, Any]) -> Callable[[str], str | None]:
        own_claims = {c["id"] for c in contribution["items"]["claims"]}
        return lambda gid: "claim" if gid in own_claims else self.state.kind_of(gid)

    def _attempt_for(self, agent: str, artifact_set: ArtifactSet) -> int:
        """A lock re-seen after a crash (same rejected set) keeps its attempt number."""
        last = self.store.last_entry(agent)
        rejected = last["artifact_sha256"] if last and last["action"] == "reject" else None
        return attempt_for(self.store.attempts(agent), rejected, artifact_set.sha256)



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
