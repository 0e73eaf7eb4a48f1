"""The committed graph a processor holds in memory, kept in step with the ledger.

Two views of the same records: :class:`~orchestrator.graph.state.GraphState` (each agent's current
record and the lookups merges need) and :class:`~orchestrator.commit.lazy_rdf.LazyRdf` (the SHACL
union of the agents a merge's validation reaches). Every change goes through :meth:`put`, so the
two never disagree. Not thread-safe: the processor serialises calls under its lock.
"""

from __future__ import annotations

import contextlib
import sqlite3

from orchestrator.commit.index_keys import record_index
from orchestrator.commit.lazy_rdf import LazyRdf
from orchestrator.graph.state import GraphState
from orchestrator.model.records import Record
from orchestrator.rdf.state import RdfState
from orchestrator.session.ledger import Ledger

__all__ = ["LoadedGraph"]


class LoadedGraph:
    """Each agent's current record and the union graph of those a validation needs."""

    def __init__(self, session_id: str, ledger: Ledger, *, cached_records: bool = True) -> None:
        """``cached_records=False``: load each record from the ledger itself, not from its stored core
        (``validate``, which must check what was committed even if a derived row were damaged)."""
        self.session_id = session_id
        self.ledger = ledger
        self.cached_records = cached_records
        self.state = GraphState(session_id)
        self.lazy = LazyRdf(session_id, self.state, ledger)

    @property
    def rdf(self) -> RdfState:
        """The union graph as far as it is installed (merges install what their validation reaches)."""
        return self.lazy.rdf

    @property
    def head_seq(self) -> int:
        return self.state.head_seq

    def put(self, agent: str, record: Record | None, *, staged: bool = False) -> None:
        """``agent``'s current record is now ``record`` (None: it has none). ``staged``: the union already
        holds its graph (the merge just validated it)."""
        self.state.put(agent, record)
        self.lazy.note(agent, record, staged=staged)

    def committed(self, agent: str, seq: int) -> None:
        """The ledger committed ``agent``'s current record as entry ``seq``."""
        self.state.records[agent]["seq"] = seq
        self.lazy.committed(agent, seq)

    def catch_up(self) -> None:
        """Take in the commits made since the last look (by any process)."""
        head = self.ledger.head()
        if head == self.state.head_seq:
            return
        if self.state.head_seq == 0 and self.cached_records and not self.state.records:
            self._start()
        else:
            for agent, record in self.ledger.current_changes(self.state.head_seq,
                                                             cached=self.cached_records).items():
                self.put(agent, record)
        self.state.head_seq = head

    def reset(self) -> None:
        """Forget everything held (a failed commit) and read the committed graph again."""
        self.state = GraphState(self.session_id)
        self.lazy = LazyRdf(self.session_id, self.state, self.ledger)
        self.catch_up()

    def _start(self) -> None:
        """Start from the committed graph without reading its records: only each agent's record seq.

        Records committed before their keys were indexed (an older version's store) are read now,
        held in memory, and their keys indexed for the next start.
        """
        rows = self.ledger.current_seqs()
        self.state.start_from(self.ledger, {agent: seq for agent, seq, _ in rows})
        unindexed = self.state.adopt([agent for agent, _, indexed in rows if not indexed])
        for agent, record in unindexed.items():
            self.lazy.note(agent, record)
        if unindexed:
            with contextlib.suppress(sqlite3.OperationalError):  # busy: indexed by a later start
                self.ledger.put_keys([(record["seq"], record_index(record, self.lazy.references_of(agent)))
                                      for agent, record in unindexed.items()])
