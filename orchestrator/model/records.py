"""The core data a merge produces and the ledger keeps: an agent's contribution and its record.

Both are JSON documents (the ledger stores them as JSON, the views are rendered from them), so they
are typed as TypedDicts: the keys every reader may rely on, checked by mypy, with no conversion on
the way in or out. Statuses that used to be strings with their values in comments are ``Literal``s.
"""

from __future__ import annotations

from typing import Any, Literal, NotRequired, TypedDict

__all__ = ["AgentState", "Contribution", "LedgerAction", "OutcomeStatus", "Record", "RecordFile"]

#: What became of one submission: merged, rejected (retry instructions written), already merged
#: (``noop``: the same artifact set as the agent's current record), or ``deferred`` (its folder was
#: still being written; judged again next time).
OutcomeStatus = Literal["merged", "rejected", "noop", "deferred"]
#: What a ledger entry records.
LedgerAction = Literal["merge", "reject", "rollback"]
#: An agent's state in ``session.json`` (``running`` and ``failed`` are the run's: an agent process).
AgentState = Literal["pending", "merged", "rejected", "running", "failed", "rolled_back"]


class Contribution(TypedDict):
    """What one accepted artifact set adds to the graph: its items, with global ids (``agent:local``),
    resolved references and provenance, by collection (model/kinds.py)."""

    agent: str
    attempt: int
    merged_at: str
    artifact_sha256: str
    #: artifact file name -> its sha256
    files: dict[str, str]
    #: collection ("claims", "sources", ...) -> its items
    items: dict[str, list[dict[str, Any]]]


class RecordFile(TypedDict):
    """One file of a merged artifact set."""

    name: str
    rel: str
    sha256: str
    size: int | None


class Record(TypedDict):
    """An agent's merged submission as the ledger keeps it (one per merge; the current one is in the graph)."""

    agent: str
    attempt: int
    merged_at: str
    artifact_sha256: str
    files: list[RecordFile]
    #: the artifact files as submitted (left in the store when a record is loaded: session/record_rows.py)
    raw: dict[str, Any]
    #: the agent's files merged into one object: its namespace in knowledge-graph.json (also left in the store)
    namespace: dict[str, Any]
    contribution: Contribution
    #: the ledger entry that committed it; absent until then
    seq: NotRequired[int]
