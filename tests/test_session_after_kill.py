"""session.json after a kill -9: it shows every decision the ledger holds, rejections included.

A processor commits a batch to the ledger, then consumes or renames its locks, then writes
session.json. Killed after renaming a rejected agent's lock but before session.json, nothing is left
to judge again (the lock is `.kg.lock.error` now): the next processor must still record that
rejection, from the ledger.
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
from orchestrator.commit.processor import Processor
from orchestrator.model.layout import SessionPaths
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


def _die_before_session_json(root: str) -> None:
    """In a child: process every lock, and be killed where session.json would be written."""
    def killed(*args: Any) -> None:
        os._exit(9)

    processor_module.record_outcomes = killed  # type: ignore[assignment]
    Processor(SessionPaths(Path(root))).process_pending()


def _process(root: str) -> None:
    processor = Processor(SessionPaths(Path(root)))
    for name in sorted([*GOOD, *BAD]):
        processor.process_pending([name])
    processor.close()


def test_a_kill_between_the_lock_renames_and_session_json_loses_no_rejection(
    template: SessionPaths, tmp_path: Path
) -> None:
    paths = clone(template, tmp_path)
    child = FORK.Process(target=_die_before_session_json, args=(str(paths.root),))
    child.start()
    child.join(120)
    assert child.exitcode == 9
    assert sorted(p.name for p in paths.root.glob("*.kg.lock.error")) == [f"{a}.kg.lock.error" for a in BAD]
    assert states(paths) == {}, "killed before session.json was written"
    assert merge_pending(paths) == {}, "nothing is left to judge again"
    assert states(paths) == EXPECTED


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
