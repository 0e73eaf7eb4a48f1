"""The watcher with real watchdog observers (inotify and polling), in a thread or as `cconductor watch`.

The periodic safety rescan is set far beyond the test timeouts wherever a test is about file
events, so a lock can only be found in time by the observer (or by the scan at start).
"""

from __future__ import annotations

import itertools
import json
import os
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from orchestrator.commit import checks
from orchestrator.commit.processor import Processor
from orchestrator.commit.watcher import _LockHandler
from orchestrator.model.layout import SessionPaths
from orchestrator.session.events import read_events
from tests.conftest import cconductor
from tests.helpers.agent_writer import write_agent
from tests.helpers.watching import TIMEOUT, ledger, merged, running_watcher, wait_for

NO_RESCAN = 3600.0  # longer than any test: only file events (or the scan at start) find locks


@pytest.fixture
def processor(session: SessionPaths) -> Iterator[Processor]:
    proc = Processor(session)
    yield proc
    proc.close()


def event_types(paths: SessionPaths) -> list[str]:
    return [e["type"] for e in read_events(paths.events)]


def graph(paths: SessionPaths) -> dict[str, Any]:
    return json.loads(paths.kg_json.read_text(encoding="utf-8"))


def test_plain_create_and_write_then_rename_locks_are_both_detected(
    session: SessionPaths, processor: Processor
) -> None:
    with running_watcher(processor, rescan_interval=NO_RESCAN):
        write_agent(session.root, "plain")
        wait_for(lambda: "plain" in merged(session), "the plainly created lock to merge")
        write_agent(session.root, "renamed", rename_lock=True)
        wait_for(lambda: "renamed" in merged(session), "the renamed lock to merge")
        assert not session.lock("plain").exists() and not session.lock("renamed").exists()
        assert not (session.root / "renamed.kg.lock.tmp").exists()
    assert sorted(ledger(session)) == [("plain", "merge"), ("renamed", "merge")]
    expected = {f"{agent}:C{i}" for agent in ("plain", "renamed") for i in (1, 2, 3)}
    assert {c["id"] for c in graph(session)["claims"]} == expected


def test_a_lock_created_before_the_watcher_starts_is_processed_at_start(
    session: SessionPaths, processor: Processor
) -> None:
    write_agent(session.root, "early")
    with running_watcher(processor, rescan_interval=NO_RESCAN):
        wait_for(lambda: "early" in merged(session), "the early lock to merge")
        wait_for(lambda: not session.lock("early").exists(), "the early lock to be consumed")
    assert graph(session)["early"]["claims"][0]["id"] == "C1"


def test_a_burst_of_200_agents_is_merged_exactly_once_each(
    session: SessionPaths, processor: Processor
) -> None:
    agents = [f"burst-{i:03d}" for i in range(200)]
    with running_watcher(processor, rescan_interval=NO_RESCAN):
        for agent in agents:
            write_agent(session.root, agent, claims=1, rename_lock=agent.endswith(("1", "3", "5")))
        wait_for(lambda: merged(session) == set(agents), "all 200 agents to merge", timeout=120)
        wait_for(lambda: not list(session.root.glob("*.kg.lock*")), "every lock to be consumed")
    entries = ledger(session)
    assert sorted(entries) == sorted((agent, "merge") for agent in agents), "exactly one merge per agent"
    kg = graph(session)
    assert sorted(c["id"] for c in kg["claims"]) == sorted(f"{a}:C1" for a in agents)
    assert kg["stats"]["claims_count"] == 200
    assert all(kg[a]["claims"][0]["statement"] == f"Fact 1 about {a} is true." for a in agents)
    assert "processor.error" not in event_types(session)


def test_polling_mode_detects_locks_without_inotify(session: SessionPaths, processor: Processor) -> None:
    with running_watcher(processor, polling=True, rescan_interval=NO_RESCAN):
        write_agent(session.root, "polled")
        wait_for(lambda: "polled" in merged(session), "the polling observer to find the lock")
        write_agent(session.root, "polled-renamed", rename_lock=True)
        wait_for(lambda: "polled-renamed" in merged(session), "the polling observer to find the renamed lock")
    started = [e for e in read_events(session.events) if e["type"] == "watch.started"]
    assert started[-1]["data"] == {"polling": True}


def test_views_are_flushed_when_the_watcher_stops(session: SessionPaths, processor: Processor) -> None:
    # a long flush interval: after the first flush, views are only written again when the watcher stops
    with running_watcher(processor, rescan_interval=NO_RESCAN, flush_interval=600) as (watcher, thread):
        write_agent(session.root, "first")
        wait_for(lambda: session.kg_json.exists() and "first" in graph(session), "the first views")
        write_agent(session.root, "second")
        wait_for(lambda: "second" in merged(session), "the second merge")
        wait_for(lambda: not session.lock("second").exists(), "the second lock to be consumed")
        assert "second" not in graph(session), "views lag behind the commit until the flush interval"
        started = time.monotonic()
        watcher.stop()
        thread.join(TIMEOUT)
        assert not thread.is_alive()
        assert time.monotonic() - started < TIMEOUT / 2, "stop waits for the flush interval"
    kg = graph(session)
    assert "first" in kg and "second" in kg
    assert kg["commit_seq"] == 2
    assert "urn:cconductor:agent:second" in session.kg_trig.read_text()
    assert event_types(session)[-1] == "watch.stopped"


def test_a_processing_failure_is_reported_and_the_watcher_goes_on(
    session: SessionPaths, processor: Processor, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = processor.process_pending
    calls = {"n": 0}

    def failing_once(only: Any = None) -> Any:
        calls["n"] += 1
        if calls["n"] == 2:  # the first call is the scan at start
            raise OSError(28, "No space left on device (simulated)")
        return real(only)

    monkeypatch.setattr(processor, "process_pending", failing_once)
    with running_watcher(processor, rescan_interval=NO_RESCAN) as (_, thread):
        write_agent(session.root, "unlucky")
        wait_for(lambda: "processor.error" in event_types(session), "the processor.error event")
        wait_for(lambda: "unlucky" in merged(session), "the failed lock to be retried and merged")
        write_agent(session.root, "next")
        wait_for(lambda: "next" in merged(session), "the next lock to merge")
        assert thread.is_alive()
    error = next(e for e in read_events(session.events) if e["type"] == "processor.error")
    assert "No space left on device" in error["message"]
    assert sorted(ledger(session)) == [("next", "merge"), ("unlucky", "merge")]


def test_an_internal_failure_for_one_agent_rejects_only_that_agent_and_its_bystander_merges(
    session: SessionPaths, processor: Processor, monkeypatch: pytest.MonkeyPatch
) -> None:
    # "second" hits a bug of cconductor's own: it is rejected with an internal error (retry
    # instructions, an event), "first" in the same sweep merges, and the watcher goes on
    real = checks.bind_evidence
    failed = threading.Event()

    def bind_failing_once_for_second(contribution: dict[str, Any], *args: Any, **kwargs: Any) -> Any:
        if contribution["agent"] == "second" and not failed.is_set():
            failed.set()
            raise RuntimeError("evidence binding bug (simulated)")
        return real(contribution, *args, **kwargs)

    monkeypatch.setattr(checks, "bind_evidence", bind_failing_once_for_second)
    write_agent(session.root, "first")
    write_agent(session.root, "second")
    with running_watcher(processor, rescan_interval=NO_RESCAN) as (_, thread):
        wait_for(lambda: session.lock_error("second").exists(), "the failing agent to be rejected")
        wait_for(lambda: "first" in merged(session), "the bystander to merge")
        instructions = json.loads(session.retry_instructions("second").read_text())
        problems = [p for f in instructions["files"] for p in f["problems"]]
        assert [p["rule"] for p in problems] == ["internal.error"]
        assert "evidence binding bug (simulated)" in problems[0]["message"]
        assert "report it as a bug" in problems[0]["hint"]
        assert "Traceback" in (session.state / "internal-errors.log").read_text()
        # the agent's files were fine: re-submitting them merges
        os.replace(session.lock_error("second"), session.lock("second"))
        wait_for(lambda: merged(session) == {"first", "second"}, "the re-submitted agent to merge")
        assert thread.is_alive()
    assert "processor.agent_failed" in event_types(session)
    assert sorted(ledger(session)) == [("first", "merge"), ("second", "merge"), ("second", "reject")]
    assert {"first", "second"} <= set(graph(session))


def test_an_exception_in_the_event_handler_cannot_kill_the_observer(
    session: SessionPaths, processor: Processor, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = _LockHandler._hint
    raised = threading.Event()

    def hint_failing_once(self: _LockHandler, path: str | bytes) -> None:
        if not raised.is_set():
            raised.set()
            raise RuntimeError("handler bug (simulated)")
        real(self, path)

    monkeypatch.setattr(_LockHandler, "_hint", hint_failing_once)
    with running_watcher(processor, rescan_interval=NO_RESCAN) as (_, thread):
        write_agent(session.root, "first")
        wait_for(raised.is_set, "the handler to raise")
        wait_for(lambda: "first" in merged(session), "the lock whose event handler raised to merge")
        write_agent(session.root, "second")
        wait_for(lambda: "second" in merged(session), "the next lock to merge through the same observer")
        assert thread.is_alive()
    assert "watch.restarted" not in event_types(session), "the observer never died"


def test_an_artifact_folder_that_changes_while_it_is_read_is_deferred_not_merged_half_written(
    session: SessionPaths, processor: Processor, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = session.agent_artifacts("slow")
    late_claims = {"claims": [{"id": "C9", "statement": "Fact 9 about slow is true.", "confidence": 0.5,
                               "priority": "low", "evidence": [{"source_id": "S1", "snippet": "Fact 9"}]}]}
    real_validate, real_validate_many = processor.rdf.validate_agent, processor.rdf.validate_many
    calls = {"n": 0}

    def writing() -> None:
        calls["n"] += 1
        if calls["n"] == 1:  # the agent is still writing: a file appears after the folder was read
            (folder / "claims-late.json").write_text(json.dumps(late_claims))

    def validate_while_the_agent_writes(agent: str) -> Any:
        writing()
        return real_validate(agent)

    def validate_many_while_the_agent_writes(focus: Any) -> Any:  # a sweep's one SHACL pass
        writing()
        return real_validate_many(focus)

    monkeypatch.setattr(processor.rdf, "validate_agent", validate_while_the_agent_writes)
    monkeypatch.setattr(processor.rdf, "validate_many", validate_many_while_the_agent_writes)
    with running_watcher(processor, rescan_interval=NO_RESCAN):
        write_agent(session.root, "slow")
        wait_for(lambda: "slow" in merged(session), "the complete folder to merge")
    types = event_types(session)
    assert "lock.deferred" in types
    assert types.index("lock.deferred") < types.index("merge.committed")
    assert ledger(session) == [("slow", "merge")], "the half-written set was never committed"
    kg = graph(session)
    assert [c["id"] for c in kg["slow"]["claims"]] == ["C9", "C1", "C2", "C3"]
    assert calls["n"] >= 2


def test_cconductor_watch_polling_in_a_subprocess_merges_and_stops_cleanly_on_ctrl_c(
    session: SessionPaths,
) -> None:
    command = [*cconductor(), "watch", str(session.root), "--polling", "--json", "--rescan-interval", "3600"]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        wait_for(lambda: "watch.started" in event_types(session) or proc.poll() is not None, "watch.started")
        assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
        write_agent(session.root, "via-cli")
        wait_for(lambda: "via-cli" in merged(session), "`cconductor watch --polling` to merge the lock")
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=TIMEOUT)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, err
    printed = [json.loads(line) for line in out.splitlines() if line.strip()]
    assert {"watch.started", "merge.committed", "watch.stopped"} <= {e["type"] for e in printed}
    assert graph(session)["via-cli"]["claims"][0]["id"] == "C1"


def test_ctrl_c_to_the_terminals_process_group_stops_watch_cleanly(session: SessionPaths) -> None:
    command = [*cconductor(), "watch", str(session.root), "--json", "--rescan-interval", "3600"]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONUNBUFFERED": "1"}, start_new_session=True)
    try:
        wait_for(lambda: "watch.started" in event_types(session) or proc.poll() is not None, "watch.started")
        os.killpg(proc.pid, signal.SIGINT)
        out, err = proc.communicate(timeout=TIMEOUT)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.returncode == 0, err
    assert "Traceback" not in err
    assert "watch.stopped" in {json.loads(line)["type"] for line in out.splitlines() if line.strip()}


def test_a_sigkilled_watch_in_the_middle_of_a_burst_leaves_no_process_behind(session: SessionPaths) -> None:
    """The processor judges a burst itself (no helper processes): killed with SIGKILL while it judges,
    nothing of it is left running, and a new processor finishes the burst."""
    import psutil

    for i in range(40):
        write_agent(session.root, f"agent-{i:02d}", claims=1, lock=False)
    command = [*cconductor(), "watch", str(session.root), "--json", "--rescan-interval", "3600"]
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        wait_for(lambda: "watch.started" in event_types(session) or proc.poll() is not None, "watch.started")
        for i in range(40):
            session.lock(f"agent-{i:02d}").touch()
        wait_for(lambda: "lock.seen" in event_types(session) or proc.poll() is not None, "the burst to start",
                 poll=0.005)
        family = [proc.pid] + [child.pid for child in psutil.Process(proc.pid).children(recursive=True)]
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(TIMEOUT)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    wait_for(lambda: not [p for p in psutil.process_iter(["pid"]) if p.info["pid"] in family[1:]],
             "every process the watch started to be gone")
    leftover = [p.pid for p in psutil.process_iter() if _in_group(p, proc.pid)]
    assert leftover == [], f"processes of the killed watch's group still run: {leftover}"
    processor = Processor(session)
    try:
        processor.process_pending()
    finally:
        processor.close()
    assert merged(session) == {f"agent-{i:02d}" for i in range(40)}


def _in_group(process: Any, group: int) -> bool:
    try:
        return bool(os.getpgid(process.pid) == group)
    except (ProcessLookupError, PermissionError):
        return False


def test_a_failing_batch_backs_off_and_says_what_failed(
    session: SessionPaths, processor: Processor, monkeypatch: pytest.MonkeyPatch
) -> None:
    attempts: list[float] = []
    said: list[str] = []

    def always_failing(only: Any = None) -> Any:
        attempts.append(time.monotonic())
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(processor, "process_pending", always_failing)
    with running_watcher(processor, rescan_interval=0.05, report=said.append) as (_, thread):
        wait_for(lambda: len(attempts) >= 4, "four failed sweeps")
        assert thread.is_alive()
    gaps = [b - a for a, b in itertools.pairwise(attempts)][:3]
    # 0.2 s, then 0.4 s, then 0.8 s: not a retry every rescan (0.05 s) for ever
    assert gaps[1] > 1.5 * 0.2 and gaps[2] > 1.5 * 0.4, gaps
    assert said[0].startswith(
        "watch: processing failed (OSError: [Errno 28] No space left on device); retrying in 0.2 s")
    assert "details in .cconductor/internal-errors.log" in said[0]
    assert "Traceback" in (session.state / "internal-errors.log").read_text()


def test_locks_dropped_while_watch_starts_are_merged_without_waiting_for_a_rescan(session: SessionPaths) -> None:
    """24 agents drop their locks during the first 3 s after `cconductor watch` is launched (before it watches,
    while it starts watching, during its first sweep): each is merged at once, not at the next rescan."""
    agents = [f"early-{i:02d}" for i in range(24)]
    for agent in agents:
        write_agent(session.root, agent, claims=1, lock=False)
    command = [*cconductor(), "watch", str(session.root), "--json", "--rescan-interval", "3600"]
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        launched = time.monotonic()
        for number, agent in enumerate(agents):
            time.sleep(max(0.0, launched + 3.0 * number / len(agents) - time.monotonic()))
            session.lock(agent).touch()
        wait_for(lambda: merged(session) == set(agents) or proc.poll() is not None,
                 "every lock dropped during start-up to merge (the next rescan is an hour away)", timeout=90)
        assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(TIMEOUT)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    assert merged(session) == set(agents)
