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
import time
from functools import lru_cache
from pathlib import Path
from typing import Any

import orjson

from orchestrator.commit import locks
from orchestrator.commit.vouched import KIND as VOUCHED_VIEWS
from orchestrator.model.errors import CconductorError
from orchestrator.model.layout import SessionPaths
from orchestrator.run.missions import Mission, load_mission
from orchestrator.session.ledger_snapshot import read_derived_snapshot, read_ledger_snapshot
from orchestrator.viewer.files import JsonCache, Unreadable, list_session_folders, signature

CACHE = JsonCache()


def graph(paths: SessionPaths) -> dict[str, Any]:
    """The committed knowledge graph as its JSON view shows it (empty before the first merge)."""
    value = CACHE.load(paths, paths.kg_json, default={})
    return value if isinstance(value, dict) else {}


def _view_sha256(paths: SessionPaths) -> str | None:
    """sha256 of knowledge-graph.json as the viewer shows it (hashed as it was parsed, once per change)."""
    try:
        return CACHE.load_with_sha256(paths, paths.kg_json, default=None)[1]
    except Unreadable:
        return None


def _vouched_sha256(paths: SessionPaths) -> str | None:
    row = read_derived_snapshot(paths.store_db, VOUCHED_VIEWS)
    try:
        body = orjson.loads(row[1]) if row is not None else None
    except orjson.JSONDecodeError:
        return None
    return str(body.get("json")) if isinstance(body, dict) and body.get("json") else None


def graph_warning(paths: SessionPaths) -> str | None:
    """Why the JSON view must not be trusted as shown, or None when the ledger vouches for its bytes.

    The viewer never writes, so it cannot rebuild a view as ``status`` does (orchestrator/commit/committed.py):
    it says so instead. A session whose ledger vouches for no view (made before views were vouched for,
    or nothing merged yet) gets no warning. A flush replaces the file just before it records its digest,
    so a mismatch is looked at twice before it is reported.
    """
    for attempt in range(2):
        expected = _vouched_sha256(paths)
        actual = _view_sha256(paths)
        if expected is None or actual is None or expected == actual:
            return None
        if attempt == 0:
            time.sleep(0.2)
    return (f"{paths.rel(paths.kg_json)} is not the view the ledger recorded for its last commit: it was "
            "edited or replaced after the orchestrator wrote it, so what it shows, verified evidence "
            f"included, may not be what was validated. `cconductor status {paths.root.name}` rebuilds it "
            "from the ledger.")


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
