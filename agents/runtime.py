"""What a Python agent process needs to follow the artifact protocol.

The orchestrator starts ``python -m agents --task tasks/<agent>-<attempt>.json``; the
task says who the agent is and what to do. Agents write artifacts through this module
(atomic writes, size-aware splitting, the content-addressed source store, heartbeats,
the lock last). Agents in other languages do the same by hand: docs/agent-protocol.md.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from orchestrator.model.clock import iso_timestamp
from orchestrator.model.layout import SessionPaths
from orchestrator.session.atomic import atomic_write_bytes, dumps_pretty

FILE_LIMIT = 65_536
SPLIT_TARGET = 60_000


@dataclass(frozen=True)
class Task:
    """The parsed task file (schemas/task.schema.json)."""

    data: dict[str, Any]
    path: Path

    @property
    def agent(self) -> str:
        return str(self.data["agent"])

    @property
    def definition(self) -> str:
        return str(self.data["definition"])

    @property
    def attempt(self) -> int:
        return int(self.data["attempt"])

    @property
    def query(self) -> str:
        return str(self.data["query"])

    @property
    def backend(self) -> str:
        return str(self.data.get("backend", "offline"))

    @property
    def sub_questions(self) -> list[dict[str, Any]]:
        return list(self.data.get("sub_questions", []))

    @property
    def retry_instructions(self) -> dict[str, Any] | None:
        return self.data.get("retry_instructions")

    @property
    def inputs(self) -> dict[str, Any]:
        return dict(self.data.get("inputs", {}))

    @property
    def options(self) -> dict[str, Any]:
        return dict(self.data.get("options", {}))


class AgentContext:
    def __init__(self, task_path: Path):
        data = json.loads(task_path.read_text(encoding="utf-8"))
        self.task = Task(data, task_path)
        self.paths = SessionPaths(Path(data["session"]).resolve())
        self.folder = self.paths.agent_artifacts(self.task.agent)
        self.folder.mkdir(parents=True, exist_ok=True)
        self._heartbeat_stop = threading.Event()
        self.heartbeat_path = Path(data["heartbeat_path"]) if data.get("heartbeat_path") else None

    # -- reading ---------------------------------------------------------------
    def graph(self) -> dict[str, Any]:
        """The committed knowledge graph, as the ledger vouches for it (read-only for agents).

        Before any merge, or in a job run away from the session (a Dask worker's scratch folder, whose
        copy the orchestrator took from the ledger's vouched bytes), the file as it is; {} without one.
        """
        from orchestrator.commit.committed import read_committed
        from orchestrator.model.errors import SessionDamaged, UsageError

        try:
            return read_committed(self.paths).graph
        except SessionDamaged:
            raise
        except UsageError:
            try:
                return dict(json.loads(self.paths.kg_json.read_text(encoding="utf-8")))
            except FileNotFoundError:
                return {}

    def source_text(self, sha256: str) -> str | None:
        try:
            return self.paths.source_text(sha256).read_text(encoding="utf-8")
        except FileNotFoundError:
            return None

    def stored_object_text(self, sha256: str, suffix: str = ".json") -> str | None:
        """A stored object as text (a table's cells), or None when it is not stored."""
        try:
            return self.paths.stored_object(sha256, suffix).read_text(encoding="utf-8")
        except (FileNotFoundError, ValueError):
            return None

    # -- writing -----------------------------------------------------------------
    def write_artifact(self, name: str, data: dict[str, Any]) -> Path:
        body = dumps_pretty(data).encode("utf-8")
        if len(body) > FILE_LIMIT:
            raise ValueError(f"{name} would be {len(body)} bytes (limit {FILE_LIMIT}); use write_items()")
        target = self.folder / name
        atomic_write_bytes(target, body, durable=False)
        return target

    def write_items(
        self, stem: str, key: str, items: list[dict[str, Any]], extra: dict[str, Any] | None = None
    ) -> list[Path]:
        """Write ``{key: items}`` as ``<stem>.json``, or split into ``<stem>-NNN.json`` files under the limit.

        Arrays under the same key in several files are concatenated by the merge, so
        splitting changes nothing in the graph. Split files carry no schema of their own,
        so each item is kept exactly as it would be in ``<stem>.json``.
        """
        whole = {key: items, **(extra or {})}
        if len(dumps_pretty(whole).encode()) <= SPLIT_TARGET:
            return [self.write_artifact(f"{stem}.json", whole)]
        written: list[Path] = []
        chunk: list[dict[str, Any]] = []
        for item in items:
            if chunk and len(dumps_pretty({key: [*chunk, item]}).encode()) > SPLIT_TARGET:
                written.append(self.write_artifact(f"{stem}-{len(written) + 1:03d}.json", {key: chunk}))
                chunk = []
            chunk.append(item)
        written.append(self.write_artifact(f"{stem}-{len(written) + 1:03d}.json", {key: chunk, **(extra or {})}))
        return written

    def store_source_text(self, text: str) -> str:
        data = text.encode("utf-8")
        sha = hashlib.sha256(data).hexdigest()
        target = self.paths.source_text(sha)
        if not target.exists():
            atomic_write_bytes(target, data, durable=False)
        return sha

    def store_object(self, data: bytes, suffix: str) -> str:
        """A content-addressed object beside the texts (a figure's ``.png``, a table's ``.json``); its sha256."""
        sha = hashlib.sha256(data).hexdigest()
        target = self.paths.stored_object(sha, suffix)
        if not target.exists():
            atomic_write_bytes(target, data, durable=False)
        return sha

    def complete(self, status: str, summary: str, notes: str | None = None) -> None:
        """Write completion.json, then the lock: the protocol's last step."""
        completion: dict[str, Any] = {
            "agent": self.task.agent,
            "status": status,
            "summary": summary,
            "completed_at": iso_timestamp(),
            "artifacts": sorted(p.name for p in self.folder.glob("*.json") if p.name != "completion.json"),
        }
        if notes:
            completion["notes"] = notes
        self.write_artifact("completion.json", completion)
        self.signal()

    def signal(self) -> None:
        lock = self.paths.lock(self.task.agent)
        tmp = lock.with_name(f".{lock.name}.tmp")
        tmp.touch()
        os.replace(tmp, lock)

    # -- liveness ----------------------------------------------------------------
    def start_heartbeat(self, interval: float = 2.0) -> None:
        """Touch the heartbeat file so the executor can tell a slow agent from a stalled one."""
        if self.heartbeat_path is None:
            return
        path = self.heartbeat_path

        def beat() -> None:
            while not self._heartbeat_stop.wait(interval):
                path.touch()

        path.parent.mkdir(parents=True, exist_ok=True)
        path.touch()
        threading.Thread(target=beat, name="heartbeat", daemon=True).start()

    def stop_heartbeat(self) -> None:
        self._heartbeat_stop.set()
