"""The path from ``<agent>.kg.lock`` signals to committed merges or retry instructions.

A sweep, under the session's merge mutex: catch up with other processes' commits, take every
waiting lock, judge each submission (commit/judging.py: claim -> read -> checks -> SHACL ->
verdict), commit every decision in one ledger transaction (group commit), and only then consume
or rename the locks (commit/outcomes.py). A crash at any point leaves each lock merged or pending.
A burst of locks is judged through one seam with the same verdicts (commit/burst/). The views
are written from the committed state (commit/views.py).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from functools import partial

from orchestrator.commit import locks
from orchestrator.commit.burst import BURST_MIN, judge_burst
from orchestrator.commit.context import JudgingContext, RequiredFiles
from orchestrator.commit.index_keys import record_index
from orchestrator.commit.internal_errors import log_internal_error
from orchestrator.commit.judging import judge
from orchestrator.commit.lazy_rdf import LazyRdf
from orchestrator.commit.loaded_graph import LoadedGraph
from orchestrator.commit.outcomes import (
    Judged,
    Outcome,
    after_outcome,
    record_missing_decisions,
    record_outcomes,
    settle_outcome,
)
from orchestrator.commit.retry import error_class
from orchestrator.commit.views import Views
from orchestrator.contract.schemas import SchemaRegistry
from orchestrator.contract.sourcetexts import TextStore
from orchestrator.graph.evidence import DEFAULT_THRESHOLD
from orchestrator.graph.state import GraphState
from orchestrator.model.clock import iso_timestamp
from orchestrator.model.errors import SessionGone
from orchestrator.model.layout import SessionPaths
from orchestrator.model.problems import errors
from orchestrator.rdf.state import RdfState
from orchestrator.session.events import EventLog
from orchestrator.session.ledger import Ledger, LedgerEntry
from orchestrator.session.mutex import SessionMutex
from orchestrator.session.record import load_session

__all__ = ["Outcome", "Processor", "RequiredFiles", "TextStore"]


class Processor:
    """One per session and process; keeps the committed graph in memory between sweeps."""

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
        self.paths = paths
        self.session_id = str(load_session(paths)["id"])
        paths.state.mkdir(exist_ok=True)
        self.events = events or EventLog(paths.events, paths.events_mutex)
        self.ledger = Ledger(paths.store_db)
        self.max_attempts = max_attempts
        self.graph = LoadedGraph(self.session_id, self.ledger, cached_records=cached_records)
        self.context = JudgingContext(
            paths, self.session_id, self.ledger, self.events, self.graph, TextStore(paths),
            SchemaRegistry.default(), required_files or (lambda agent: ()), evidence_threshold,
        )
        #: Held while the graph is read or changed (sweeps, views flushes in a background thread).
        self.lock = threading.RLock()
        self.views = Views(self.context, self.lock)
        self._mutex = SessionMutex(paths.mutex)
        self._session_checked_at = -1
        #: Outcomes that were committed but whose effects failed (the watcher reports them).
        self.failures: list[str] = []
        #: What the user must do about an outcome that was recorded but not fully signalled (watch prints them).
        self.notices: list[str] = []
        self.refresh()

    def close(self) -> None:
        self.ledger.close()

    # -- the graph ------------------------------------------------------------------------
    @property
    def state(self) -> GraphState:
        return self.graph.state

    @property
    def lazy(self) -> LazyRdf:
        return self.graph.lazy

    @property
    def rdf(self) -> RdfState:
        """The whole union graph, every agent installed (full validation, exports); merges load less."""
        with self.lock:
            return self.graph.lazy.ensure_all()

    @property
    def texts(self) -> TextStore:
        return self.context.texts

    @property
    def registry(self) -> SchemaRegistry:
        return self.context.registry

    def refresh(self) -> None:
        """Catch up with commits made by other processes since we last looked."""
        with self.lock:
            self.graph.catch_up()

    # -- a sweep ----------------------------------------------------------------------------
    def process_pending(self, only: Iterable[str] | None = None) -> list[Outcome]:
        """Judge and commit every waiting lock (or those of ``only``); the outcomes, in order."""
        wanted = set(only) if only is not None else None
        with self._mutex, self.lock:
            self.refresh()
            self._reconcile_session()
            self._rename_undecodable_locks()
            names = [n for n in locks.waiting(self.paths) if wanted is None or n in wanted]
            if not names:
                return []
            with self.events.deferred():  # the sweep's judging events: one append before the commit
                if len(names) >= BURST_MIN:
                    judged = judge_burst(self.context, names)
                else:
                    judged = [j for name in names if (j := judge(self.context, name)) is not None]
            with self.events.deferred():  # and its outcomes: one append after the commit
                committed = self._commit(judged)
        return [j.outcome for j in committed]

    def _rename_undecodable_locks(self) -> None:
        """A lock whose file name is not UTF-8 cannot be logged or recorded: give it a printable name.

        The name is then an invalid agent name (it holds a backslash), so it is rejected as usual.
        """
        for name in locks.pending(self.paths):
            shown = name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
            if shown != name:
                locks.rename_pending(self.paths, name, shown)

    # -- committing ---------------------------------------------------------------------------
    def _commit(self, judged: list[Judged]) -> list[Judged]:
        """One ledger transaction for the sweep's decisions, then each lock's outcome in the session folder."""
        now = iso_timestamp()
        entries: list[LedgerEntry] = []
        owners: list[int] = []
        for index, item in enumerate(judged):
            outcome, artifact_set, record = item.outcome, item.artifact_set, item.record
            if outcome.status == "merged" and record is not None and artifact_set is not None:
                entries.append(LedgerEntry(outcome.agent, "merge", artifact_set.sha256, outcome.attempt, now,
                                           {"files": [f.name for f in artifact_set.files],
                                            "claim": locks.claim_key(self.paths, outcome.agent)}, record,
                                           keys=record_index(record, self.graph.lazy.references_of(outcome.agent))))
                owners.append(index)
            elif outcome.status == "rejected" and not self._already_rejected(item):
                entries.append(LedgerEntry(outcome.agent, "reject",
                                           artifact_set.sha256 if artifact_set else None, outcome.attempt, now,
                                           {"error_class": error_class(outcome.problems),
                                            "problems": len(errors(outcome.problems)),
                                            "claim": locks.claim_key(self.paths, outcome.agent)}))
                owners.append(index)
        try:
            seqs = self.ledger.commit(entries) if entries else []
        except Exception:
            self.graph.reset()
            raise
        committed = list(judged)
        for index, seq in zip(owners, seqs, strict=True):
            item = judged[index]
            committed[index] = Judged(_with_seq(item.outcome, seq), item.artifact_set, item.record)
            if item.outcome.status == "merged":
                self.graph.committed(item.agent, seq)
        if seqs:
            self.graph.state.head_seq = self.ledger.head()
        outcomes = [item.outcome for item in committed]
        # The ledger is the truth; what follows only shows it, smallest and most-read first, so a kill at
        # any moment leaves the least behind: session.json (one atomic write for the whole sweep), then each
        # lock's signal and retry instructions, then the slower extras (repair memory, events). Whatever a
        # kill leaves undone, the next sweep (process, watch) finishes: session.json from the ledger
        # (_reconcile_session), each claim still in .cconductor/claims/ judged again to the same verdict.
        self._effect("recording the sweep in session.json", lambda: record_outcomes(
            self.paths, outcomes, self.graph.head_seq))
        for item in committed:
            self._effect(f"recording the outcome of {item.agent}", partial(self._settle, item), item.agent)
        for item in committed:
            self._effect(f"recording the outcome of {item.agent}", partial(
                after_outcome, self.paths, self.events, item, max_attempts=self.max_attempts), item.agent)
        return committed

    def _settle(self, item: Judged) -> None:
        for note in settle_outcome(self.paths, item, max_attempts=self.max_attempts):
            self.events.emit("lock.signal_blocked", f"{item.agent}: {note}", agent=item.agent)
            self.notices.append(f"{item.agent}: {note}")

    def _effect(self, doing: str, effect: Callable[[], object], agent: str | None = None) -> None:
        """One effect of a committed sweep; a failure is logged and left to the next sweep, never raised."""
        try:
            effect()
        except SessionGone:
            raise
        except Exception as exc:  # committed already: the claim stays and the next sweep finishes the job
            detail = log_internal_error(self.paths, doing, exc)
            self.events.emit("processor.agent_failed", f"{agent or 'sweep'}: internal error while {doing}: {exc!r}",
                             agent=agent, error=repr(exc), log=detail)
            self.failures.append(f"{agent or 'sweep'}: {exc}")

    def _already_rejected(self, item: Judged) -> bool:
        """The same set was rejected at the same attempt already (a lock re-seen after a crash)."""
        last = self.ledger.last_entry(item.agent)
        sha = item.artifact_set.sha256 if item.artifact_set else None
        return bool(last and last["action"] == "reject" and last["artifact_sha256"] == sha
                    and last["attempt"] == item.outcome.attempt)

    def _reconcile_session(self) -> None:
        """Record in session.json the decisions a crashed process committed but could not record there.

        Runs under the merge mutex (no commit can race it), once per new head of the ledger.
        """
        if self._session_checked_at == self.graph.head_seq:
            return
        record_missing_decisions(self.paths, self.ledger.decisions_after)
        self._session_checked_at = self.graph.head_seq


def _with_seq(outcome: Outcome, seq: int) -> Outcome:
    return Outcome(outcome.agent, outcome.status, outcome.attempt, outcome.problems, seq)
