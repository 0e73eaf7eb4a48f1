"""The keys a committed record is indexed under in the store, so a new process finds it unread.

Two questions a merge asks about records it has not loaded: which items have this local id
(bare references, graph/state.py) and which agents reference this one (the SHACL
neighbourhood and a retry's dropped items, commit/lazy_rdf.py).
"""

from __future__ import annotations

from collections.abc import Iterable

from orchestrator.commit.lazy_rdf import REFERENCE_KEY
from orchestrator.graph.state import record_keys
from orchestrator.model.records import Record


def record_index(record: Record, references: Iterable[str]) -> list[tuple[str, str, str]]:
    """Every (kind, key, value) the store indexes ``record`` under; ``references``: the agents it
    cites, as LazyRdf noted them (lazy_rdf.referenced_agents), not walked again."""
    return record_keys(record) + [(REFERENCE_KEY, agent, "") for agent in sorted(references)]
