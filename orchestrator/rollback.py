"""Roll a session's graph back to an earlier commit (recorded, never destructive)."""

from __future__ import annotations

from filelock import FileLock

from orchestrator.ids import iso_timestamp
from orchestrator.paths import SessionPaths


def rollback_session(paths: SessionPaths, target: int) -> dict[str, int | None]:
    from orchestrator.pipeline import Processor
    from orchestrator.views import flush_views

    processor = Processor(paths)
    try:
        with FileLock(paths.mutex):
            changed = processor.store.rollback_to(target, iso_timestamp())
            processor.refresh()
        flush_views(processor, force=True)
        processor.events.emit("graph.rolled_back", f"graph rolled back to ledger entry {target}",
                              to=target, changed=changed)
        return changed
    finally:
        processor.close()
