"""A lock's outcome, and what it changes in the session folder once the ledger has committed it.

These effects run only after the commit, so a crash before them leaves the lock pending and
processing it again is a no-op; each one is safe to repeat. Merged or already-merged: the lock
and stale retry files go and the artifacts are archived. Rejected: retry instructions are
written and the lock is renamed to ``<agent>.kg.lock.error``. ``session.json`` records each
agent's state.
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


def apply_outcome(paths: SessionPaths, events: EventLog, judged: Judged, *, max_attempts: int) -> None:
    """Consume or rename the lock, write or remove retry instructions, and log the outcome.

    The archive copy of a merge is written with the views (commit/archive.py).
    """
    outcome, artifact_set, record = judged.outcome, judged.artifact_set, judged.record
    agent = outcome.agent
    if outcome.status in ("merged", "noop"):
        if outcome.status == "merged" and record is not None:
            on_merge(paths, events, agent, record["raw"])  # never raises: a failure is a warning event
        locks.consume(paths, agent)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(paths.retry_instructions(agent))
        warnings = [p.to_dict() for p in outcome.problems]
        if outcome.status == "merged":
            events.emit("merge.committed", f"{agent}: attempt {outcome.attempt} merged as commit "
                        f"{outcome.seq}", agent=agent, attempt=outcome.attempt, seq=outcome.seq,
                        warnings=warnings)
        else:
            events.emit("merge.noop", f"{agent}: artifact set already merged; lock consumed",
                        agent=agent, seq=outcome.seq)
    elif outcome.status == "rejected":
        instructions = build_retry_instructions(
            agent, outcome.attempt or 1, max_attempts, outcome.problems,
            artifact_set.sizes if artifact_set else {},
        )
        on_rejection(paths, events, agent, outcome.problems,  # never raises: adds known_repairs if any
                     {f.rel: f.data for f in artifact_set.files} if artifact_set else {}, instructions)
        try:
            atomic_write_json(paths.retry_instructions(agent), instructions, root=paths.root)
        finally:  # even if the instructions cannot be written, the rejection is final: never re-judged for ever
            locks.error(paths, agent)
        events.emit("merge.rejected", f"{agent}: attempt {outcome.attempt} rejected "
                    f"({instructions['error_class']}): {instructions['action_required']}",
                    agent=agent, attempt=outcome.attempt, error_class=instructions["error_class"],
                    problems=[p.to_dict() for p in errors(outcome.problems)])
    else:
        locks.release(paths, agent)
        events.emit("lock.deferred", f"{agent}: artifact folder changed while reading; will retry",
                    agent=agent)


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
        data[RECORDED_SEQ] = max(head, _recorded(data))

    if changes:
        update_session(paths, apply)


def record_missing_decisions(paths: SessionPaths, decisions_after: Callable[[int], list[Decision]]) -> None:
    """Show in ``session.json`` the ledger's decisions it does not show yet.

    A process stopped (kill -9) between its commit and its ``session.json`` update leaves them
    there: the file says up to which ledger entry it is current (:data:`RECORDED_SEQ`), and the
    entries after it (``decisions_after(seq)``: seq, agent, action, attempt, record seq) are
    applied in order. A session written before the marker existed is brought up to date whole.
    """
    recorded = _recorded(load_session(paths))
    decisions = decisions_after(recorded)
    if not decisions:
        return
    now = iso_timestamp()

    def apply(data: dict[str, Any]) -> None:
        start = _recorded(data)
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
        data[RECORDED_SEQ] = max(start, decisions[-1][0])

    update_session(paths, apply)


def _recorded(data: Mapping[str, Any]) -> int:
    value = data.get(RECORDED_SEQ)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _agent_entry(session: dict[str, Any], agent: str) -> dict[str, Any]:
    """The agent's record in ``session.json``'s ``agents``, created pending when missing."""
    return session.setdefault("agents", {}).setdefault(
        agent, {"attempts": 0, "state": "pending", "last_commit_seq": None}
    )
