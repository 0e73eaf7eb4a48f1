"""What judging a submission works with: the processor it reads (:class:`Judge`) and its results between checks.

Kept apart from the checks themselves (commit/evaluation.py) because the batch judging, the
read-ahead helpers and the processor all pass these around.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from orchestrator.commit.ahead import Read
from orchestrator.contract.artifacts import ArtifactSet
from orchestrator.model.problems import Problem

if TYPE_CHECKING:
    from orchestrator.commit.lazy_rdf import LazyRdf
    from orchestrator.contract.schemas import SchemaRegistry
    from orchestrator.contract.sourcetexts import TextStore
    from orchestrator.graph.state import GraphState
    from orchestrator.model.layout import SessionPaths
    from orchestrator.rdf.convert import AgentGraph
    from orchestrator.session.events import EventLog
    from orchestrator.session.ledger import Store

__all__ = ["Assessed", "Judge", "Pending", "Reads", "attempt_for"]


@dataclass
class Pending:
    """A submission that passed every check but SHACL: its graph is in the union, ``undo`` takes it out."""

    name: str
    attempt: int
    artifact_set: ArtifactSet
    problems: list[Problem]
    record: dict[str, Any]
    undo: Callable[[], None]
    #: SHACL's verdict when a helper reached it (the agent judged alone: ahead.Speculation), else None
    verdict: list[Problem] | None = None
    #: its graph is in the union (else LazyRdf installs it from the record when a merge needs it)
    installed: bool = True
    #: its TriG block, rendered where its graph was built (a helper), for the views
    rendered: bytes | None = None


@dataclass
class Assessed:
    """A submission that passed every check before SHACL: its problems (warnings), record and graph."""

    problems: list[Problem]
    record: dict[str, Any]
    graph: AgentGraph


class Reads(Protocol):
    """Where the judging takes a helper's read of an agent (commit/readahead.py)."""

    def take(self, name: str) -> Read | None: ...


def attempt_for(attempts: int, rejected_sha: str | None, sha: str) -> int:
    """The attempt number of a submission: a lock re-seen after a crash (same rejected set) keeps its number.

    ``rejected_sha``: the artifact sha256 of the agent's last ledger entry if that is a rejection.
    """
    return attempts if rejected_sha == sha else attempts + 1


class Judge(Protocol):
    """What the checks read: the processor's session, ledger and in-memory graph."""

    paths: SessionPaths
    session_id: str
    events: EventLog
    store: Store
    state: GraphState
    lazy: LazyRdf
    texts: TextStore
    registry: SchemaRegistry
    required_files: Callable[[str], Iterable[str]]
    evidence_threshold: float

    @property
    def readahead(self) -> Reads: ...
