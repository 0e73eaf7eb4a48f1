"""A lock's outcome, and what it changes in the session folder once the ledger has committed it.

These effects run only after the commit, so a crash before them leaves the lock claimed and
processing it again gives the same verdict without a new entry; each one is safe to repeat.
``session.json`` records each agent's state first (one write per sweep). Then, for every lock of
the sweep: merged or already merged, the lock and stale retry files go; rejected, retry
instructions are written and the lock is renamed to ``<agent>.kg.lock.error``. The repair memory
and the events come last. Readers that must not lag (``status``) read the ledger itself.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from orchestrator.commit import locks
from orchestrator.commit.retry import build_retry_instructions
from orchestrator.contract.artifacts import ArtifactSet
from orchestrator.memory.hook import on_merge, on_rejection
from orchestrator.model.clock import iso_timestamp
from orchestrator.model.layout import AGENT_NAME_RE, SessionPaths
from orchestrator.model.problems import Problem, errors
from orchestrator.model.records import LedgerAction, OutcomeStatus, Record
from orchestrator.session.atomic import atomic_write_json
from orchestrator.session.events import EventLog
from orchestrator.session.record import load_session, update_session


@dataclass(frozen=True)
class Outcome:
    """What became of one submission; ``seq`` is its ledger entry once committed (merged, rejected)."""

    agent: str
    status: OutcomeStatus
    attempt: int | None = None
    problems: list[Problem] = field(default_factory=list)
    seq: int | None = None


@dataclass(frozen=True)
class Judged:
    """A submission's outcome with the artifact set it judged and, when merged, the record to commit."""

    outcome: Outcome
    artifact_set: ArtifactSet | None = None
    record: Record | None = None

    @property
    def agent(self) -> str:
        return self.outcome.agent


#: A ledger decision: (seq, agent, action, attempt, record seq it leaves current).
Decision = tuple[int, str, LedgerAction, "int | None", "int | None"]


def settle_outcome(paths: SessionPaths, judged: Judged, *, max_attempts: int) -> list[str]:
    """What the agent waits for, right after the commit: the lock consumed (and stale retry instructions
    removed), or the retry instructions written and the lock renamed to ``.kg.lock.error``; a deferred
    submission's lock goes back to pending. Quick file operations only: the repair memory and the events
    come after every lock of the sweep is settled (:func:`after_outcome`). Returns notes for the user:
    a signal or instructions file that could not be written because something else stands at its name."""
    outcome, agent = judged.outcome, judged.agent
    if outcome.status in ("merged", "noop"):
        locks.consume(paths, agent)
        if locks.not_a_file(paths.retry_instructions(agent)) is None:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(paths.retry_instructions(agent))
        return []
    if outcome.status != "rejected":
        locks.release(paths, agent)
        return []
    notes = signal_notes(paths, agent, signal=False)
    try:
        if not notes:
            atomic_write_json(paths.retry_instructions(agent), _instructions(judged, max_attempts), root=paths.root)
    finally:  # even if the instructions cannot be written, the rejection is final: never re-judged for ever
        blocked = locks.error(paths, agent)
    return notes + ([blocked] if blocked else [])


def signal_notes(paths: SessionPaths, agent: str, *, signal: bool = True) -> list[str]:
    """Why a rejected agent's signal (with ``signal``) or retry instructions are not where it looks for them:
    something that is not a file, and not cconductor's, stands at the name (left untouched)."""
    notes = [note for note in [locks.blocked_signal(paths, agent)] if note and signal]
    kind = locks.not_a_file(paths.retry_instructions(agent))
    if kind is not None:
        name = paths.retry_instructions(agent).name
        notes.append(f"{name} is {kind}, not the retry instructions cconductor writes; it was left as it is and "
                     f"the instructions were not written: move {name} aside, then run "
                     f"`cconductor retry {paths.root.name} {agent}` to have them written (the same verdict, no "
                     "attempt used)")
    return notes


def after_outcome(paths: SessionPaths, events: EventLog, judged: Judged, *, max_attempts: int) -> None:
    """The repair memory (learning from a merge; ``known_repairs`` added to a rejection's retry instructions,
    which are then written again) and the outcome's event. The archive copy of a merge is written with the
    views (commit/archive.py)."""
    outcome, artifact_set, record = judged.outcome, judged.artifact_set, judged.record
    agent = outcome.agent
    if outcome.status == "merged":
        if record is not None:
            on_merge(paths, events, agent, record["raw"])  # never raises: a failure is a warning event
        events.emit("merge.committed", f"{agent}: attempt {outcome.attempt} merged as commit "
                    f"{outcome.seq}", agent=agent, attempt=outcome.attempt, seq=outcome.seq,
                    warnings=[p.to_dict() for p in outcome.problems])
    elif outcome.status == "noop":
        events.emit("merge.noop", f"{agent}: artifact set already merged; lock consumed",
                    agent=agent, seq=outcome.seq)
    elif outcome.status == "rejected":
        instructions = _instructions(judged, max_attempts)
        on_rejection(paths, events, agent, outcome.problems,  # never raises: adds known_repairs if any
                     {f.rel: f.data for f in artifact_set.files} if artifact_set else {}, instructions)
        if "known_repairs" in instructions and locks.not_a_file(paths.retry_instructions(agent)) is None:
            atomic_write_json(paths.retry_instructions(agent), instructions, root=paths.root)
        events.emit("merge.rejected", f"{agent}: attempt {outcome.attempt} rejected "
                    f"({instructions['error_class']}): {instructions['action_required']}",
                    agent=agent, attempt=outcome.attempt, error_class=instructions["error_class"],
                    problems=[p.to_dict() for p in errors(outcome.problems)])
    else:
        events.emit("lock.deferred", f"{agent}: artifact folder changed while reading; will retry", agent=agent)


def _instructions(judged: Judged, max_attempts: int) -> dict[str, Any]:
    outcome, artifact_set = judged.outcome, judged.artifact_set
    return build_retry_instructions(outcome.agent, outcome.attempt or 1, max_attempts, outcome.problems,
                                    artifact_set.sizes if artifact_set else {})


#: ``session.json``'s key for the last ledger entry whose decision it shows.
RECORDED_SEQ = "recorded_seq"


def record_outcomes(paths: SessionPaths, outcomes: list[Outcome], head: int) -> None:
    """Each decided agent's attempts, state and last commit in ``session.json``, which then shows the
    ledger up to ``head`` (the ledger's head after this sweep's commit)."""
    changes = [o for o in outcomes if o.status != "deferred" and AGENT_NAME_RE.fullmatch(o.agent)]
    now = iso_timestamp()

    def apply(data: dict[str, Any]) -> None:
        for outcome in changes:
            entry = _agent_entry(data, outcome.agent)
            entry["attempts"] = max(entry.get("attempts", 0), outcome.attempt or 0)
            entry["state"] = "rejected" if outcome.status == "rejected" else "merged"
            if outcome.status == "merged":
                entry["last_commit_seq"] = outcome.seq
            entry["updated_at"] = now
        data[RECORDED_SEQ] = max(head, recorded_seq(data))

    if changes:
        update_session(paths, apply)


def record_missing_decisions(paths: SessionPaths, decisions_after: Callable[[int], list[Decision]]) -> None:
    """Show in ``session.json`` the ledger's decisions it does not show yet.

    A process stopped (kill -9) between its commit and its ``session.json`` update leaves them
    there: the file says up to which ledger entry it is current (:data:`RECORDED_SEQ`), and the
    entries after it (``decisions_after(seq)``: seq, agent, action, attempt, record seq) are
    applied in order. A session written before the marker existed is brought up to date whole.
    """
    recorded = recorded_seq(load_session(paths))
    decisions = decisions_after(recorded)
    if decisions:
        update_session(paths, lambda data: show_decisions(data, decisions))


def show_decisions(data: dict[str, Any], decisions: list[Decision]) -> None:
    """Apply to ``data`` (a parsed ``session.json``) the ledger's ``decisions`` after its :data:`RECORDED_SEQ`,
    in order: the one rule for the file and for readers that must not lag behind it (``status``)."""
    start = recorded_seq(data)
    now = iso_timestamp()
    for seq, agent, action, attempt, record_seq in decisions:
        if seq <= start or not AGENT_NAME_RE.fullmatch(agent):
            continue
        entry = _agent_entry(data, agent)
        entry["attempts"] = max(entry.get("attempts", 0), attempt or 0)
        if action == "reject":
            entry["state"] = "rejected"
        else:
            entry["state"] = "merged" if record_seq is not None else "rolled_back"
            entry["last_commit_seq"] = record_seq
        entry["updated_at"] = now
    if decisions:
        data[RECORDED_SEQ] = max(start, decisions[-1][0])


def recorded_seq(data: Mapping[str, Any]) -> int:
    value = data.get(RECORDED_SEQ)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _agent_entry(session: dict[str, Any], agent: str) -> dict[str, Any]:
    """The agent's record in ``session.json``'s ``agents``, created pending when missing."""
    return session.setdefault("agents", {}).setdefault(
        agent, {"attempts": 0, "state": "pending", "last_commit_seq": None}
    )
