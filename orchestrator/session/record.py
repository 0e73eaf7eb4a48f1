"""Creating, finding and updating session folders (``session.json`` is their manifest)."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from orchestrator.model.clock import SESSION_ID_RE, iso_timestamp, new_session_id
from orchestrator.model.errors import SessionNotFound, StoreError
from orchestrator.model.layout import STATE_DIR_NAME, SessionPaths
from orchestrator.session.atomic import atomic_write_json
from orchestrator.session.ledger import Ledger
from orchestrator.session.mutex import SessionMutex

SCHEMA_VERSION = 1
STATUSES = ("created", "running", "completed", "partial", "failed", "budget_exhausted", "interrupted")
SESSIONS_DIR_ENV = "CCONDUCTOR_SESSIONS_DIR"


def default_sessions_dir() -> Path:
    return Path(os.environ.get(SESSIONS_DIR_ENV) or "research-sessions")


def other_sessions_hint(sessions_dir: Path | None = None) -> str:
    """How to look elsewhere, said for where ``sessions_dir`` came from (the default, $CCONDUCTOR_SESSIONS_DIR
    or --sessions-dir): every message that finds no session says it the same way."""
    from_env = os.environ.get(SESSIONS_DIR_ENV)
    if sessions_dir is None or (sessions_dir == Path("research-sessions") and not from_env):
        return (f"sessions are looked up in ./research-sessions of the current folder unless you pass "
                f"--sessions-dir DIR or set ${SESSIONS_DIR_ENV}")
    if from_env and Path(from_env) == sessions_dir:
        return (f"this is the folder ${SESSIONS_DIR_ENV} names; set it to the folder that holds your sessions, "
                "unset it to use ./research-sessions, or pass --sessions-dir DIR")
    return ("this is the folder given with --sessions-dir; give the folder that holds your sessions, or leave "
            f"the option out to use ${SESSIONS_DIR_ENV} or else ./research-sessions")


def create_session(
    sessions_dir: Path, query: str, mission: str | None = None, options: dict[str, Any] | None = None
) -> SessionPaths:
    """Make a new, empty session folder; ``mkdir`` is exclusive, so ids never collide."""
    sessions_dir.mkdir(parents=True, exist_ok=True)
    while True:
        session_id = new_session_id()
        root = sessions_dir / session_id
        try:
            root.mkdir()
            break
        except FileExistsError:
            continue
    paths = SessionPaths(root.resolve())
    for folder in (paths.artifacts, paths.sources, paths.state):
        folder.mkdir()
    Ledger(paths.store_db).close()  # created now, so processes that open the session later never race to
    now = iso_timestamp()
    atomic_write_json(
        paths.session_json,
        {
            "schema_version": SCHEMA_VERSION,
            "id": session_id,
            "query": query,
            "mission": mission,
            "status": "created",
            "status_reason": None,
            "iteration": 0,
            "created_at": now,
            "updated_at": now,
            "agents": {},
            "options": options or {},
        },
        shared=True,
    )
    return paths


def load_session(paths: SessionPaths) -> dict[str, Any]:
    try:
        data = json.loads(paths.session_json.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise SessionNotFound(
            f"{paths.root} is not a cconductor session (no session.json); "
            "create one with `cconductor new \"query\"`"
        ) from exc
    except json.JSONDecodeError as exc:
        raise StoreError(
            f"{paths.session_json} is not valid JSON ({exc}); restore it from version control "
            "or an editor backup, it is only ever written atomically by cconductor"
        ) from exc
    if not isinstance(data, dict):
        raise StoreError(f"{paths.session_json} must hold a JSON object")
    return data


def recorded_answer(root: Path) -> dict[str, Any] | None:
    """The report's direct answer as ``write_report`` recorded it (text, first_sentence, top_citation).

    None when the session has no report yet, or its session.json cannot be read: the answer is an
    extra for whoever prints a result, never a reason to fail.
    """
    try:
        data = json.loads(SessionPaths(root).session_json.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    answer = data.get("answer") if isinstance(data, dict) else None
    return answer if isinstance(answer, dict) and isinstance(answer.get("text"), str) else None


def update_session(paths: SessionPaths, change: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    """Read-modify-write ``session.json`` under its own cross-process lock."""
    with SessionMutex(paths.session_mutex):
        data = load_session(paths)
        change(data)
        data["updated_at"] = iso_timestamp()
        # the status and the answer: for readers
        atomic_write_json(paths.session_json, data, shared=True, root=paths.root)
    return data


def list_sessions(sessions_dir: Path) -> list[SessionPaths]:
    """Sessions sorted oldest first (ids sort by creation time)."""
    if not sessions_dir.is_dir():
        return []
    found = [
        SessionPaths(entry.resolve())
        for entry in sessions_dir.iterdir()
        if entry.is_dir() and (entry / "session.json").is_file()
    ]
    return sorted(found, key=lambda p: p.root.name)


def resolve_session(spec: str, sessions_dir: Path) -> SessionPaths:
    """Accept a path, a session id, or ``latest``."""
    if spec == "latest":
        sessions = list_sessions(sessions_dir)
        if not sessions:
            raise SessionNotFound(
                f"there are no sessions in {sessions_dir.resolve()}; start one with `cconductor run \"question\"` "
                f"({other_sessions_hint(sessions_dir)})"
            )
        return sessions[-1]
    as_path = Path(spec)
    for candidate in (as_path, sessions_dir / spec):
        # a folder with a damaged session.json is still a session: the health check names the damage
        if (candidate / "session.json").exists() or (candidate / STATE_DIR_NAME / "store.sqlite3").exists():
            return SessionPaths(candidate.resolve())
    hint = "list them with `cconductor sessions`"
    if SESSION_ID_RE.fullmatch(spec):
        hint = f"no such id in {sessions_dir.resolve()}; {other_sessions_hint(sessions_dir)}; {hint}"
    raise SessionNotFound(f"session {spec!r} not found: give a session folder path, an id or 'latest' ({hint})")
