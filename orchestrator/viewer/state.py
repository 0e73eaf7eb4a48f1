"""The viewer's one accessor of a session's committed state.

Everything the viewer shows about the graph, the session and its quality is read here, and
only here: ``knowledge-graph.json`` (the view written from the ledger with atomic replacement,
as ``cconductor status`` reads it), ``session.json``, ``quality.json``, the lock files and the
ledger (read without a byte written: :mod:`orchestrator.session.ledger_snapshot`). When the
reading commands move to an accessor that checks the view against the ledger, this module is
the one place to switch.
"""

from __future__ import annotations

import contextlib
from functools import lru_cache
from pathlib import Path
from typing import Any

from orchestrator.commit import locks
from orchestrator.model.errors import CconductorError
from orchestrator.model.layout import SessionPaths
from orchestrator.run.missions import Mission, load_mission
from orchestrator.session.ledger_snapshot import read_ledger_snapshot
from orchestrator.viewer.files import JsonCache, list_session_folders, signature

CACHE = JsonCache()


def graph(paths: SessionPaths) -> dict[str, Any]:
    """The committed knowledge graph as its JSON view shows it (empty before the first merge)."""
    value = CACHE.load(paths, paths.kg_json, default={})
    return value if isinstance(value, dict) else {}


def session(paths: SessionPaths) -> dict[str, Any]:
    value = CACHE.load(paths, paths.session_json, default={})
    return value if isinstance(value, dict) else {}


def recorded_quality(paths: SessionPaths) -> dict[str, Any] | None:
    value = CACHE.load(paths, paths.root / "quality.json", default=None)
    return value if isinstance(value, dict) else None


def ledger(paths: SessionPaths) -> list[dict[str, Any]]:
    return read_ledger_snapshot(paths.store_db) or []


def lock_states(paths: SessionPaths) -> dict[str, str]:
    """agent -> pending | claimed | errored, from the lock files (no lock taken)."""
    states = {agent: "errored" for agent in locks.errored(paths)}
    states.update({agent: "claimed" for agent in locks.claimed(paths)})
    states.update({agent: "pending" for agent in locks.pending(paths)})
    return states


def change_marks(paths: SessionPaths) -> dict[str, Any]:
    """What the live page compares between two looks: a part changed when its mark did."""
    lock_names = sorted(f"{state}:{agent}" for agent, state in lock_states(paths).items())
    return {
        "session": signature(paths.session_json),
        "graph": signature(paths.kg_json),
        "quality": signature(paths.root / "quality.json"),
        "locks": lock_names,
        "report": signature(paths.root / "mission-report.md"),
    }


def mission(paths: SessionPaths) -> Mission | None:
    """The session's mission as `run` loads it, or None (a `watch` session has none)."""
    options = session(paths).get("options") or {}
    name = (options.get("mission_source") if isinstance(options, dict) else None) or session(paths).get("mission")
    return _mission(str(name)) if name else None


def mission_of(paths: SessionPaths) -> dict[str, Any] | None:
    """The mission in the form the report takes (as `run` passes it)."""
    loaded = mission(paths)
    return None if loaded is None else {**loaded.to_dict(), "source": str(loaded.source)}


def criteria_of(paths: SessionPaths) -> dict[str, Any]:
    """The success criteria the mission sets, in the form the quality gate takes."""
    loaded = mission(paths)
    return loaded.success_criteria.checked() if loaded else {}


@lru_cache(maxsize=32)
def _mission(name: str) -> Mission | None:
    try:
        return load_mission(name)
    except CconductorError:
        return None


def synthesis_agents(paths: SessionPaths) -> list[str]:
    loaded = mission(paths)
    return list(loaded.phases.synthesis) if loaded and loaded.phases.synthesis else ["synthesis-agent"]


def sessions_rows(sessions_dir: Path) -> list[dict[str, Any]]:
    """One row per session folder, newest first, for the session list."""
    rows: list[dict[str, Any]] = []
    for paths in reversed(list_session_folders(sessions_dir)):
        try:
            data = session(paths)
        except CconductorError as exc:
            rows.append({"id": paths.root.name, "status": "unreadable", "query": str(exc)})
            continue
        quality = None
        with contextlib.suppress(CconductorError):
            quality = recorded_quality(paths)
        rows.append({
            "id": paths.root.name,
            "status": data.get("status"),
            "status_reason": data.get("status_reason"),
            "mission": data.get("mission"),
            "query": data.get("query"),
            "created_at": data.get("created_at"),
            "updated_at": data.get("updated_at"),
            "agents": len(data.get("agents") or {}),
            "score": (quality or {}).get("score"),
        })
    return rows
