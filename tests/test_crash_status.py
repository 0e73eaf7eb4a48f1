"""kill -9 a processor in the middle of a burst of good and bad submissions: what ``status`` (and the
viewer's agents panel) says right after the kill, and what the next start repairs.

The ledger is the truth. Right after any kill, ``status`` shows every agent the ledger has judged
as it judged it (never pending, never missing), lists as pending only the locks it has not judged,
and ``session.json`` is never ahead of the ledger. After ``process`` or ``watch`` starts again,
``session.json`` matches the ledger on its own and every rejected agent has its
``.kg.lock.error`` and retry instructions, with no new ledger entry for a decided claim.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from orchestrator.commit import locks
from orchestrator.commit.inspection import session_status
from orchestrator.commit.processor import Processor
from orchestrator.contract.schemas import SchemaRegistry
from orchestrator.model.layout import SessionPaths
from orchestrator.rdf.shacl import shapes
from orchestrator.session.record import create_session
from orchestrator.viewer.agents import agents_overview
from tests.conftest import cconductor
from tests.helpers.agent_writer import write_agent

GOOD = [f"good-{i:02d}" for i in range(8)]
BAD = [f"bad-{i:02d}" for i in range(8)]
TRIALS = int(os.environ.get("CCONDUCTOR_CRASH_TRIALS", "12"))
FORK = multiprocessing.get_context("fork")
STATE = {"merge": "merged", "reject": "rejected"}

pytestmark = [pytest.mark.slow, pytest.mark.filterwarnings("ignore::DeprecationWarning:rdflib.*")]


def sweep(root: str) -> None:
    processor = Processor(SessionPaths(Path(root)))
    processor.process_pending()  # one sweep: the whole burst committed in one transaction
    processor.close()


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> SessionPaths:
    shapes(), SchemaRegistry.default()  # warm the caches the forked processors inherit
    paths = create_session(tmp_path_factory.mktemp("burst"), "What does status say after kill -9?", "crash-test")
    for agent in GOOD:
        write_agent(paths.root, agent, claims=1)
    for agent in BAD:
        paths.agent_artifacts(agent).mkdir(parents=True)
        (paths.agent_artifacts(agent) / "claims.json").write_text('{"claims": [}')
        paths.lock(agent).touch()
    return paths


def clone(template: SessionPaths, where: Path) -> SessionPaths:
    target = where / template.root.name
    shutil.copytree(template.root, target, symlinks=True)
    return SessionPaths(target)


def ledger_rows(paths: SessionPaths) -> list[tuple[int, str, str, int]]:
    with sqlite3.connect(paths.store_db, timeout=30) as db:
        return db.execute("SELECT seq, agent, action, attempt FROM ledger ORDER BY seq").fetchall()


def last_decisions(paths: SessionPaths) -> dict[str, tuple[str, int]]:
    return {agent: (STATE[action], attempt) for _, agent, action, attempt in ledger_rows(paths)}


def check_status(paths: SessionPaths, where: str) -> dict[str, tuple[str, int]]:
    """``status`` against the ledger right after a kill; the ledger's decisions returned."""
    judged = last_decisions(paths)
    info = session_status(paths)
    shown = {a: (v.get("state"), v.get("attempts")) for a, v in info["agents"].items()}
    for agent, decision in judged.items():
        assert shown.get(agent) == decision, f"{where}: status shows {agent} as {shown.get(agent)}, ledger {decision}"
        assert agent not in info["locks_pending"], f"{where}: {agent} judged ({decision}) but shown pending"
        if decision[0] == "rejected":
            assert agent in info["locks_errored"], f"{where}: rejected {agent} not shown errored"
    for agent in [*GOOD, *BAD]:
        if agent not in judged:
            assert agent in info["locks_pending"], f"{where}: unjudged {agent} not shown pending"
            assert shown.get(agent, ("pending",))[0] == "pending", f"{where}: unjudged {agent} shown {shown[agent]}"
    rows = {row["agent"]: row for row in agents_overview(paths)}  # the viewer's agents panel says the same
    for agent, (state, attempts) in judged.items():
        assert (rows[agent]["state"], rows[agent]["attempts"]) == (state, attempts), f"{where}: viewer: {rows[agent]}"
    recorded = json.loads(paths.session_json.read_text()).get("agents", {})
    for agent, entry in recorded.items():  # the file may lag behind the ledger, never run ahead of it
        assert (entry["state"], entry["attempts"]) == judged.get(agent), f"{where}: session.json ahead: {agent}"
    return judged


def check_repaired(paths: SessionPaths, before: dict[str, tuple[str, int]], where: str) -> None:
    judged = last_decisions(paths)
    assert sorted(judged) == sorted([*GOOD, *BAD]), f"{where}: not every agent judged"
    assert {a: v for a, v in judged.items() if a in before} == before, f"{where}: a decided claim was judged anew"
    assert len(ledger_rows(paths)) == len(GOOD) + len(BAD), f"{where}: more than one entry per agent"
    recorded = json.loads(paths.session_json.read_text())["agents"]
    assert {a: (v["state"], v["attempts"]) for a, v in recorded.items()} == judged, f"{where}: session.json"
    assert locks.waiting(paths) == [], f"{where}: locks left"
    for agent in BAD:
        assert paths.lock_error(agent).is_file(), f"{where}: {agent}: no .kg.lock.error"
        assert json.loads(paths.retry_instructions(agent).read_text())["agent"] == agent
    for agent in GOOD:
        assert not paths.lock_error(agent).exists() and not paths.retry_instructions(agent).exists()
    assert session_status(paths)["locks_unsettled"] == []


def kill_after_commit(child: Any, paths: SessionPaths, timeout: float = 60) -> None:
    """SIGKILL ``child`` (a process or Popen) as soon as the ledger holds an entry: just after the commit."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            db = sqlite3.connect(f"file:{paths.store_db}?mode=ro", uri=True, timeout=0.1)
            count = db.execute("SELECT COUNT(*) FROM ledger").fetchone()[0]
            db.close()
        except sqlite3.Error:
            count = 0
        if count:
            break
        time.sleep(0.002)
    os.kill(child.pid, signal.SIGKILL)


@pytest.fixture(scope="module")
def full_sweep(template: SessionPaths, tmp_path_factory: pytest.TempPathFactory) -> float:
    """How long an uninterrupted sweep of the burst takes (the shortest of two)."""
    took = []
    for run in range(2):
        paths = clone(template, tmp_path_factory.mktemp(f"reference-{run}"))
        started = time.monotonic()
        child = FORK.Process(target=sweep, args=(str(paths.root),))
        child.start()
        child.join(120)
        took.append(time.monotonic() - started)
        assert child.exitcode == 0
        check_repaired(paths, {}, "an uninterrupted sweep")
    return min(took)


def test_sigkill_mid_burst_status_follows_the_ledger_and_a_restart_repairs(
    template: SessionPaths, full_sweep: float, tmp_path: Path
) -> None:
    after_commit = 0
    for trial in range(TRIALS):
        rng = random.Random(20261127 + trial)
        paths = clone(template, tmp_path / f"trial-{trial:03d}")
        where = f"trial {trial}"
        child = FORK.Process(target=sweep, args=(str(paths.root),))
        child.start()
        if trial % 2:  # the reviewer's case: killed the moment the commit is visible
            kill_after_commit(child, paths)
        else:
            child.join(rng.uniform(0.3 * full_sweep, 1.1 * full_sweep))
            if child.exitcode is None:
                child.kill()
        child.join(30)
        judged = check_status(paths, where)
        after_commit += child.exitcode == -9 and bool(judged)
        resumed = FORK.Process(target=sweep, args=(str(paths.root),))
        resumed.start()
        resumed.join(120)
        assert resumed.exitcode == 0
        check_repaired(paths, judged, where)
        shutil.rmtree(paths.root)
    assert after_commit >= TRIALS // 2, f"only {after_commit} kills landed after the commit"


def test_sigkill_of_watch_after_a_burst_commits_then_watch_repairs(template: SessionPaths, tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    paths = clone(template, tmp_path / "watch")
    watch = subprocess.Popen([*cconductor(), "watch", str(paths.root)], env=env,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        kill_after_commit(watch, paths, timeout=120)
    finally:
        watch.kill()
        watch.wait(30)
    judged = check_status(paths, "after the kill of watch")
    assert judged, "the kill came before the commit"
    shown = subprocess.run([*cconductor(), "status", str(paths.root)], env=env, capture_output=True, text=True,
                           timeout=120)
    assert shown.returncode == 0, shown.stderr
    for agent, (state, _) in judged.items():
        assert f"agent {agent:<28} {state}" in shown.stdout, shown.stdout
    watch = subprocess.Popen([*cconductor(), "watch", str(paths.root)], env=env,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and (locks.waiting(paths) or len(last_decisions(paths)) < len(judged)):
            time.sleep(0.1)
        time.sleep(0.5)  # the sweep's last effects
    finally:
        watch.send_signal(signal.SIGINT)
        watch.wait(60)
    check_repaired(paths, judged, "after watch started again")
