"""Roll a session's graph back to an earlier commit (recorded, never destructive)."""

from __future__ import annotations

from typing import Any

from filelock import FileLock

from orchestrator.ids import iso_timestamp
from orchestrator.paths import SessionPaths
from orchestrator.session import load_session, update_session


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
        _recompute_quality(paths, processor.rdf.validate_full)
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


def _recompute_quality(paths: SessionPaths, validate: Any) -> None:
    """A finished run's quality.json, status reason and recommendations describe the graph as it now is."""
    import json

    from orchestrator.errors import CconductorError
    from orchestrator.iteration import final_status
    from orchestrator.missions import load_mission
    from orchestrator.reporting import evaluate_quality

    session = load_session(paths)
    if session.get("status") not in ("completed", "partial") or not session.get("mission"):
        return  # a run still going (or one that failed) keeps its own account
    try:
        mission = load_mission(str(session["mission"]))
    except CconductorError:
        return
    graph = json.loads(paths.kg_json.read_text(encoding="utf-8"))
    quality = evaluate_quality(paths, graph, mission)
    status, reason = final_status(quality, len([p for p in validate() if p.is_error]))

    def apply(data: dict[str, Any]) -> None:
        data["status"], data["status_reason"] = status, reason

    update_session(paths, apply)
