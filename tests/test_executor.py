"""The local executor: parallelism limit, timeouts (terminate, then kill), heartbeats, logs."""

from __future__ import annotations

import sys
import time
from pathlib import Path

from orchestrator.run.executor import Job, JobResult, LocalExecutor


def job(tmp_path: Path, name: str, code: str, *, timeout: float = 30, heartbeat: Path | None = None,
        heartbeat_timeout: float | None = None) -> Job:
    return Job(job_id=name, agent=name, argv=(sys.executable, "-c", code), cwd=str(tmp_path),
               log_path=str(tmp_path / "logs" / f"{name}.log"), timeout_seconds=timeout,
               heartbeat_path=str(heartbeat) if heartbeat else None, heartbeat_timeout_seconds=heartbeat_timeout)


def drain(executor: LocalExecutor, limit: float = 60) -> dict[str, JobResult]:
    results: dict[str, JobResult] = {}
    deadline = time.monotonic() + limit
    while executor.pending() and time.monotonic() < deadline:
        results.update((r.job_id, r) for r in executor.wait(timeout=1))
    assert not executor.pending(), "jobs still running past the test's limit"
    return results


def test_never_more_than_max_parallel_jobs_run_at_once(tmp_path: Path) -> None:
    marks = tmp_path / "marks"
    marks.mkdir()
    code = ("import os, sys, time; d = sys.argv[1] if len(sys.argv) > 1 else {d!r}; "
            "open(os.path.join(d, 'start-{n}'), 'w').write(repr(time.time())); time.sleep(0.4); "
            "open(os.path.join(d, 'end-{n}'), 'w').write(repr(time.time()))")
    executor = LocalExecutor(max_parallel=2, poll_interval=0.01)
    for n in range(5):
        executor.submit(job(tmp_path, f"j{n}", code.format(d=str(marks), n=n)))
    results = drain(executor)
    assert all(r.ok for r in results.values())
    spans = [(float((marks / f"start-{n}").read_text()), float((marks / f"end-{n}").read_text())) for n in range(5)]
    most = max(sum(1 for s, e in spans if s <= moment < e) for moment, _ in spans)
    assert most == 2


def test_a_job_ignoring_sigterm_is_killed_after_the_grace_period(tmp_path: Path) -> None:
    code = ("import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
            "print('stubborn', flush=True); time.sleep(60)")
    executor = LocalExecutor(poll_interval=0.01, terminate_grace=0.5)
    started = time.monotonic()
    executor.submit(job(tmp_path, "stubborn", code, timeout=0.5))
    result = drain(executor)["stubborn"]
    assert result.status == "timed_out" and result.exit_code == -9
    assert time.monotonic() - started < 10
    assert "stubborn" in Path(result.log_path).read_text()


def test_a_job_whose_heartbeat_stops_is_stopped_as_stalled(tmp_path: Path) -> None:
    beat = tmp_path / "beat"
    code = f"import pathlib, time; p = pathlib.Path({str(beat)!r}); p.touch(); time.sleep(60)"
    executor = LocalExecutor(poll_interval=0.01, terminate_grace=0.5)
    executor.submit(job(tmp_path, "quiet", code, heartbeat=beat, heartbeat_timeout=0.6))
    result = drain(executor)["quiet"]
    assert result.status == "stalled" and "stalled" in result.message


def test_a_job_that_keeps_beating_is_not_stalled(tmp_path: Path) -> None:
    beat = tmp_path / "beat"
    code = (f"import pathlib, time; p = pathlib.Path({str(beat)!r})\n"
            "for _ in range(12):\n    p.touch(); time.sleep(0.1)\n")
    executor = LocalExecutor(poll_interval=0.01)
    executor.submit(job(tmp_path, "alive", code, heartbeat=beat, heartbeat_timeout=0.6))
    assert drain(executor)["alive"].status == "succeeded"


def test_a_program_that_cannot_start_is_a_failed_result(tmp_path: Path) -> None:
    executor = LocalExecutor()
    executor.submit(Job("x", "x", ("/nonexistent/agent",), str(tmp_path), str(tmp_path / "x.log"), 5))
    result = drain(executor)["x"]
    assert result.status == "failed" and "could not start" in result.message


def test_cancel_all_stops_running_and_queued_jobs(tmp_path: Path) -> None:
    executor = LocalExecutor(max_parallel=1, poll_interval=0.01, terminate_grace=0.5)
    for n in range(3):
        executor.submit(job(tmp_path, f"c{n}", "import time; time.sleep(60)"))
    cancelled = executor.cancel_all()
    assert [r.status for r in cancelled] == ["cancelled"] and not executor.pending()
