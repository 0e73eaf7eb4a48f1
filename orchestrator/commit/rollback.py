"""Roll a session's graph back to an earlier commit (recorded, never destructive)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from filelock import FileLock

from orchestrator.model.clock import iso_timestamp
from orchestrator.model.layout import SessionPaths
from orchestrator.model.problems import Problem
from orchestrator.session.record import update_session


def rollback_session(
    paths: SessionPaths, target: int, after: Callable[[Callable[[], list[Problem]]], None] | None = None
) -> dict[str, int | None]:
    """Restore the namespaces as of ledger entry ``target``; ``after`` gets the full SHACL validation.

    ``after`` lets a higher layer (the run's outputs) recompute what depends on the graph before
    the rollback is announced.
    """
    from orchestrator.commit.processor import Processor
    from orchestrator.commit.views import flush_views

    processor = Processor(paths)
    try:
        with FileLock(paths.mutex):
            changed = processor.store.rollback_to(target, iso_timestamp())
            processor.refresh()
            _record_in_session(paths, changed)
        flush_views(processor, force=True)
        if after is not None:
            after(processor.rdf.validate_full)
        processor.events.emit("graph.rolled_back", f"graph rolled back to ledger entry {target}",
                              to=target, changed=changed)
        return changed
    finally:
        processor.close()


def _record_in_session(paths: SessionPaths, changed: dict[str, int | None]) -> None:
    """``session.json`` shows each rolled-back agent's namespace as the ledger now has it."""
    if not changed:
        return
    now = iso_timestamp()

    def apply(data: dict[str, Any]) -> None:
        agents = data.setdefault("agents", {})
        for agent, record_seq in changed.items():
            entry = agents.setdefault(agent, {"attempts": 0, "state": "pending", "last_commit_seq": None})
            entry["state"] = "merged" if record_seq is not None else "rolled_back"
            entry["last_commit_seq"] = record_seq
            entry["updated_at"] = now

    update_session(paths, apply)
