"""The agents panel: each agent's state, lock, attempts, retry instructions and problems.

An agent's story is spread over ``session.json`` (state, attempts), the lock files (waiting,
being judged, rejected), ``<agent>.retry-instructions.json`` (what to fix) and the events
(dispatched, finished, judged, merged or rejected with every problem). The events are indexed
once and then only the lines appended since the last look are read.
"""

from __future__ import annotations

import threading
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from orchestrator.commit.locks import claim_key
from orchestrator.commit.outcomes import recorded_seq
from orchestrator.model.errors import CconductorError
from orchestrator.model.layout import AGENT_NAME_RE, SessionPaths
from orchestrator.session.ledger_snapshot import read_last_decisions
from orchestrator.viewer import state
from orchestrator.viewer.files import as_dict, read_bytes
from orchestrator.viewer.timeline import read_after

#: Events that belong to one agent's story.
AGENT_EVENTS = frozenset({
    "agent.dispatched", "agent.finished", "agent.failed", "agent.retrying", "agent.gave_up", "agent.resubmitted",
    "agent.orphan_stopped", "lock.seen", "lock.deferred", "validation.completed", "shacl.completed",
    "merge.committed", "merge.rejected", "merge.noop", "processor.agent_failed", "model.retry_wait",
})
HISTORY = 60


@dataclass
class _Index:
    offset: int = 0
    history: dict[str, list[dict[str, Any]]] = field(default_factory=lambda: defaultdict(list))
    running: dict[str, bool] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)


_INDEXES: dict[Path, _Index] = {}
_INDEXES_LOCK = threading.Lock()


def _index(paths: SessionPaths) -> _Index:
    with _INDEXES_LOCK:
        index = _INDEXES.setdefault(paths.root, _Index())
    with index.lock:
        while True:
            try:
                batch = read_after(paths, index.offset)
            except CconductorError:  # events.jsonl is not a regular file: the agents as the rest shows them
                break  # (state.damaged says what is wrong with it)
            if batch.start < index.offset:  # the log was replaced by a shorter one
                index.history.clear()
                index.running.clear()
            for event in batch.events:
                data = as_dict(event.get("data"))
                agent = data.get("agent")
                if event.get("type") not in AGENT_EVENTS or not isinstance(agent, str):
                    continue
                if event["type"] == "agent.dispatched":
                    index.running[agent] = True
                elif event["type"] in ("agent.finished", "agent.failed", "agent.gave_up", "agent.orphan_stopped"):
                    index.running[agent] = False
                items = index.history[agent]
                items.append({"timestamp": event.get("timestamp"), "type": event["type"],
                              "message": event.get("message"), "attempt": data.get("attempt"),
                              "problems": data.get("problems") or [], "offset": event["offset"]})
                del items[:-HISTORY]
            moved = batch.end != index.offset
            index.offset = batch.end
            if not moved or not batch.events:
                break
        return index


def retry_instructions(paths: SessionPaths, agent: str) -> dict[str, Any] | None:
    path = paths.retry_instructions(agent)
    try:  # read whole or not at all, like every session file the viewer shows
        value = state.CACHE.load(paths, path, default=None)
    except CconductorError as exc:
        return {"unreadable": str(exc)}
    return value if isinstance(value, dict) else None


def failures(paths: SessionPaths, agent: str) -> list[dict[str, Any]]:
    """The agent's own failure records (``.cconductor/failures/<agent>-<attempt>.json``)."""
    folder = paths.state / "failures"
    found = []
    for path in sorted(folder.glob(f"{agent}-*.json")) if folder.is_dir() else ():
        if not path.stem[len(agent) + 1:].isdigit():
            continue
        try:
            value = orjson.loads(read_bytes(paths, path, 1 << 16))
        except (CconductorError, orjson.JSONDecodeError):
            continue
        if isinstance(value, dict):
            found.append(value)
    return found


def _shown_state(entry: dict[str, Any], lock: str | None, running: bool) -> str:
    if lock == "pending":
        return "waiting"
    if lock == "claimed":
        return "judging"
    if running:
        return "running"
    if lock == "errored":
        return "rejected"
    return str(entry.get("state") or "unknown")


def _judged(paths: SessionPaths) -> tuple[dict[str, Any], dict[str, str]]:
    """session.json's agents and the lock states, with what the ledger (the truth) decided since session.json was
    last written: a processor killed after its commit leaves the file behind and its claims in place, judged."""
    session = state.session(paths)
    recorded = dict(session.get("agents") or {})
    lock_of = state.lock_states(paths)
    since = recorded_seq(session)
    for agent, (seq, action, attempt, detail) in read_last_decisions(paths.store_db).items():
        if lock_of.get(agent) == "claimed" and detail.get("claim") == claim_key(paths, agent):
            lock_of.pop(agent)
            if action == "reject":
                lock_of[agent] = "errored"
        if seq > since and AGENT_NAME_RE.fullmatch(agent):
            entry = as_dict(recorded.get(agent))
            recorded[agent] = {**entry, "state": "rejected" if action == "reject" else "merged",
                               "attempts": max(entry.get("attempts") or 0, attempt or 0)}
    return recorded, lock_of


def agent_names(paths: SessionPaths) -> list[str]:
    recorded, lock_of = _judged(paths)
    names = set(recorded) | set(lock_of) | set(_index(paths).history)
    return sorted(n for n in names if isinstance(n, str))


def agents_overview(paths: SessionPaths) -> list[dict[str, Any]]:
    """One row per agent: shown state, lock, attempts, and the last rejection's problems."""
    recorded, locks = _judged(paths)
    index = _index(paths)
    rows = []
    for name in agent_names(paths):
        entry = as_dict(recorded.get(name))
        history = index.history.get(name, [])
        rejected = [h for h in history if h["type"] == "merge.rejected"]
        rows.append({
            "agent": name,
            "state": _shown_state(entry, locks.get(name), index.running.get(name, False)),
            "recorded_state": entry.get("state"),
            "lock": locks.get(name),
            "attempts": entry.get("attempts", 0),
            "last_commit_seq": entry.get("last_commit_seq"),
            "updated_at": entry.get("updated_at"),
            "last_event": history[-1]["message"] if history else None,
            "problems": rejected[-1]["problems"] if rejected and locks.get(name) == "errored" else [],
        })
    return rows


def agent_detail(paths: SessionPaths, agent: str) -> dict[str, Any] | None:
    if agent not in agent_names(paths):
        return None
    row = next(r for r in agents_overview(paths) if r["agent"] == agent)
    return {**row, "history": _index(paths).history.get(agent, []),
            "retry_instructions": retry_instructions(paths, agent) if row["lock"] == "errored" else None,
            "failures": failures(paths, agent)}
