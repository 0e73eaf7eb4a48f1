"""Dozens of agent processes drop their artifact sets at the same moment; every set is merged exactly once.

The agents are separate processes (tests/helpers/agent_writer.py: only files, no cconductor code)
that wait for a common start time. They race a watcher thread, two `cconductor watch` processes,
or a watcher and two `cconductor process` commands. Afterwards: one merge per agent in the ledger,
no rejection, every claim in the graph, every file on disk complete and parseable, and every
archived set identical to what its agent wrote.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from rdflib import Dataset

from orchestrator.commit import locks
from orchestrator.commit.processor import Processor
from orchestrator.model.layout import SessionPaths
from tests.conftest import cconductor
from tests.helpers import watching
from tests.helpers.agent_writer import artifact_files
from tests.helpers.watching import ledger, merged, running_watcher

WRITER = Path(__file__).resolve().parent / "helpers" / "agent_writer.py"
AGENTS = [f"agent-{i:02d}" for i in range(40)]
TIMEOUT = 90.0

pytestmark = [pytest.mark.slow, pytest.mark.filterwarnings("ignore::DeprecationWarning:rdflib.*")]


def wait_for(predicate: Callable[[], bool], what: str) -> None:
    """``watching.wait_for`` with this module's longer timeout, polling less often (40 processes share the CPU)."""
    watching.wait_for(predicate, what, TIMEOUT, poll=0.05)


def all_merged(paths: SessionPaths) -> bool:
    return merged(paths) >= set(AGENTS) and not locks.waiting(paths)


def drop_all_at_once(paths: SessionPaths, lead: float = 3.0) -> list[subprocess.Popen[bytes]]:
    """Start one process per agent; all write their sets at the same wall-clock moment."""
    start_at = time.time() + lead
    return [
        subprocess.Popen([sys.executable, str(WRITER), str(paths.root), agent, "--start-at", str(start_at),
                          *(["--rename-lock"] if i % 2 else [])])
        for i, agent in enumerate(AGENTS)
    ]


def wait_writers(writers: list[subprocess.Popen[bytes]]) -> None:
    for writer in writers:
        assert writer.wait(timeout=TIMEOUT) == 0


def check_everything_merged_once_and_intact(paths: SessionPaths) -> None:
    assert sorted(ledger(paths)) == sorted((agent, "merge") for agent in AGENTS), "exactly one merge per agent"
    assert not list(paths.root.glob("*.kg.lock*")) and not list(paths.root.glob("*.retry-instructions.json"))
    graph = json.loads(paths.kg_json.read_text(encoding="utf-8"))
    assert graph["commit_seq"] == len(AGENTS)
    assert sorted(c["id"] for c in graph["claims"]) == sorted(f"{a}:C{i}" for a in AGENTS for i in (1, 2, 3))
    assert all(e["verification"]["verified"] for c in graph["claims"] for e in c["evidence"])
    for agent in AGENTS:
        assert graph[agent]["claims"] == artifact_files(agent)["claims.json"]["claims"]
    dataset = Dataset()
    dataset.parse(paths.kg_trig, format="trig")
    assert {str(g.identifier) for g in dataset.graphs()} >= {f"urn:cconductor:agent:{a}" for a in AGENTS}
    session = json.loads(paths.session_json.read_text(encoding="utf-8"))
    assert {a: v["state"] for a, v in session["agents"].items()} == dict.fromkeys(AGENTS, "merged")
    lines = paths.events.read_text(encoding="utf-8").splitlines()
    events = [json.loads(line) for line in lines]  # no torn or interleaved event line
    committed = [e["data"]["agent"] for e in events if e["type"] == "merge.committed"]
    assert sorted(committed) == sorted(AGENTS)
    archived = {folder.name.split("-", 1)[1]: folder for folder in paths.archive.iterdir()}
    assert sorted(archived) == sorted(AGENTS)
    for agent, folder in archived.items():
        for name, content in artifact_files(agent).items():
            assert json.loads((folder / name).read_text(encoding="utf-8")) == content, f"{agent}/{name} torn"


def test_40_agent_processes_at_once_while_a_watcher_runs(session: SessionPaths) -> None:
    processor = Processor(session)
    try:
        with running_watcher(processor, rescan_interval=2.0, flush_interval=0.2, stop_timeout=60) as (_, thread):
            writers = drop_all_at_once(session)
            wait_writers(writers)
            wait_for(lambda: all_merged(session), "all 40 agents to merge")
            assert thread.is_alive()
    finally:
        processor.close()
    check_everything_merged_once_and_intact(session)


def test_40_agent_processes_at_once_while_two_watch_commands_compete(session: SessionPaths) -> None:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    watchers = [subprocess.Popen([*cconductor(), "watch", str(session.root), "--json", "--rescan-interval", "1"],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
                for _ in range(2)]
    try:
        try:
            wait_for(lambda: session.events.exists()
                     and session.events.read_text().count('"watch.started"') == 2, "both watchers to start")
        except AssertionError as exc:  # say why: a watcher that died has left its traceback on stderr
            for watcher in watchers:
                watcher.kill()
            raise AssertionError(f"{exc}; watchers said: {[w.communicate()[1][-3000:] for w in watchers]}") from exc
        writers = drop_all_at_once(session, lead=1.0)
        wait_writers(writers)
        wait_for(lambda: all_merged(session), "all 40 agents to merge")
        for watcher, stop in zip(watchers, (signal.SIGINT, signal.SIGTERM), strict=True):
            watcher.send_signal(stop)  # Ctrl-C and `kill` both stop a watcher cleanly
        outputs = [watcher.communicate(timeout=TIMEOUT) for watcher in watchers]
    finally:
        for watcher in watchers:
            if watcher.poll() is None:
                watcher.kill()
                watcher.wait()
    assert [w.returncode for w in watchers] == [0, 0], [err for _, err in outputs]
    for out, _ in outputs:
        printed = [json.loads(line) for line in out.splitlines() if line.strip()]
        assert printed[-1]["type"] == "watch.stopped"
    check_everything_merged_once_and_intact(session)


def test_40_agent_processes_while_a_watcher_and_two_process_commands_compete(session: SessionPaths) -> None:
    processor = Processor(session)
    results: list[subprocess.CompletedProcess[str]] = []

    def keep_processing() -> None:  # like a cron job: `cconductor process` until nothing is left
        deadline = time.monotonic() + TIMEOUT
        while time.monotonic() < deadline:
            results.append(subprocess.run([*cconductor(), "process", str(session.root), "--json"],
                                          capture_output=True, text=True, timeout=TIMEOUT))
            if all_merged(session):
                return

    try:
        with running_watcher(processor, rescan_interval=2.0, flush_interval=0.2, stop_timeout=60) as (_, thread):
            writers = drop_all_at_once(session, lead=1.5)
            loops = [threading.Thread(target=keep_processing) for _ in range(2)]
            for loop in loops:
                loop.start()
            wait_writers(writers)
            for loop in loops:
                loop.join(TIMEOUT + 30)
            wait_for(lambda: all_merged(session), "all 40 agents to merge")
            assert thread.is_alive()
    finally:
        processor.close()
    assert results and all(r.returncode == 0 for r in results), [r.stderr for r in results]
    by_command: list[dict[str, Any]] = [o for r in results for o in json.loads(r.stdout)]
    assert all(o["status"] in ("merged", "noop") for o in by_command)
    check_everything_merged_once_and_intact(session)


def test_50_agents_storing_the_same_text_with_cp_at_once_are_all_merged(session: SessionPaths) -> None:
    """The naive protocol example (cp straight over sources/<sha>.txt) raced: a text being rewritten is re-read."""
    agents = [f"sharer-{i:02d}" for i in range(50)]
    watcher = subprocess.Popen([*cconductor(), "watch", str(session.root), "--rescan-interval", "0.5"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        watching.wait_for(lambda: session.events.exists() and "watch.started" in session.events.read_text(),
                          "the watcher")
        start_at = time.time() + 3.0
        writers = [subprocess.Popen([sys.executable, str(WRITER), str(session.root), agent, "--start-at",
                                     str(start_at), "--shared-text"]) for agent in agents]
        wait_writers(writers)
        wait_for(lambda: merged(session) | {p.name.split(".")[0] for p in session.root.glob("*.kg.lock.error")}
                 >= set(agents) and not locks.waiting(session), "all 50 agents to be decided")
        watcher.send_signal(signal.SIGINT)
        _, err = watcher.communicate(timeout=60)
    finally:
        if watcher.poll() is None:
            watcher.kill()
    rejected = sorted(p.name for p in session.root.glob("*.kg.lock.error"))
    assert rejected == [], f"{len(rejected)} of 50 rejected: {rejected[:5]}"
    assert sorted(ledger(session)) == sorted((a, "merge") for a in agents)
    assert "Traceback" not in err
