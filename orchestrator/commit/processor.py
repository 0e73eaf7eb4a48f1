"""The path from a ``<agent>.kg.lock`` signal to a committed merge or to retry instructions.

Per batch, under the session's merge mutex: read and validate each pending agent's
artifacts, merge them against the in-memory graph, bind evidence, run incremental
SHACL, then commit every accepted merge in one transaction (group commit) and only
then consume the locks. A crash at any point leaves each lock merged or pending.
What a committed outcome then changes in the session folder is :mod:`orchestrator.commit.outcomes`.
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from orchestrator.commit import locks
from orchestrator.commit.batch_judge import judge_batch
from orchestrator.commit.evaluation import Evaluation
from orchestrator.commit.index_keys import record_index
from orchestrator.commit.internal_errors import internal_error_problem, log_internal_error
from orchestrator.commit.judge import Pending
from orchestrator.commit.outcomes import Outcome, Staged, apply_outcome, record_missing_decisions, record_outcomes
from orchestrator.commit.readahead import ReadAhead
from orchestrator.commit.retry import error_class
from orchestrator.contract.artifacts import ArtifactSet
from orchestrator.contract.schemas import SchemaRegistry
from orchestrator.contract.sourcetexts import TextStore
from orchestrator.graph.evidence import DEFAULT_THRESHOLD
from orchestrator.graph.state import GraphState
from orchestrator.model.clock import iso_timestamp
from orchestrator.model.errors import SessionGone
from orchestrator.model.layout import SessionPaths
from orchestrator.model.problems import errors
from orchestrator.session.events import EventLog
from orchestrator.session.mutex import SessionMutex
from orchestrator.session.record import load_session

if TYPE_CHECKING:
    from orchestrator.rdf.state import RdfState
from orchestrator.session.ledger import LedgerEntry, Store

__all__ = ["Outcome", "Processor", "RequiredFiles", "TextStore"]

RequiredFiles = Callable[[str], Iterable[str]]


class Processor:
    """One per session and process; keeps the graph in memory between batches."""

    def __init__(
        self,
        paths: SessionPaths,
        *,
        max_attempts: int = 3,
        evidence_threshold: float = DEFAULT_THRESHOLD,
        required_files: RequiredFiles | None = None,
        events: EventLog | None = None,
        cached_records: bool = True,
    ):
        """``cached_records=False``: load each record from the ledger itself, not from its stored core
        (``validate``, which must check what was committed even if a derived row were damaged)."""
        from orchestrator.commit.lazy_rdf import LazyRdf

        self.paths = paths
        self.session_id = str(load_session(paths)["id"])
        paths.state.mkdir(exist_ok=True)
        self.events = events or EventLog(paths.events, paths.events_mutex)
        self.store = Store(paths.store_db)
        self.registry = SchemaRegistry.default()
        self.max_attempts = max_attempts
        self.evidence_threshold = evidence_threshold
        self.required_files = required_files or (lambda agent: ())
        self._cached_records = cached_records
        self.readahead = ReadAhead(paths, self.required_files, evidence_threshold, self.session_id)
        self.state = GraphState(self.session_id)
        self.lazy = LazyRdf(self.session_id, self.state, self.store)
        self.texts = TextStore(paths)
        self.lock = threading.RLock()
        self._mutex = SessionMutex(paths.mutex)
        self._session_checked_at = -1
        #: Outcomes that were committed but whose effects failed (the watcher reports them).
        self.failures: list[str] = []
        self.refresh()

    def close(self) -> None:
        self.readahead.close()
        self.store.close()

    @property
    def rdf(self) -> RdfState:
        """The whole union graph, every agent installed (full validation, exports); merges load less."""
        with self.lock:
            return self.lazy.ensure_all()

    # -- loading -----------------------------------------------------------------
    def refresh(self) -> None:
        """Catch up with commits made by other processes since we last looked."""
        head = self.store.head()
        if head == self.state.head_seq:
            return
        with self.lock:
            if self.state.head_seq == 0 and self._cached_records and not self.state.records:
                self._start()
            else:
                for agent, record in self.store.current_changes(self.state.head_seq,
                                                                cached=self._cached_records).items():
                    self._install(agent, record)
            self.state.head_seq = head

    def _start(self) -> None:
        """Start from the committed graph without reading its records: only each agent's record seq.

        Records committed before their keys were indexed (an older version's store) are read now,
        held in memory, and their keys indexed for the next start.
        """
        rows = self.store.current_seqs()
        self.state.start_from(self.store, {agent: seq for agent, seq, _ in rows})
        unindexed = self.state.adopt([agent for agent, _, indexed in rows if not indexed])
        for agent, record in unindexed.items():
            self.lazy.note(agent, record)
        if unindexed:
            with contextlib.suppress(sqlite3.OperationalError):  # busy: indexed by a later start
                self.store.put_keys([(record["seq"], record_index(record, self.lazy.references_of(agent)))
                                     for agent, record in unindexed.items()])

    def _install(self, agent: str, record: dict[str, Any] | None) -> None:
        self.state.put(agent, record)
        self.lazy.note(agent, record)

    # -- processing ----------------------------------------------------------------
    def process_pending(self, only: Iterable[str] | None = None) -> list[Outcome]:
        wanted = set(only) if only is not None else None
        with self._mutex, self.lock:
            self.refresh()
            self._reconcile_session()
            self._rename_undecodable_locks()
            names = [n for n in locks.waiting(self.paths) if wanted is None or n in wanted]
            if not names:
                return []
            self.readahead.start(names, self._attempt_bases)
            with self.events.deferred():  # the batch's judging events: one append before the commit
                staged = judge_batch(self, names, self._evaluate_isolated)
            with self.events.deferred():  # and its outcomes: one append after the commit
                self._commit(staged)
        return [outcome for outcome, _, _ in staged]

    def _attempt_bases(self, names: list[str]) -> dict[str, tuple[int, str | None]]:
        """The attempt bases of the agents without a record (helpers may judge those whole)."""
        return self.store.attempt_bases([n for n in names if n not in self.state.records])

    def _evaluate_isolated(self, name: str, ahead: bool = False) -> Staged | Pending | None:
        """Evaluate one agent; an unexpected failure becomes that agent's rejection, never the batch's.

        ``ahead``: stop before SHACL (commit/batch_judge.py validates a window of agents at once).
        """
        committed = self.state.records.get(name)
        try:
            evaluation = Evaluation(self)
            return evaluation.stage(name) if ahead else evaluation.evaluate(name)
        except SessionGone:
            raise
        except Exception as exc:
            # Undo whatever the failed evaluation installed: the graph goes back to the committed record.
            with contextlib.suppress(Exception):
                self.state.put(name, committed)
                self.lazy.restore(name, committed)
            detail = log_internal_error(self.paths, f"evaluating {name}", exc)
            self.events.emit("processor.agent_failed", f"{name}: internal error while evaluating: {exc!r}",
                             agent=name, error=repr(exc), log=detail)
            problem = internal_error_problem(name, exc, detail)
            return Outcome(name, "rejected", self.store.attempts(name) + 1, [problem]), None, None

    def _rename_undecodable_locks(self) -> None:
        """A lock whose file name is not UTF-8 cannot be logged or recorded: give it a printable name.

        The name is then an invalid agent name (it holds a backslash), so it is rejected as usual.
        """
        for name in locks.pending(self.paths):
            shown = name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
            if shown != name:
                locks.rename_pending(self.paths, name, shown)

    # -- committing ------------------------------------------------------------------
    def _commit(self, staged: list[Staged]) -> None:
        now = iso_timestamp()
        entries, owners = [], []
        for outcome, artifact_set, record in staged:
            if outcome.status == "merged" and record is not None and artifact_set is not None:
                entries.append(LedgerEntry(outcome.agent, "merge", artifact_set.sha256, outcome.attempt, now,
                                           {"files": [f.name for f in artifact_set.files]}, record,
                                           keys=record_index(record, self.lazy.references_of(outcome.agent))))
                owners.append(outcome)
            elif outcome.status == "rejected" and not self._already_rejected(outcome, artifact_set):
                entries.append(LedgerEntry(outcome.agent, "reject",
                                           artifact_set.sha256 if artifact_set else None, outcome.attempt, now,
                                           {"error_class": error_class(outcome.problems),
                                            "problems": len(errors(outcome.problems))}))
                owners.append(outcome)
        try:
            seqs = self.store.commit(entries) if entries else []
        except Exception:
            self._reload()
            raise
        for outcome, seq in zip(owners, seqs, strict=True):
            outcome.seq = seq
            if outcome.status == "merged":
                self.state.records[outcome.agent]["seq"] = seq
        if seqs:
            self.state.head_seq = self.store.head()
        for item in staged:
            try:
                apply_outcome(self.paths, self.events, item, max_attempts=self.max_attempts)
            except SessionGone:
                raise
            except Exception as exc:  # committed already: the claim stays and the next batch finishes the job
                detail = log_internal_error(self.paths, f"recording the outcome of {item[0].agent}", exc)
                self.events.emit("processor.agent_failed",
                                 f"{item[0].agent}: internal error while recording its outcome: {exc!r}",
                                 agent=item[0].agent, error=repr(exc), log=detail)
                self.failures.append(f"{item[0].agent}: {exc}")
        record_outcomes(self.paths, staged, self.state.head_seq)

    def _already_rejected(self, outcome: Outcome, artifact_set: ArtifactSet | None) -> bool:
        last = self.store.last_entry(outcome.agent)
        sha = artifact_set.sha256 if artifact_set else None
        return bool(last and last["action"] == "reject" and last["artifact_sha256"] == sha
                    and last["attempt"] == outcome.attempt)

    def _reload(self) -> None:
        from orchestrator.commit.lazy_rdf import LazyRdf

        self.state = GraphState(self.session_id)
        self.lazy = LazyRdf(self.session_id, self.state, self.store)
        self.refresh()

    def _reconcile_session(self) -> None:
        """Record in session.json the decisions a crashed process committed but could not record there.

        Runs under the merge mutex (no commit can race it), once per new head of the ledger.
        """
        if self._session_checked_at == self.state.head_seq:
            return
        record_missing_decisions(self.paths, self.store.decisions_after)
        self._session_checked_at = self.state.head_seq
