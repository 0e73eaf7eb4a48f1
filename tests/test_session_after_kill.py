"""session.json after a kill -9: it shows every decision the ledger holds, rejections included.

A processor commits a batch to the ledger, then writes session.json, then consumes or renames its
locks. Killed before session.json, the next processor records every decision from the ledger and
finishes the claims left behind (the same verdicts, no new ledger entry); killed after it, while the
locks are renamed, session.json already shows the ledger.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import random
import shutil
import time
from pathlib import Path
from typing import Any

import pytest

from orchestrator.commit import processor as processor_module
from orchestrator.commit.inspection import session_status
from orchestrator.commit.processor import Processor
from orchestrator.model.layout import SessionPaths
from orchestrator.session.ledger import Ledger
from orchestrator.session.record import create_session
from tests.conftest import merge_pending
from tests.helpers.agent_writer import write_agent

FORK = multiprocessing.get_context("fork")
GOOD = [f"good-{i}" for i in range(4)]
BAD = [f"bad-{i}" for i in range(3)]
EXPECTED = {**{a: ("merged", 1) for a in GOOD}, **{a: ("rejected", 1) for a in BAD}}


def write_bad(root: Path, agent: str) -> None:
    """A valid-looking agent whose high-priority claim quotes nothing of its source: rejected by SHACL."""
    write_agent(root, agent, claims=1, lock=False)
    claims = root / "artifacts" / agent / "claims.json"
    data = json.loads(claims.read_text())
    data["claims"][0]["evidence"][0]["snippet"] = "a sentence that the stored source text never says at all"
    claims.write_text(json.dumps(data))
    (root / f"{agent}.kg.lock").touch()


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> SessionPaths:
    paths = create_session(tmp_path_factory.mktemp("template"), "What does session.json remember?", "kill")
    for agent in GOOD:
        write_agent(paths.root, agent, claims=1)
    for agent in BAD:
        write_bad(paths.root, agent)
    return paths


def clone(template: SessionPaths, where: Path) -> SessionPaths:
    target = where / template.root.name
    shutil.copytree(template.root, target, symlinks=True)
    return SessionPaths(target)


def states(paths: SessionPaths) -> dict[str, Any]:
    agents = json.loads(paths.session_json.read_text())["agents"]
    return {agent: (entry["state"], entry["attempts"]) for agent, entry in agents.items()}


def _die_at(step: str, root: str) -> None:
    """In a child: process every lock, and be killed at ``step`` of the commit's effects."""
    def killed(*args: Any, **kwargs: Any) -> None:
        os._exit(9)

    setattr(processor_module, step, killed)
    Processor(SessionPaths(Path(root))).process_pending()


def entries(paths: SessionPaths) -> int:
    store = Ledger(paths.store_db)
    try:
        return len(store.ledger())
    finally:
        store.close()


def _process(root: str) -> None:
    processor = Processor(SessionPaths(Path(root)))
    for name in sorted([*GOOD, *BAD]):
        processor.process_pending([name])
    processor.close()


def test_a_kill_before_session_json_loses_no_rejection(template: SessionPaths, tmp_path: Path) -> None:
    paths = clone(template, tmp_path)
    child = FORK.Process(target=_die_at, args=("record_outcomes", str(paths.root)))
    child.start()
    child.join(120)
    assert child.exitcode == 9
    assert states(paths) == {}, "killed before session.json was written"
    assert entries(paths) == len(EXPECTED)
    shown = session_status(paths)  # the ledger is the truth: status does not wait for session.json
    assert {a: (v["state"], v["attempts"]) for a, v in shown["agents"].items()} == EXPECTED
    assert shown["locks_pending"] == [] and shown["locks_errored"] == BAD
    assert set(merge_pending(paths)) == set(EXPECTED), "the claims left behind are finished"
    assert entries(paths) == len(EXPECTED), "without a new ledger entry"
    assert states(paths) == EXPECTED
    assert sorted(p.name for p in paths.root.glob("*.kg.lock.error")) == [f"{a}.kg.lock.error" for a in BAD]


def test_a_kill_while_the_locks_are_renamed_leaves_session_json_current(
    template: SessionPaths, tmp_path: Path
) -> None:
    paths = clone(template, tmp_path)
    child = FORK.Process(target=_die_at, args=("settle_outcome", str(paths.root)))
    child.start()
    child.join(120)
    assert child.exitcode == 9
    assert states(paths) == EXPECTED, "session.json is written before any lock is renamed"
    merge_pending(paths)
    assert entries(paths) == len(EXPECTED) and states(paths) == EXPECTED
    assert sorted(p.name for p in paths.root.glob("*.kg.lock.error")) == [f"{a}.kg.lock.error" for a in BAD]


def test_random_kills_leave_session_json_equal_to_the_ledger(template: SessionPaths, tmp_path: Path) -> None:
    started = time.monotonic()
    reference = clone(template, tmp_path / "reference")
    _process(str(reference.root))
    took = time.monotonic() - started
    assert states(reference) == EXPECTED
    rng = random.Random(23)
    killed = 0
    for trial in range(16):  # until enough kills landed mid-run (the machine's load moves the timing)
        if trial >= 8 and killed >= 4:
            break
        paths = clone(template, tmp_path / f"trial-{trial}")
        child = FORK.Process(target=_process, args=(str(paths.root),))
        child.start()
        child.join(rng.uniform(0.05 * took, 0.9 * took))
        if child.exitcode is None:
            child.kill()
            child.join(30)
            killed += 1
        merge_pending(paths)
        assert states(paths) == EXPECTED, f"trial {trial}"
        shutil.rmtree(paths.root)
    assert killed >= 3
