"""The viewer's one accessor of a session's committed state.

Everything the viewer shows about the graph, the session and its quality is read here, and
only here: ``knowledge-graph.json`` (the view written from the ledger with atomic replacement,
as ``cconductor status`` reads it), ``session.json``, ``quality.json``, the lock files and the
ledger (read without a byte written: :mod:`orchestrator.session.ledger_snapshot`). The view is
checked against what the ledger vouches for by the rules ``status`` applies
(:mod:`orchestrator.commit.committed`); where it cannot rebuild a view (it never writes), it says why
(:func:`graph_warning`) and refuses to present it as validated (:func:`require_vouched`). A damaged
session file makes the pages that need it say so (:func:`damaged`), not the others.
"""

from __future__ import annotations

import os
import stat
import threading
import time
from functools import lru_cache
from pathlib import Path
from typing import Any

import orjson

from orchestrator.commit import locks
from orchestrator.commit.committed import moved_texts
from orchestrator.commit.vouched import KIND as VOUCHED_VIEWS
from orchestrator.commit.vouched import file_key
from orchestrator.model.errors import CconductorError
from orchestrator.model.layout import SessionPaths
from orchestrator.run.missions import Mission, load_mission
from orchestrator.session.ledger_snapshot import (
    ledger_readable,
    read_derived_snapshot,
    read_ledger_snapshot,
    read_rejected_last,
)
from orchestrator.viewer.files import (
    JsonCache,
    Unreadable,
    list_session_folders,
    marker_problem,
    open_file,
    remember,
    signature,
)

CACHE = JsonCache()


def graph(paths: SessionPaths) -> dict[str, Any]:
    """The committed knowledge graph as its JSON view shows it (empty before the first merge)."""
    try:
        value = CACHE.load(paths, paths.kg_json, default={})
    except Unreadable as exc:
        raise Unreadable(f"{exc}; {fix_of(paths, paths.kg_json)}") from None
    return value if isinstance(value, dict) else {}


def _view_sha256(paths: SessionPaths) -> str | None:
    """sha256 of knowledge-graph.json as the viewer shows it (hashed as it was parsed, once per change)."""
    try:
        return CACHE.load_with_sha256(paths, paths.kg_json, default=None)[1]
    except Unreadable:
        return None


READ_AGAIN = 0.2


def _vouched_row(paths: SessionPaths) -> tuple[bool, dict[str, Any] | None]:
    """(the ledger could be read, what its newest views row says: the views' sha256 and the stored texts)."""
    if not ledger_readable(paths.store_db):
        return False, None
    row = read_derived_snapshot(paths.store_db, VOUCHED_VIEWS)
    try:
        body = orjson.loads(row[1]) if row is not None else None
    except orjson.JSONDecodeError:
        return True, None
    return True, (body if isinstance(body, dict) and body.get("json") else None)


_texts_checked: dict[Path, tuple[object, list[str]]] = {}
_texts_lock = threading.Lock()


def _texts_moved(paths: SessionPaths, texts: dict[str, Any]) -> list[str]:
    """The stored texts no longer as the views flush found them, by the rule ``status`` applies
    (:func:`orchestrator.commit.committed.moved_texts`); looked at again only when a text's file key moves."""
    key = (orjson.dumps(texts, option=orjson.OPT_SORT_KEYS),
           tuple(tuple(file_key(paths.source_text(sha)) or ()) for sha in sorted(texts)))
    with _texts_lock:
        cached = _texts_checked.get(paths.root)
    if cached is not None and cached[0] == key:
        return cached[1]
    moved = moved_texts(paths, texts)[0]
    with _texts_lock:
        remember(_texts_checked, paths.root, (key, moved))
    return moved


def _why_not_vouched(paths: SessionPaths) -> str | None:
    rel, sid = paths.rel(paths.kg_json), paths.root.name
    if not os.path.lexists(paths.store_db):
        return (f"{rel} has no ledger to vouch for it: {paths.rel(paths.store_db)} is missing, so nothing shows that "
                "what it holds (verified evidence included) is what was validated. Restore the session's "
                f"{paths.rel(paths.state)} folder from where the session came from (`cconductor status {sid}` "
                "does not show the graph either until then)")
    readable, row = _vouched_row(paths)
    expected = str(row["json"]) if row is not None else None
    if not readable:
        return (f"{rel} cannot be checked against the ledger: {paths.rel(paths.store_db)} is not a readable "
                "SQLite database (damaged or replaced), so nothing shows that what the view holds (verified "
                f"evidence included) is what was validated. Restore {paths.rel(paths.state)} from a copy of the "
                f"session (`cconductor status {sid}` does not show the graph either until then)")
    actual = _view_sha256(paths)
    if actual is None:
        return None
    if expected == actual:
        texts = row.get("texts") if row is not None else None
        moved = _texts_moved(paths, texts) if isinstance(texts, dict) and texts else []
        if not moved:
            return None
        return (f"stored text(s) {', '.join(f'sources/{sha}.txt' for sha in moved)} were deleted, altered or "
                f"restored after {rel} was written, so the evidence it shows as verified against them may no longer "
                f"be. `cconductor status {sid}` rebuilds the view from the ledger, counting that evidence again")
    if expected is None:
        return (f"{rel} is a view the ledger never recorded (it was written outside cconductor, or by a version "
                "that did not record views), so what it shows, verified evidence included, may not be what was "
                f"validated. `cconductor status {sid}` rebuilds it from the ledger")
    return (f"{rel} is not the view the ledger recorded for its last commit: it was "
            "edited or replaced after the orchestrator wrote it, so what it shows, verified evidence "
            f"included, may not be what was validated. `cconductor status {sid}` rebuilds it "
            "from the ledger.")


def graph_warning(paths: SessionPaths) -> str | None:
    """Why the JSON view must not be trusted as shown, or None when the ledger vouches for its bytes.

    The viewer never writes, so it cannot rebuild a view as ``status`` does (orchestrator/commit/committed.py):
    it says so instead, and the report and the evidence are not presented as validated. A view is vouched for
    only when the ledger can be read and its newest views row records these bytes (a view one flush behind
    the ledger's head is fine: the flush that follows a commit vouches for the view it writes). No view: no
    warning (nothing is shown). A flush replaces the file just before it records its digest, and a writer
    may checkpoint the ledger under an immutable read, so a doubt is looked at twice before it is reported.
    """
    if signature(paths.kg_json) is None:
        return None
    why = _why_not_vouched(paths)
    if why is not None:
        time.sleep(READ_AGAIN)
        why = _why_not_vouched(paths)
    return why


class NotVouched(CconductorError):
    """A page that would present the graph as validated, for a view the ledger does not vouch for."""


def require_vouched(paths: SessionPaths, what: str) -> None:
    """Refuse ``what`` (a page presenting the graph as validated) when the ledger does not vouch for the view."""
    warning = graph_warning(paths)
    if warning is not None:
        raise NotVouched(f"{what} is not shown: {warning.rstrip('.')}. Reload this page once that is done.")


def session(paths: SessionPaths) -> dict[str, Any]:
    """session.json, or {} when it cannot be read (pages show what they can; :func:`damaged` says why)."""
    try:
        value = CACHE.load(paths, paths.session_json, default={})
    except Unreadable:
        return {}
    return value if isinstance(value, dict) else {}


def recorded_quality(paths: SessionPaths) -> dict[str, Any] | None:
    """quality.json, or None when there is none or it cannot be read (the score is then computed from the graph)."""
    try:
        value = CACHE.load(paths, paths.root / "quality.json", default=None)
    except Unreadable:
        return None
    return value if isinstance(value, dict) else None


#: What puts each damaged file right (the orchestrator writes them atomically: damage came from outside).
_FIXES = {
    "session.json": "restore it from a copy of the session or an editor backup (cconductor only ever replaces it "
                    "whole); meanwhile the pages show what the graph and the events hold",
    "quality.json": "delete it, or let the next research round (`cconductor resume SESSION`) write it again; "
                    "meanwhile the score is computed from the committed graph",
    "knowledge-graph.json": "`cconductor status SESSION` rebuilds it from the ledger",
    "events.jsonl": "put the regular file back (the orchestrator only ever appends to it); meanwhile the timeline "
                    "and the agents' histories are empty",
}


def fix_of(paths: SessionPaths, path: Path) -> str:
    """What puts a damaged session file right, as the command named will actually do it: ``status`` rebuilds a
    view that is a damaged file, but refuses one that is not a regular file (orchestrator/session/check.py)."""
    fix = _FIXES[path.name].replace("SESSION", paths.root.name)
    try:
        mode: int | None = os.lstat(path).st_mode
    except OSError:
        mode = None
    if path == paths.kg_json and mode is not None and not stat.S_ISREG(mode):
        fix = (f"move {paths.rel(path)} aside (it is not a regular file, and cconductor will not replace what it "
               f"did not write), then {fix}")
    return fix


def damaged(paths: SessionPaths) -> list[dict[str, Any]]:
    """The session files that cannot be shown as they are now: each with what is wrong and how to fix it."""
    notes = []
    for path in (paths.session_json, paths.root / "quality.json", paths.kg_json):
        try:
            value = CACHE.load(paths, path, default={})
        except Unreadable as exc:
            problem: str | None = str(exc)
        else:
            problem = CACHE.problem(path)
            if problem is None and not isinstance(value, dict):
                problem = f"{paths.rel(path)} does not hold a JSON object"
            elif problem is not None:
                problem += " (the last complete version is shown)"
        if problem is not None:
            notes.append({"file": paths.rel(path), "problem": problem,
                          "fix": fix_of(paths, path)})
    try:  # read by offset, not through the cache: only whether it can be opened at all
        fd = open_file(paths, paths.events)
    except Unreadable as exc:
        notes.append({"file": paths.rel(paths.events), "problem": str(exc), "fix": _FIXES["events.jsonl"]})
    else:
        if fd is not None:
            os.close(fd)
    return notes


def ledger(paths: SessionPaths) -> list[dict[str, Any]]:
    return read_ledger_snapshot(paths.store_db) or []


def lock_states(paths: SessionPaths) -> dict[str, str]:
    """agent -> pending | claimed | errored, from the lock files (no lock taken).

    Errored as ``cconductor status`` says it (:func:`orchestrator.commit.locks.errored_among`): a
    ``.kg.lock.error`` left over after the agent merged again (a folder the processor could not remove, a
    file restored by hand) does not count. When the ledger cannot be read now, the signals are taken as they are.
    """
    signals = locks.errored(paths)
    rejected = read_rejected_last(paths.store_db) if signals else set()
    states = {agent: "errored" for agent in (signals if rejected is None else locks.errored_among(signals, rejected))}
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
        problem = marker_problem(paths.root)
        if problem is None:
            try:
                data = CACHE.load(paths, paths.session_json, default={})
            except Unreadable as exc:
                problem = str(exc)
        if problem is not None or not isinstance(data, dict):
            rows.append({"id": paths.root.name, "status": "unreadable",
                         "query": problem or "session.json does not hold a JSON object"})
            continue
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
