"""What judging a submission reads: one frozen bundle, built once by the processor and passed down.

The checks (commit/checks.py), the judging path (commit/judging.py) and the burst (commit/burst/)
take this instead of the processor, so they see exactly what they may use and cannot reach for
anything else. Its fields are never reassigned; the graph it holds changes as merges are decided.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from orchestrator.commit.loaded_graph import LoadedGraph
from orchestrator.contract.schemas import SchemaRegistry
from orchestrator.contract.sourcetexts import TextStore
from orchestrator.model.layout import SessionPaths
from orchestrator.session.events import EventLog
from orchestrator.session.ledger import Ledger

__all__ = ["JudgingContext", "RequiredFiles"]

#: The artifact files an agent must submit (from its definition), by agent name.
RequiredFiles = Callable[[str], Iterable[str]]


@dataclass(frozen=True)
class JudgingContext:
    paths: SessionPaths
    session_id: str
    ledger: Ledger
    events: EventLog
    #: the committed graph in memory, which accepted submissions join
    graph: LoadedGraph
    texts: TextStore
    registry: SchemaRegistry
    required_files: RequiredFiles
    evidence_threshold: float
