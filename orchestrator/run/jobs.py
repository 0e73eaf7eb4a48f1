"""Agent jobs as plain data, for executors that run agents away from the session folder.

An :class:`AgentJob` names its agent, its inputs by content hash (the task with the query,
the knowledge graph with the plan, stored source texts, input documents) and its limits; it
pickles and round-trips through JSON. A worker materialises the inputs in a scratch folder of
its own, runs the agent there and returns an :class:`AgentResult` holding the artifacts by
value (orchestrator/run/job_worker.py). Only the orchestrator writes into the session folder
(orchestrator/run/job_sink.py). Paths inside the scratch folder are written as :data:`SCRATCH`
and :data:`PYTHON`, which the worker replaces with its own folder and interpreter.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from orchestrator.model.layout import STATE_DIR_NAME, SessionPaths
from orchestrator.run.executor import Job

SCRATCH = "@CCONDUCTOR_SCRATCH@"
PYTHON = "@CCONDUCTOR_PYTHON@"
#: Environment variables that hold machine-local paths the worker sets for itself.
LOCAL_ENV = frozenset({"PYTHONPATH"})


@dataclass(frozen=True)
class AgentJob:
    """Everything a worker needs, by value or by content hash; no open file, no path of this machine."""

    job_id: str
    session_id: str
    agent: str
    attempt: int
    argv: tuple[str, ...]
    #: scratch-relative path -> sha256 of its bytes (resolved through the blobs sent with the job)
    inputs: dict[str, str]
    env: dict[str, str] = field(default_factory=dict)
    timeout_seconds: float = 300.0
    heartbeat_timeout_seconds: float | None = None
    #: e.g. {"llm": 1}: what the job holds against the executor's per-resource caps
    resources: dict[str, float] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> AgentJob:
        return cls(**{**data, "argv": tuple(data["argv"])})


@dataclass(frozen=True)
class AgentResult:
    """What a worker sends back: the process's outcome and every file it produced, by value."""

    job_id: str
    agent: str
    status: str  # as JobResult.status
    exit_code: int | None
    duration_seconds: float
    message: str
    #: session-relative path -> bytes: artifacts/<agent>/**, new sources/*.txt|png|json, the failure record
    files: dict[str, bytes]
    #: session-relative path -> bytes the agent appended (events.jsonl, costs.jsonl)
    appends: dict[str, bytes]
    locked: bool
    log: bytes
    worker: str


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class BlobIndex:
    """Content hashes of local files, cached by (size, mtime) so a large input folder is hashed once."""

    def __init__(self) -> None:
        self._by_path: dict[str, tuple[int, int, str]] = {}
        #: sha256 -> where its bytes are (a file of this machine) or the bytes themselves
        self.sources: dict[str, Path | bytes] = {}

    def add_file(self, path: Path) -> str:
        info = path.stat()
        cached = self._by_path.get(str(path))
        if cached and cached[:2] == (info.st_size, info.st_mtime_ns):
            return cached[2]
        digest = hashlib.sha256()
        with open(path, "rb") as handle:
            for chunk in iter(lambda: handle.read(1 << 20), b""):
                digest.update(chunk)
        sha = digest.hexdigest()
        self._by_path[str(path)] = (info.st_size, info.st_mtime_ns, sha)
        self.sources.setdefault(sha, path)
        return sha

    def add_bytes(self, data: bytes) -> str:
        sha = sha256_bytes(data)
        self.sources.setdefault(sha, data)
        return sha

    def read(self, sha: str) -> bytes:
        source = self.sources[sha]
        return source if isinstance(source, bytes) else source.read_bytes()


def visible_inputs(root: Path) -> list[tuple[str, Path]]:
    """The files an input (a folder, or one document) holds, by their path relative to it; hidden ones left out."""
    if root.is_file():
        return [(root.name, root)]
    return [(p.relative_to(root).as_posix(), p) for p in sorted(root.rglob("*")) if p.is_file() and not any(
        part.startswith(".") for part in p.relative_to(root).parts)]


def staged_inputs(given: Path) -> tuple[str, list[tuple[str, Path]]]:
    """Where an input lands in a worker's ``inputs/<n>/`` folder, and its files by their path there.

    The input keeps its own name ("papers/", or "notes/README.md" for one file), so a worker's run
    cites "papers/a.pdf" as a local run does, and a single file stays a file: given by name, it is
    read even when it is a note (README) that a folder's walk would skip.
    """
    given = given.resolve()
    if given.is_file():
        root = f"{given.parent.name or 'input'}/{given.name}"
        return root, [(root, given)]
    name = given.name or "input"
    return name, [(f"{name}/{rel}", path) for rel, path in visible_inputs(given)]


def _in_scratch(value: str, root: str) -> str:
    return value.replace(root, SCRATCH)


def _committed_graph(paths: SessionPaths) -> bytes | None:
    """The view's bytes the ledger vouches for (rebuilt if need be); before any merge, the file as it is."""
    from orchestrator.commit.committed import read_committed
    from orchestrator.model.errors import SessionDamaged, UsageError

    try:
        return read_committed(paths).data
    except SessionDamaged:
        raise
    except UsageError:  # nothing merged yet: nothing to vouch for
        return paths.kg_json.read_bytes() if paths.kg_json.is_file() else None


def pack_job(job: Job, session_root: Path, blobs: BlobIndex, resources: dict[str, float] | None = None) -> AgentJob:
    """The plain-data form of a local :class:`Job` whose cwd is ``session_root``."""
    root = str(session_root)
    task_file = Path(job.env["CCONDUCTOR_TASK"])
    task = json.loads(task_file.read_text(encoding="utf-8"))
    inputs: dict[str, str] = {}
    task_inputs = dict(task.get("inputs") or {})
    scratch_dirs = []
    for n, folder in enumerate(task_inputs.get("input_dirs") or ()):
        root_rel, files = staged_inputs(Path(folder))
        for rel, path in files:
            inputs[f"inputs/{n}/{rel}"] = blobs.add_file(path)
        scratch_dirs.append(f"{SCRATCH}/inputs/{n}/{root_rel}")
    libraries = []
    for n, library in enumerate(task_inputs.get("libraries") or ()):
        rel = f"libraries/{n}/{Path(library).name}"
        inputs[rel] = blobs.add_file(Path(library))
        libraries.append(f"{SCRATCH}/{rel}")
    task_inputs.update(input_dirs=scratch_dirs, libraries=libraries, graph=f"{SCRATCH}/knowledge-graph.json")
    task.update(session=SCRATCH, inputs=task_inputs)
    if task.get("heartbeat_path"):
        task["heartbeat_path"] = f"{SCRATCH}/{STATE_DIR_NAME}/heartbeats/{job.agent}.heartbeat"
    task_rel = task_file.relative_to(session_root).as_posix()
    inputs[task_rel] = blobs.add_bytes(json.dumps(task, ensure_ascii=False, indent=2).encode("utf-8"))
    graph = _committed_graph(SessionPaths(session_root))  # the plan and claims, as the ledger vouches for them
    if graph is not None:
        inputs["knowledge-graph.json"] = blobs.add_bytes(graph)
    if (session_root / "costs.jsonl").is_file():  # what the run has spent so far
        inputs["costs.jsonl"] = blobs.add_bytes((session_root / "costs.jsonl").read_bytes())
    attempt = int(task.get("attempt", 1))
    previous = session_root / STATE_DIR_NAME / "attempts" / f"{job.agent}-{attempt - 1}"
    if attempt > 1 and previous.is_dir():  # a retry reads what its rejected attempt wrote
        for _, path in visible_inputs(previous):
            inputs[path.relative_to(session_root).as_posix()] = blobs.add_bytes(path.read_bytes())
    sources = session_root / "sources"
    if sources.is_dir():
        for text in sorted([*sources.glob("*.txt"), *sources.glob("*.json")]):  # texts and table cells
            inputs[f"sources/{text.name}"] = blobs.add_file(text)
    argv = tuple(PYTHON if a == sys.executable else _in_scratch(a, root) for a in job.argv)
    env = {k: _in_scratch(v, root) for k, v in job.env.items() if k not in LOCAL_ENV}
    identity = json.dumps([session_root.name, job.agent, job.job_id, argv, sorted(inputs.items())])
    return AgentJob(
        job_id=sha256_bytes(identity.encode("utf-8"))[:32],
        session_id=session_root.name,
        agent=job.agent,
        attempt=attempt,
        argv=argv,
        inputs=inputs,
        env=env,
        timeout_seconds=job.timeout_seconds,
        heartbeat_timeout_seconds=job.heartbeat_timeout_seconds,
        resources=dict(resources or {}),
    )


def scratch_path(template: str, scratch: Path) -> str:
    return template.replace(SCRATCH, str(scratch)).replace(PYTHON, sys.executable)


def worker_pythonpath() -> str:
    """The worker's own cconductor checkout/installation first, so agents import the same code."""
    here = str(Path(__file__).resolve().parents[1])
    return os.pathsep.join(p for p in (here, os.environ.get("PYTHONPATH", "")) if p)
