"""A whole research session as one job: what ``cconductor batch`` sends to a worker.

The worker runs today's single-machine ``cconductor run`` in a scratch folder of its own
(inotify works there), then returns the finished session folder by value, as a tar archive.
The batch driver, the only writer of the sessions folder, unpacks it beside its final place
and renames it in: a session is either fully there or not at all. Input documents travel by
content hash (as agent jobs' do) when the worker has no access to the driver's folders.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from orchestrator.run.jobs import sha256_bytes, worker_pythonpath

OUTPUT_TAIL = 4000


@dataclass(frozen=True)
class SessionJob:
    qid: str
    question: str
    mission: str
    #: extra ``cconductor run`` arguments (--backend, --max-minutes ...), never paths of this machine
    run_args: tuple[str, ...] = ()
    #: folders the worker can read as they are (local executor); or, with ``inputs``, where they came from
    input_dirs: tuple[str, ...] = ()
    #: ``<n>/<relative path>`` -> sha256: input folder ``n``'s files, sent by hash instead of by path
    inputs: dict[str, str] = field(default_factory=dict)
    #: with ``inputs``: where each input is among them (``<n>/papers``, or ``<n>/notes/README.md`` for a file)
    input_roots: tuple[str, ...] = ()
    timeout_seconds: float = 6 * 3600.0


@dataclass(frozen=True)
class SessionResult:
    qid: str
    status: str  # the run's status (completed, partial, failed, ...), or "error" when it never produced one
    reason: str | None
    session_id: str | None
    bundle: bytes | None
    wall_seconds: float
    output_tail: str = ""


def _materialise(job: SessionJob, blobs: Mapping[str, bytes] | None, scratch: Path) -> list[str]:
    if not job.inputs:
        return list(job.input_dirs)
    assert blobs is not None, "a job with inputs by hash needs their blobs"
    for rel, sha in job.inputs.items():
        data = blobs[sha]
        if sha256_bytes(data) != sha:
            raise ValueError(f"input {rel} of {job.qid} does not match its hash {sha}")
        target = scratch / "inputs" / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    return [str(scratch / "inputs" / root) for root in job.input_roots]


def _bundle(folder: Path) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz", compresslevel=1) as tar:
        tar.add(folder, arcname=folder.name)
    return buffer.getvalue()


def run_session_job(job: SessionJob, blobs: Mapping[str, bytes] | None = None,
                    should_stop: Callable[[], bool] | None = None) -> SessionResult:
    """Run one question to the end with ``cconductor run`` in scratch; return the session folder by value."""
    started = time.monotonic()
    scratch = Path(tempfile.mkdtemp(prefix=f"cconductor-batch-{job.qid}-"))
    try:
        dirs = _materialise(job, blobs, scratch)
        argv = [sys.executable, "-m", "orchestrator.cli", "--sessions-dir", str(scratch / "sessions"), "run",
                "--mission", job.mission, "--json", *job.run_args]
        for folder in dirs:
            argv += ["--input-dir", folder]
        argv += ["--", job.question]  # last, after "--": a question may start with a dash ("-40 degrees: ...")
        env = {**os.environ, "PYTHONPATH": worker_pythonpath()}
        with open(scratch / "output.log", "wb") as out:
            process = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env)
            while process.poll() is None:
                stop = should_stop is not None and should_stop()
                if stop or time.monotonic() - started > job.timeout_seconds:
                    process.terminate()  # the run records itself as interrupted, then exits
                    process.wait(60)
                    break
                time.sleep(0.2)
        output = (scratch / "output.log").read_text(encoding="utf-8", errors="replace")
        return _result(job, output, scratch / "sessions", time.monotonic() - started)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _result(job: SessionJob, output: str, sessions: Path, wall: float) -> SessionResult:
    final: dict[str, Any] = {}
    for line in reversed(output.splitlines()):
        if line.startswith("{") and '"run.result"' in line:
            final = json.loads(line)
            break
    folders = sorted(p for p in sessions.iterdir() if p.is_dir()) if sessions.is_dir() else []
    if not final or not folders:
        return SessionResult(job.qid, "error", "the run ended without a result (see output)", None, None,
                             round(wall, 3), output[-OUTPUT_TAIL:])
    folder = folders[-1]
    return SessionResult(job.qid, str(final["status"]), final.get("reason"), folder.name, _bundle(folder),
                         round(wall, 3), output[-OUTPUT_TAIL:])


def publish(result: SessionResult, sessions_dir: Path, input_dirs: tuple[str, ...]) -> Path:
    """Unpack the returned session beside its final place, point its options at this machine's input folders,
    then rename it in (all or nothing)."""
    assert result.bundle is not None and result.session_id is not None
    sessions_dir.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".incoming-{result.qid}-", dir=sessions_dir))
    try:
        with tarfile.open(fileobj=io.BytesIO(result.bundle), mode="r:gz") as tar:
            tar.extractall(staging, filter="data")
        folder = staging / result.session_id
        session_json = folder / "session.json"
        data = json.loads(session_json.read_text(encoding="utf-8"))
        if isinstance(data.get("options"), dict):
            data["options"]["input_dirs"] = list(input_dirs)
        from orchestrator.session.atomic import atomic_write_json

        atomic_write_json(session_json, data, shared=True)
        target = sessions_dir / result.session_id
        os.replace(folder, target)
        return target
    finally:
        shutil.rmtree(staging, ignore_errors=True)
