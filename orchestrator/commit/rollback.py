"""Roll a session's graph back to an earlier commit (recorded, never destructive)."""

from __future__ import annotations

from collections.abc import Callable

from orchestrator.commit.outcomes import record_missing_decisions
from orchestrator.model.clock import iso_timestamp
from orchestrator.model.layout import SessionPaths
from orchestrator.model.problems import Problem
from orchestrator.session.mutex import SessionMutex


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
        with SessionMutex(paths.mutex):
            changed = processor.ledger.rollback_to(target, iso_timestamp())
            processor.refresh()
            record_missing_decisions(paths, processor.ledger.decisions_after)  # the rollback's entries
        flush_views(processor, force=True)
        if after is not None:
            after(processor.rdf.validate_full)
        processor.events.emit("graph.rolled_back", f"graph rolled back to ledger entry {target}",
                              to=target, changed=changed)
        return changed
    finally:
        processor.close()
