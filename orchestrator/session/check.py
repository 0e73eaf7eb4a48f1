"""Is a session folder whole? A damaged one is named precisely instead of failing with a traceback.

Checked before any command touches a session (cheap: a few ``stat`` calls and one small JSON
file). What can be rebuilt from the ledger (``knowledge-graph.json``, ``knowledge-graph.trig``)
is rebuilt by the next flush; what cannot (the ledger itself) is reported with what to do.
"""

from __future__ import annotations

import json
import stat
from pathlib import Path
from typing import Any

from orchestrator.model.errors import SessionDamaged
from orchestrator.model.layout import SessionPaths

_RESTORE = "restore it from a backup, or start a new session with `cconductor new`"


def _kind(path: Path) -> str | None:
    """'file', 'folder', 'other' or None (missing); symbolic links are not followed."""
    try:
        mode = path.lstat().st_mode
    except FileNotFoundError:
        return None
    except OSError:
        return "other"
    if stat.S_ISREG(mode):
        return "file"
    if stat.S_ISDIR(mode):
        return "folder"
    return "other"


def check_session_folder(paths: SessionPaths) -> dict[str, Any]:
    """Return ``session.json``'s content, or raise SessionDamaged naming the damaged file and the fix."""
    manifest = _check_manifest(paths)
    state = paths.state
    kind = _kind(state)
    if kind != "folder":
        what = "is missing" if kind is None else "is not a folder"
        raise SessionDamaged(
            f"{state} {what}: it holds the session's ledger of every merge; {_RESTORE}"
        )
    if _kind(paths.store_db) != "file":
        raise SessionDamaged(f"{paths.store_db} is missing or not a file: it is the session's ledger; {_RESTORE}")
    for mutex in (paths.mutex, paths.session_mutex, paths.events_mutex, state / "views.mutex"):
        if _kind(mutex) not in (None, "file"):
            raise SessionDamaged(
                f"{mutex} is not a file: it is a lock file cconductor creates; remove it (nothing is lost) and run "
                "the command again"
            )
    if _kind(paths.archive) not in (None, "folder"):
        raise SessionDamaged(
            f"{paths.archive} is not a folder: it keeps readable copies of merged artifacts; move it aside and run "
            "the command again (the copies are rewritten from the ledger)"
        )
    for view in (paths.kg_json, paths.kg_trig):
        if _kind(view) not in (None, "file"):
            raise SessionDamaged(
                f"{view} is not a file: it is a view of the ledger; move it aside and run the command again "
                "(it is rebuilt from the ledger)"
            )
    return manifest


def _check_manifest(paths: SessionPaths) -> dict[str, Any]:
    path = paths.session_json
    kind = _kind(path)
    if kind != "file":
        raise SessionDamaged(f"{path} is {'missing' if kind is None else 'not a file'}: {_RESTORE}")
    try:
        data = json.loads(path.read_bytes().decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise SessionDamaged(f"{path} is not valid JSON ({exc}); it is only ever written atomically by "
                             f"cconductor, so {_RESTORE}") from None
    if not isinstance(data, dict):
        raise SessionDamaged(f"{path} must hold a JSON object, not {type(data).__name__}; {_RESTORE}")
    for key, wanted in (("id", str), ("query", str), ("status", str)):
        if not isinstance(data.get(key), wanted) or not data.get(key):
            raise SessionDamaged(
                f"{path}: /{key} is {json.dumps(data.get(key))}; it must be a non-empty string. Put back the "
                f"value it had (the session id is the folder's name, {paths.root.name!r}) or {_RESTORE}"
            )
    for key in ("agents", "options"):
        if key in data and not isinstance(data[key], dict):
            raise SessionDamaged(f"{path}: /{key} is {json.dumps(data[key])}; it must be an object ({{}} if empty)")
    for agent, entry in (data.get("agents") or {}).items():
        if not isinstance(entry, dict):
            raise SessionDamaged(
                f"{path}: /agents/{agent} is {json.dumps(entry)}; it must be an object; remove the entry "
                "(it is rebuilt from the ledger) or restore the file"
            )
    return data
