"""Where the repair memory meets the pipeline: on a rejection and on the next accepted merge.

On a rejection the problems' signatures and a copy of each rejected file (artifact files are at
most 64 KiB) are kept in ``.cconductor/memory/<agent>.pending.json``, and the retry
instructions gain ``known_repairs`` for the signatures the memory knows. On the agent's next
accepted merge each pending signature is resolved: the change from its rejected copy to the
accepted file is recorded. Neither step may break a merge: a failure becomes a
``memory.failed`` warning event and the outcome proceeds.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import posixpath
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from orchestrator.memory.diff import diff, repair_for
from orchestrator.memory.signature import Signature, signature_of
from orchestrator.model.clock import iso_timestamp
from orchestrator.model.layout import SessionPaths, fitting_name
from orchestrator.model.problems import Problem
from orchestrator.session.atomic import atomic_write_json
from orchestrator.session.events import EventLog

#: Bounds on what one agent's pending record keeps.
MAX_ENTRIES = 100
MAX_SNAPSHOTS = 16
MAX_SNAPSHOT_BYTES = 65_536
#: Best items quoted per problem, and problems annotated per retry file.
PER_PROBLEM = 3
MAX_ANNOTATED = 20


def pending_path(paths: SessionPaths, agent: str) -> Path:
    return paths.state / "memory" / f"{fitting_name(agent)}.pending.json"


def on_rejection(paths: SessionPaths, events: EventLog, agent: str, problems: list[Problem],
                 files: Mapping[str, Any], instructions: dict[str, Any]) -> None:
    """Keep the rejection's signatures and files; add ``known_repairs`` to ``instructions``.

    ``files`` maps each parsed artifact's session-relative path to its content.
    """
    try:
        pairs = _signatures(problems)
    except Exception as exc:
        _warn(events, agent, "computing the signatures of the problems", exc)
        return
    if not pairs:
        return
    try:
        _remember_pending(paths, agent, pairs, files)
    except Exception as exc:  # the lesson is lost, the advice below still helps
        _warn(events, agent, "keeping a copy of the rejected files", exc)
    try:
        from orchestrator.memory.store import MemoryStore

        best = MemoryStore().best({sig.id for _, sig in pairs}, PER_PROBLEM)
        known: dict[tuple[str | None, str, str], dict[str, Any]] = {}
        for problem, sig in pairs:
            where = (problem.file, problem.pointer, problem.rule)
            if sig.id in best and where not in known and len(known) < MAX_ANNOTATED:
                known[where] = {"file": problem.file, "pointer": problem.pointer, "rule": problem.rule,
                                "signature": sig.describe(),
                                "repairs": [{"id": i.id, "repair": i.repair, "uses": i.uses, "successes": i.successes,
                                             "text": i.sentence()} for i in best[sig.id]]}
        if known:
            instructions["known_repairs"] = list(known.values())
    except Exception as exc:
        _warn(events, agent, "reading the repair memory for the retry instructions", exc)


def on_merge(paths: SessionPaths, events: EventLog, agent: str, raw: Mapping[str, Any]) -> None:
    """Learn from the agent's pending rejections now that ``raw`` (file name -> content) was accepted."""
    pending = pending_path(paths, agent)
    if not pending.exists():
        return
    try:
        data = json.loads(pending.read_text(encoding="utf-8"))
        resolved = _resolve(data, raw)
        if resolved:
            from orchestrator.memory.store import MemoryStore
            from orchestrator.session.record import load_session

            session_id = str(load_session(paths).get("id", paths.root.name))
            learned = MemoryStore().record(resolved, session_id, iso_timestamp())
            events.emit("memory.learned", f"{agent}: {len(resolved)} repaired signature(s) counted in the "
                        f"repair memory, {len(learned)} repair(s) recorded", agent=agent, items=learned)
    except Exception as exc:
        _warn(events, agent, "recording the repair in the repair memory", exc)
    finally:
        with contextlib.suppress(OSError):
            os.unlink(pending)


def _signatures(problems: list[Problem]) -> list[tuple[Problem, Signature]]:
    lookup = paths = None
    if any(p.rule.startswith("shacl.") and p.is_error for p in problems):
        from orchestrator.memory.signature import shape_paths, shapes_constraint_lookup

        lookup, paths = shapes_constraint_lookup(), shape_paths()
    pairs = []
    for problem in problems:
        sig = signature_of(problem, lookup, paths)
        if sig is not None and sig.file.endswith(".json"):
            pairs.append((problem, sig))
    return pairs


def _remember_pending(paths: SessionPaths, agent: str, pairs: list[tuple[Problem, Signature]],
                      files: Mapping[str, Any]) -> None:
    path = pending_path(paths, agent)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        entries, snapshots = list(data["entries"]), dict(data["snapshots"])
    except (OSError, ValueError, KeyError, TypeError):
        entries, snapshots = [], {}
    fresh = {}
    for problem, sig in pairs:
        content = files.get(problem.file or "")
        text = json.dumps(content, ensure_ascii=False, sort_keys=True)
        if content is None or len(text.encode()) > MAX_SNAPSHOT_BYTES:
            continue
        key = f"{problem.file}@{hashlib.sha256(text.encode()).hexdigest()[:16]}"
        snapshots[key] = snapshots.pop(key, content)  # newest last: eviction drops the oldest
        fresh[(sig.id, problem.pointer)] = {
            "signature": {"kind": sig.kind, "file": sig.file, "rule": sig.rule, "parts": [list(p) for p in sig.parts]},
            "pointer": problem.pointer, "file": problem.file, "snapshot": key,
        }
    # The latest rejection's copy replaces an older one of the same defect at the same place.
    kept = [e for e in entries if (e["signature_id"], e["pointer"]) not in fresh]
    kept += [{"signature_id": k[0], **v} for k, v in fresh.items()]
    kept = kept[-MAX_ENTRIES:]
    used = {e["snapshot"] for e in kept}
    snapshots = {k: v for k, v in snapshots.items() if k in used}
    for old in list(snapshots)[:-MAX_SNAPSHOTS]:
        snapshots.pop(old)
        kept = [e for e in kept if e["snapshot"] != old]
    atomic_write_json(path, {"agent": agent, "entries": kept, "snapshots": snapshots}, durable=False,
                      root=paths.root)


def _resolve(data: Mapping[str, Any], raw: Mapping[str, Any]) -> list[tuple[Signature, str | None]]:
    """Each pending signature once, with the repair most of its occurrences show."""
    votes: dict[str, Counter[str | None]] = {}
    sigs: dict[str, Signature] = {}
    snapshots = data.get("snapshots", {})
    for entry in data.get("entries", []):
        old = snapshots.get(entry["snapshot"])
        if old is None:
            continue
        spec = entry["signature"]
        sig = Signature(spec["kind"], spec["file"], spec["rule"], tuple((str(k), str(v)) for k, v in spec["parts"]))
        name = posixpath.basename(entry["file"])
        repair = repair_for(diff(old, raw[name]), entry["pointer"], name) if name in raw else "(file): removed"
        sigs[sig.id] = sig
        votes.setdefault(sig.id, Counter())[repair] += 1
    resolved: list[tuple[Signature, str | None]] = []
    for sid, counter in votes.items():
        described = [(n, r) for r, n in counter.items() if r is not None]
        resolved.append((sigs[sid], max(described)[1] if described else None))
    return resolved


def _warn(events: EventLog, agent: str, doing: str, exc: Exception) -> None:
    with contextlib.suppress(Exception):
        events.emit("memory.failed", f"{agent}: the repair memory failed while {doing} ({exc}); the merge "
                    "proceeds without it", agent=agent, error=f"{type(exc).__name__}: {exc}"[:500])
