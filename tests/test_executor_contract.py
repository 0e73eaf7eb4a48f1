"""The executor contract, run against the local executor and against Dask (an in-process LocalCluster).

Whatever runs an agent job, the session ends up the same: the agent's artifacts in
artifacts/<agent>/, each written atomically, then <agent>.kg.lock; a failed or timed-out
process is reported as such with its log; the parallelism limit and per-resource caps hold;
cancel_all stops everything. With Dask the agent runs in a scratch folder and never writes
into the session: the orchestrator does.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from watchdog.events import FileSystemEvent, FileSystemEventHandler
from watchdog.observers import Observer

from orchestrator.model.layout import SessionPaths
from orchestrator.run.executor import Executor, Job, JobResult
from orchestrator.run.executor_choice import close_executor, make_executor

#: The agent used throughout: reads its task, the graph and an input document, writes atomically, locks last.
AGENT = r"""
import json, os, sys, time
task = json.load(open(sys.argv[1]))
root = task["session"]
folder = os.path.join(root, "artifacts", task["agent"])
os.makedirs(folder, exist_ok=True)
docs = task["inputs"]["input_dirs"]
doc = open(os.path.join(docs[0], "doc.md")).read() if docs else None
graph = json.load(open(task["inputs"]["graph"]))
time.sleep(float(os.environ.get("AGENT_SLEEP", "0")))
marks = os.environ.get("AGENT_MARKS")
if marks:  # meet AGENT_MEET agents running at once (at most 30 s), so overlap never hangs on the machine's load
    open(os.path.join(marks, "start-" + task["agent"]), "w").write(repr(time.time()))
    waited = time.monotonic() + 30
    while len([m for m in os.listdir(marks) if m.startswith("start-")]) < int(os.environ["AGENT_MEET"]) \
            and time.monotonic() < waited:
        time.sleep(0.02)
    time.sleep(0.3)
    open(os.path.join(marks, "end-" + task["agent"]), "w").write(repr(time.time()))
for name, body in (("finding.json", {"cwd": os.getcwd(), "doc": doc, "query": graph["session"]["query"]}),
                   ("completion.json", {"agent": task["agent"], "status": "completed"})):
    tmp = os.path.join(folder, "." + name + ".tmp")
    open(tmp, "w").write(json.dumps(body))
    os.replace(tmp, os.path.join(folder, name))
print("agent done", task["agent"], flush=True)
open(os.path.join(root, task["agent"] + ".kg.lock"), "w").close()
"""


@pytest.fixture(params=["local", "dask-local"])
def kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def make(kind: str) -> Iterator[Any]:
    made: list[Executor] = []

    def build(max_parallel: int = 2, caps: dict[str, int] | None = None) -> Executor:
        executor = make_executor(kind, max_parallel, caps or {})
        made.append(executor)
        return executor

    yield build
    for executor in made:
        close_executor(executor)


def agent_job(paths: SessionPaths, agent: str, docs: Path | None, *, code: str = AGENT, timeout: float = 60,
              env: dict[str, str] | None = None) -> Job:
    """A task file in the session like dispatch writes one, and the job that runs ``code`` on it."""
    task = {"agent": agent, "definition": agent, "attempt": 1, "session": str(paths.root), "query": "q",
            "inputs": {"input_dirs": [str(docs)] if docs else [], "libraries": [], "graph": str(paths.kg_json)},
            "heartbeat_path": None}
    if not paths.kg_json.exists():  # the committed view, as flush_views writes it before a dispatch
        paths.kg_json.write_text(json.dumps({"session": {"query": "How do agents merge knowledge?"}}))
    task_file = paths.tasks / f"{agent}-1.json"
    task_file.parent.mkdir(parents=True, exist_ok=True)
    task_file.write_text(json.dumps(task))
    return Job(job_id=f"{agent}-1", agent=agent, argv=(sys.executable, "-c", code, str(task_file)),
               cwd=str(paths.root), log_path=str(paths.logs / f"{agent}-1.log"), timeout_seconds=timeout,
               env={"CCONDUCTOR_SESSION": str(paths.root), "CCONDUCTOR_TASK": str(task_file), **(env or {})})


def drain(executor: Executor, limit: float = 90) -> dict[str, JobResult]:
    results: dict[str, JobResult] = {}
    deadline = time.monotonic() + limit
    while executor.pending() and time.monotonic() < deadline:
        results.update((r.agent, r) for r in executor.wait(timeout=0.5))
    assert not executor.pending(), "jobs still running past the test's limit"
    return results


def test_an_agent_job_leaves_its_artifacts_and_lock_in_the_session(
        kind: str, make: Any, session: SessionPaths, docs: Path) -> None:
    executor = make()
    executor.submit(agent_job(session, "alpha", docs))
    result = drain(executor)["alpha"]
    assert result.ok, Path(result.log_path).read_text()
    finding = json.loads((session.agent_artifacts("alpha") / "finding.json").read_text())
    assert finding["doc"] == "Sleep improves recall in adults.\n"
    assert finding["query"] == "How do agents merge knowledge?"  # read from the session's graph
    assert session.lock("alpha").exists()
    assert "agent done alpha" in Path(result.log_path).read_text()
    if kind == "dask-local":  # ran elsewhere; its scratch folder is gone
        assert Path(finding["cwd"]) != session.root and not Path(finding["cwd"]).exists()


class _Recorder(FileSystemEventHandler):
    def __init__(self) -> None:
        self.events: list[tuple[str, str]] = []

    def on_any_event(self, event: FileSystemEvent) -> None:
        path = event.dest_path if event.event_type == "moved" else event.src_path
        self.events.append((event.event_type, str(path)))


def test_artifacts_land_atomically_and_the_lock_comes_last(make: Any, session: SessionPaths, docs: Path) -> None:
    recorder = _Recorder()
    session.agent_artifacts("beta").mkdir(parents=True)  # watched from the start (a new subfolder's watch lags)
    observer = Observer()
    observer.schedule(recorder, str(session.root), recursive=True)
    observer.start()
    try:
        executor = make()
        executor.submit(agent_job(session, "beta", docs))
        assert drain(executor)["beta"].ok
        time.sleep(0.3)
    finally:
        observer.stop()
        observer.join()
    final = {str(session.agent_artifacts("beta") / n) for n in ("finding.json", "completion.json")}
    arrivals = [i for i, (kind, path) in enumerate(recorder.events) if path in final]
    assert {recorder.events[i][0] for i in arrivals} == {"moved"}  # renamed into place, never written in place
    lock = [i for i, (kind, path) in enumerate(recorder.events) if path == str(session.lock("beta"))]
    assert lock and min(lock) > max(arrivals)


def test_a_failing_agent_is_reported_with_its_exit_code_and_log(make: Any, session: SessionPaths) -> None:
    executor = make()
    executor.submit(agent_job(session, "gamma", None, code="import sys; print('boom', flush=True); sys.exit(3)"))
    result = drain(executor)["gamma"]
    assert (result.status, result.exit_code) == ("failed", 3)
    assert "boom" in Path(result.log_path).read_text()
    assert not session.lock("gamma").exists()


def test_an_agent_past_its_timeout_is_stopped(make: Any, session: SessionPaths) -> None:
    executor = make()
    started = time.monotonic()
    executor.submit(agent_job(session, "slow", None, code="import time; time.sleep(60)", timeout=1))
    result = drain(executor)["slow"]
    assert result.status == "timed_out" and time.monotonic() - started < 30


@pytest.mark.parametrize(("max_parallel", "caps", "expected"), [(2, {}, 2), (3, {"llm": 1}, 1)])
def test_parallelism_and_resource_caps_hold(make: Any, session: SessionPaths, tmp_path: Path, max_parallel: int,
                                            caps: dict[str, int], expected: int) -> None:
    marks = tmp_path / "marks"
    marks.mkdir()
    executor = make(max_parallel, caps)
    names = [f"m{n}" for n in range(4)]
    for name in names:
        executor.submit(agent_job(session, name, None, env={"AGENT_MARKS": str(marks), "AGENT_MEET": str(expected)}))
    assert all(r.ok for r in drain(executor).values())
    spans = [(float((marks / f"start-{n}").read_text()), float((marks / f"end-{n}").read_text())) for n in names]
    most = max(sum(1 for s, e in spans if s <= moment < e) for moment, _ in spans)
    assert most == expected


def test_cancel_all_stops_running_and_queued_jobs(make: Any, session: SessionPaths) -> None:
    executor = make(1)
    for n in range(3):
        executor.submit(agent_job(session, f"c{n}", None, code="import time; time.sleep(60)"))
    time.sleep(0.5)
    cancelled = executor.cancel_all()
    assert [r.status for r in cancelled] == ["cancelled"] and not executor.pending()
    assert not any(session.lock(f"c{n}").exists() for n in range(3))
