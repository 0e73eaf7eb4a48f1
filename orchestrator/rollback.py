"""Roll a session's graph back to an earlier commit (recorded, never destructive)."""

from __future__ import annotations

from typing import Any

from filelock import FileLock

from orchestrator.ids import iso_timestamp
from orchestrator.paths import SessionPaths
from orchestrator.session import update_session


def rollback_session(paths: SessionPaths, target: int) -> dict[str, int | None]:
    from orchestrator.pipeline import Processor
    from orchestrator.views import flush_views

    processor = Processor(paths)
    try:
        with FileLock(paths.mutex):
            changed = processor.store.rollback_to(target, iso_timestamp())
            processor.refresh()
            _record_in_session(paths, changed)
        flush_views(processor, force=True)
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
