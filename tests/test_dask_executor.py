"""Dask-specific guarantees: jobs are plain data, landing is idempotent and confined, lost jobs are re-run,
and whole offline sessions end with each agent merged exactly once, even when a worker is killed mid-job."""

from __future__ import annotations

import json
import os
import pickle
import signal
import sqlite3
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import distributed
import pytest

from orchestrator.model.layout import SessionPaths
from orchestrator.run.dask_executor import DaskExecutor
from orchestrator.run.job_sink import UnsafeResultPath, land
from orchestrator.run.job_worker import run_agent_job
from orchestrator.run.jobs import SCRATCH, AgentJob, AgentResult, BlobIndex, pack_job
from orchestrator.run.missions import load_mission
from orchestrator.run.runner import MissionRunner, RunOptions
from orchestrator.session.events import read_events
from orchestrator.session.record import create_session
from tests.test_executor_contract import agent_job, drain

QUESTION = "How does sleep affect memory in adults?"


@pytest.fixture(scope="module")
def client() -> Iterator[distributed.Client]:
    with distributed.LocalCluster(n_workers=1, threads_per_worker=3, processes=False,
                                  dashboard_address=":0") as cluster, distributed.Client(cluster) as c:
        yield c


def test_a_job_is_plain_data_naming_its_inputs_by_hash(session: SessionPaths, docs: Path) -> None:
    job = agent_job(session, "alpha", docs)
    blobs = BlobIndex()
    packed = pack_job(job, session.root, blobs, {"llm": 1})
    assert AgentJob.from_dict(json.loads(json.dumps(packed.to_dict()))) == packed
    assert pickle.loads(pickle.dumps(packed)) == packed
    text = json.dumps(packed.to_dict())
    assert str(session.root) not in text and str(docs) not in text  # no path of this machine
    # the folder keeps its name, so the worker's report cites "docs/doc.md" as a local run does
    assert set(packed.inputs) == {f"inputs/0/{docs.name}/doc.md", "tasks/alpha-1.json", "knowledge-graph.json"}
    assert blobs.read(packed.inputs[f"inputs/0/{docs.name}/doc.md"]) == b"Sleep improves recall in adults.\n"
    task = json.loads(blobs.read(packed.inputs["tasks/alpha-1.json"]))
    assert task["session"] == SCRATCH and task["inputs"]["input_dirs"] == [f"{SCRATCH}/inputs/0/{docs.name}"]
    assert packed.resources == {"llm": 1} and packed.timeout_seconds == 60
    assert pack_job(job, session.root, BlobIndex()).job_id == packed.job_id  # same inputs, same id
    (docs / "doc.md").write_text("Different text.\n")
    assert pack_job(job, session.root, BlobIndex()).job_id != packed.job_id


def test_a_retry_gets_its_rejected_attempts_files_and_the_costs_so_far(session: SessionPaths, docs: Path) -> None:
    job = agent_job(session, "alpha", docs, code=(
        "import json, os, sys; t = json.load(open(sys.argv[1])); r = t['session']; "
        "d = os.path.join(r, 'artifacts', 'alpha'); os.makedirs(d, exist_ok=True); "
        "old = open(os.path.join(r, '.cconductor', 'attempts', 'alpha-1', 'claims.json')).read(); "
        "open(os.path.join(d, 'seen.json'), 'w').write(json.dumps({'old': old})); "
        "open(os.path.join(r, 'costs.jsonl'), 'a').write('{\"cost_usd\": 0.5}\\n')"))
    task = json.loads(Path(job.env["CCONDUCTOR_TASK"]).read_text())
    Path(job.env["CCONDUCTOR_TASK"]).write_text(json.dumps({**task, "attempt": 2}))
    previous = session.state / "attempts" / "alpha-1"
    previous.mkdir(parents=True)
    (previous / "claims.json").write_text('{"claims": []}')
    (session.root / "costs.jsonl").write_text('{"cost_usd": 0.25}\n')
    blobs = BlobIndex()
    packed = pack_job(job, session.root, blobs)
    assert {".cconductor/attempts/alpha-1/claims.json", "costs.jsonl"} <= set(packed.inputs)
    result = run_agent_job(packed, {sha: blobs.read(sha) for sha in set(packed.inputs.values())})
    assert json.loads(result.files["artifacts/alpha/seen.json"]) == {"old": '{"claims": []}'}
    assert result.appends["costs.jsonl"] == b'{"cost_usd": 0.5}\n'  # only the new line comes back
    land(session, job, result)
    assert (session.root / "costs.jsonl").read_text().splitlines() == ['{"cost_usd": 0.25}', '{"cost_usd": 0.5}']


def _worker_result(session: SessionPaths, docs: Path, agent: str = "alpha") -> tuple[Any, AgentResult]:
    job = agent_job(session, agent, docs)
    blobs = BlobIndex()
    packed = pack_job(job, session.root, blobs)
    return job, run_agent_job(packed, {sha: blobs.read(sha) for sha in set(packed.inputs.values())})


def test_landing_the_same_result_twice_changes_nothing(session: SessionPaths, docs: Path) -> None:
    job, result = _worker_result(session, docs)
    assert result.locked and set(result.files) == {"artifacts/alpha/finding.json", "artifacts/alpha/completion.json"}
    assert not session.lock("alpha").exists() and not session.agent_artifacts("alpha").exists()  # worker wrote nothing
    land(session, job, result)
    (session.agent_artifacts("alpha") / "finding.json").write_text('{"edited": true}')
    before = _snapshot(session.root)
    land(session, job, result)  # the lock still waits: a second copy of the job is ignored
    assert _snapshot(session.root) == before


def _snapshot(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_stored_figure_images_and_table_cells_come_back_with_the_result(session: SessionPaths, docs: Path) -> None:
    job, result = _worker_result(session, docs)
    objects = {f"sources/{'a' * 64}.png": b"\x89PNG\r\n\x1a\n",
               f"sources/{'b' * 64}.json": b'{"header": [], "rows": []}'}
    land(session, job, AgentResult(**{**result.__dict__, "files": {**result.files, **objects}}))
    assert all((session.root / rel).read_bytes() == data for rel, data in objects.items())


@pytest.mark.parametrize("rel", ["../escape.json", "artifacts/other/x.json", "/etc/passwd", "session.json",
                                 "artifacts/alpha", ".cconductor/failures/other-1.json", "sources/x.py",
                                 "sources/deep/x.json"])
def test_a_result_cannot_write_outside_the_agents_places(session: SessionPaths, docs: Path, rel: str) -> None:
    job, result = _worker_result(session, docs)
    bad = AgentResult(**{**result.__dict__, "files": {**result.files, rel: b"{}"}})
    with pytest.raises(UnsafeResultPath):
        land(session, job, bad)
    assert not session.lock("alpha").exists() and not session.agent_artifacts("alpha").exists()


def test_a_lost_job_is_submitted_again_and_lands_once(client: distributed.Client, session: SessionPaths,
                                                     docs: Path) -> None:
    executor = DaskExecutor(client, 2)
    seen: list[str] = []
    executor.notify = lambda type, message, **data: seen.append(type)
    executor.submit(agent_job(session, "lost", docs, env={"AGENT_SLEEP": "1.5"}))
    flight = next(iter(executor._running.values()))
    deadline = time.monotonic() + 30
    while flight.future.key not in {k for keys in client.processing().values() for k in keys}:
        assert time.monotonic() < deadline, "the job never started"
        time.sleep(0.05)
    client.cancel([flight.future])  # as when the scheduler forgets a job (restart, lost worker)
    result = drain(executor)["lost"]
    assert result.ok and executor.resubmitted == 1 and seen == ["agent.resubmitted"]
    assert session.lock("lost").exists()
    assert sorted(p.name for p in session.agent_artifacts("lost").iterdir()) == ["completion.json", "finding.json"]


def _ledger(paths: SessionPaths) -> list[tuple[str, str]]:
    with sqlite3.connect(paths.store_db, timeout=30) as db:
        return db.execute("SELECT agent, action FROM ledger ORDER BY seq").fetchall()


def _run(sessions: Path, docs: Path, executor: Any, agent_dirs: tuple[str, ...] = ()) -> tuple[dict[str, Any],
                                                                                                 SessionPaths]:
    mission = load_mission("academic-research")
    options = RunOptions(backend="offline", input_dirs=(str(docs),), agent_dirs=agent_dirs)
    paths = create_session(sessions, QUESTION, mission.name, options.to_dict())
    return MissionRunner(paths, mission, options, executor=executor).run(), paths


def _merged_once(paths: SessionPaths) -> list[str]:
    """Each job that succeeded merged exactly once (the fact-checker runs, and merges, once per iteration)."""
    merges = Counter(agent for agent, action in _ledger(paths) if action == "merge")
    succeeded = Counter(e["data"]["agent"] for e in read_events(paths.events)
                        if e["type"] == "agent.finished" and e["data"]["status"] == "succeeded")
    assert merges == succeeded, f"merges {dict(merges)} differ from successful jobs {dict(succeeded)}"
    return sorted(merges)


@pytest.mark.slow  # a whole run: the slow group (CI runs it) keeps the everyday suite under 10 min
def test_a_session_on_dask_matches_the_same_session_run_locally(client: distributed.Client, tmp_path: Path,
                                                               sleep_corpus: Path) -> None:
    from orchestrator.run.executor import LocalExecutor

    # one agent at a time: with two, the order of merges (and so whether a second iteration runs) may vary
    local, local_paths = _run(tmp_path / "local", sleep_corpus, LocalExecutor(1))
    executor = DaskExecutor(client, 1)
    remote, remote_paths = _run(tmp_path / "dask", sleep_corpus, executor)
    assert executor.resubmitted == 0  # nothing was lost on a healthy cluster (blobs are never released early)
    assert not [e for e in read_events(remote_paths.events) if e["type"] == "agent.failed"]
    assert remote["status"] == local["status"]
    assert _merged_once(remote_paths) == _merged_once(local_paths)
    graphs = [json.loads(p.kg_json.read_text()) for p in (local_paths, remote_paths)]
    assert len(graphs[0]["claims"]) == len(graphs[1]["claims"]) > 0
    assert sorted(s["content_sha256"] for s in graphs[1]["sources"] if s.get("content_sha256")) == sorted(
        s["content_sha256"] for s in graphs[0]["sources"] if s.get("content_sha256"))
    assert "ran on" in (remote_paths.logs / "research-planner-1.log").read_text()


def _slow_planner(folder: Path) -> Path:
    """The built-in planner, started 2 s late so that its worker can be killed while it runs."""
    import sys

    from agents.definitions import BUILTIN_DIR

    data = json.loads((BUILTIN_DIR / "research-planner.json").read_text())
    data["command"] = [sys.executable, "-c", "import subprocess, sys, time; time.sleep(2); "
                       "sys.exit(subprocess.call([sys.executable, '-m', 'agents', '--task', sys.argv[1]]))", "{task}"]
    data.pop("prompt", None)
    folder.mkdir()
    (folder / "research-planner.json").write_text(json.dumps(data))
    return folder


@pytest.mark.slow
def test_a_worker_killed_mid_job_is_retried_and_every_agent_merges_once(tmp_path: Path, sleep_corpus: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    agents = _slow_planner(tmp_path / "agents")
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setenv("TMPDIR", str(scratch))  # the killed worker never removes its scratch folder: keep it here
    killed: list[int] = []
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=":0") as cluster, distributed.Client(cluster) as client:

        def kill_the_planners_worker() -> None:
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                busy = [w for w, keys in client.processing().items() if any("research-planner" in k for k in keys)]
                if busy:
                    time.sleep(0.8)  # the agent is running (it sleeps 2 s before doing anything)
                    pid = client.run(os.getpid, workers=busy)[busy[0]]
                    os.kill(pid, signal.SIGKILL)
                    killed.append(pid)
                    return
                time.sleep(0.05)

        killer = threading.Thread(target=kill_the_planners_worker, daemon=True)
        killer.start()
        result, paths = _run(tmp_path / "sessions", sleep_corpus, DaskExecutor(client, 2), (str(agents),))
        killer.join(5)
    assert killed, "the planner's worker was never found running it"
    assert len(list(scratch.glob("cconductor-*"))) == 1  # only the killed run's; the retry cleaned up after itself
    assert result["status"] in ("partial", "completed"), result
    merged = _merged_once(paths)
    assert "research-planner" in merged and "synthesis-agent" in merged
    session = json.loads(paths.session_json.read_text())
    assert session["run"]["instances"]["research-planner"]["attempts"] == 1  # an engine retry is not an attempt
    finished = [e for e in read_events(paths.events) if e["type"] == "agent.finished"
                and e["data"]["agent"] == "research-planner"]
    assert len(finished) == 1 and finished[0]["data"]["status"] == "succeeded"
