"""The keys a committed record is indexed under in the store, so a new process finds it unread.

Two questions a merge asks about records it has not loaded: which items have this local id
(bare references, graph/state.py) and which agents reference this one (the SHACL
neighbourhood and a retry's dropped items, commit/lazy_rdf.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from orchestrator.commit.lazy_rdf import reference_keys
from orchestrator.graph.state import record_keys


def record_index(record: Mapping[str, Any]) -> list[tuple[str, str, str]]:
    """Every (kind, key, value) the store indexes ``record`` under."""
    return record_keys(record) + reference_keys(record)
