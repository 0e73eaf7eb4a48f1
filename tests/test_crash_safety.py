"""kill -9 the processor at random points of a long series of merges, many times.

After every kill: the views on disk parse and show only committed namespaces, every lock is
either merged (in the ledger, the commit point) or still pending, nothing is rejected or merged
twice. After a restart to completion, the graph (JSON and RDF) equals the one a crash-free run
produces on an identical copy of the session, and the archive holds every merged set.

The processors are forked from this (warmed-up) test process, so a trial costs the merges, not
an interpreter start; a few trials kill the real `cconductor process` command instead.
A longer soak: ``CCONDUCTOR_CRASH_TRIALS=300 pytest tests/test_crash_safety.py``.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import random
import shutil
import sqlite3
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from rdflib import Dataset, Namespace

from orchestrator.commit import locks
from orchestrator.commit.processor import Processor
from orchestrator.commit.views import flush_views
from orchestrator.contract.schemas import SchemaRegistry
from orchestrator.model.layout import SessionPaths
from orchestrator.rdf.shacl import shapes
from orchestrator.session.record import create_session
from tests.conftest import cconductor, merge_pending
from tests.helpers.agent_writer import write_agent

AGENTS = [f"agent-{i:02d}" for i in range(20)]
#: Kill trials per run; CCONDUCTOR_CRASH_TRIALS=300 makes a longer soak (about 3 minutes).
TRIALS = int(os.environ.get("CCONDUCTOR_CRASH_TRIALS", "30"))
CLI_TRIALS = 2
MODES = ("each", "each", "batch", "chunks")  # how the killed processor takes its locks
VOLATILE = {"generated_at", "merged_at", "committed_at", "created_at", "updated_at", "written_at",
            "commit_seq", "seq", "last_commit_seq", "record_seq", "timestamp"}
PROV = Namespace("http://www.w3.org/ns/prov#")
FORK = multiprocessing.get_context("fork")

pytestmark = [pytest.mark.slow, pytest.mark.filterwarnings("ignore::DeprecationWarning:rdflib.*")]


def process(root: str, mode: str) -> None:
    """The processor under test: ``cconductor process`` as a loop of batches, views flushed as it goes."""
    paths = SessionPaths(Path(root))
    processor = Processor(paths)
    if mode == "batch":
        processor.process_pending()
    else:
        names = locks.waiting(paths)
        step = 1 if mode == "each" else 4
        for start in range(0, len(names), step):
            processor.process_pending(names[start : start + step])
            flush_views(processor)
    flush_views(processor)
    processor.close()


# -- sessions ------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> SessionPaths:
    """A session with 20 pending agents, each with a stored source text and a verified claim."""
    shapes(), SchemaRegistry.default()  # warm the caches the forked processors inherit
    paths = create_session(tmp_path_factory.mktemp("template"), "What survives kill -9?", "crash-test")
    for agent in AGENTS:
        write_agent(paths.root, agent, claims=1)
    return paths


def clone(template: SessionPaths, where: Path) -> SessionPaths:
    """An identical session (same id, same files) in another folder."""
    target = where / template.root.name
    shutil.copytree(template.root, target, symlinks=True)
    return SessionPaths(target)


def normalized(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: normalized(v) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, list):
        return [normalized(v) for v in value]
    return value


def rdf_quads(paths: SessionPaths) -> set[tuple[Any, ...]]:
    dataset = Dataset()
    dataset.parse(paths.kg_trig, format="trig")
    return {(s, p, o, g) for s, p, o, g in dataset.quads() if p != PROV.generatedAtTime}


def ledger(paths: SessionPaths) -> list[tuple[str, str]]:
    if not paths.store_db.exists():
        return []
    with sqlite3.connect(paths.store_db, timeout=30) as db:
        if not db.execute("SELECT 1 FROM sqlite_master WHERE name = 'ledger'").fetchall():
            return []  # killed while creating the store
        return db.execute("SELECT agent, action FROM ledger ORDER BY seq").fetchall()


@pytest.fixture(scope="module")
def reference(template: SessionPaths, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Crash-free runs, timed: the expected result and how long a full run takes.

    Each mode runs three times and the shortest counts: a run slowed by the machine (a first write
    to a fresh part of the file system, another test's process) would set kill times most trials
    outlive, and the kills would land after the work.
    """
    results: dict[str, Any] = {"duration": {}}
    for mode, run in ((mode, run) for mode in sorted(set(MODES)) for run in range(3)):
        paths = clone(template, tmp_path_factory.mktemp(f"reference-{mode}-{run}"))
        started = time.monotonic()
        child = FORK.Process(target=process, args=(str(paths.root), mode))
        child.start()
        child.join(60)
        took = time.monotonic() - started
        results["duration"][mode] = min(took, results["duration"].get(mode, took))
        assert child.exitcode == 0
        graph = normalized(json.loads(paths.kg_json.read_text()))
        quads = rdf_quads(paths)
        if "graph" in results:  # every way of taking the locks gives the same graph
            assert graph == results["graph"] and quads == results["quads"]
        results.update(graph=graph, quads=quads, paths=paths)
    assert sorted(ledger(results["paths"])) == sorted((a, "merge") for a in AGENTS)
    assert results["graph"]["stats"]["claims_count"] == len(AGENTS)
    assert results["graph"]["stats"]["evidence_verified"] == len(AGENTS)
    return results


# -- the checks ----------------------------------------------------------------------------------------------
def check_after_kill(paths: SessionPaths, reference: dict[str, Any], where: str) -> None:
    entries = ledger(paths)
    merged = [agent for agent, action in entries if action == "merge"]
    assert all(action == "merge" for _, action in entries), f"{where}: only merges are recorded: {entries}"
    assert len(merged) == len(set(merged)), f"{where}: an agent was merged twice: {merged}"
    assert not list(paths.root.glob("*.kg.lock.error")), f"{where}: a valid agent was rejected"
    for agent in AGENTS:
        assert agent in merged or agent in locks.waiting(paths), f"{where}: {agent} neither merged nor pending/claimed"
    json.loads(paths.session_json.read_text())
    if paths.kg_json.exists():
        shown = json.loads(paths.kg_json.read_text())  # always a complete document
        in_view = [a for a in AGENTS if a in shown]
        assert set(in_view) <= set(merged), f"{where}: the views show uncommitted agents"
        for agent in in_view:  # and each shown namespace is exactly the committed one
            assert normalized(shown[agent]) == reference["graph"][agent], f"{where}: {agent} differs"
        assert shown["stats"]["agents"] == len(in_view)
    if paths.kg_trig.exists():
        rdf_quads(paths)


def check_completed(paths: SessionPaths, reference: dict[str, Any], where: str) -> None:
    assert locks.waiting(paths) == [], f"{where}: locks left"
    assert sorted(ledger(paths)) == sorted((a, "merge") for a in AGENTS), f"{where}: not one merge each"
    assert normalized(json.loads(paths.kg_json.read_text())) == reference["graph"], f"{where}: graph differs"
    assert rdf_quads(paths) == reference["quads"], f"{where}: RDF differs"
    archived = {  # (a kill inside an atomic write may leave its hidden temporary file behind)
        p.name.split("-", 1)[1]: sorted(f.name for f in p.iterdir() if not f.name.startswith("."))
        for p in paths.archive.iterdir() if not p.name.startswith(".")  # nor its hidden staging folder
    }
    assert archived == {a: ["claims.json", "sources.json"] for a in AGENTS}, f"{where}: archive incomplete"
    agents = json.loads(paths.session_json.read_text())["agents"]
    assert {a: (v["state"], v["attempts"]) for a, v in agents.items()} == {a: ("merged", 1) for a in AGENTS}


def run_trials(seeds: range, template: SessionPaths, reference: dict[str, Any], tmp_path: Path) -> None:
    killed = partial = 0
    for seed in seeds:
        rng = random.Random(20261122 + seed)
        mode = MODES[seed % len(MODES)]
        paths = clone(template, tmp_path / f"trial-{seed:04d}")
        for kill in range(rng.choice((1, 1, 2, 3))):  # later kills hit the recovery itself
            where = f"trial {seed} ({mode}), run {kill + 1}"
            child = FORK.Process(target=process, args=(str(paths.root), mode))
            child.start()
            child.join(rng.uniform(0.0, reference["duration"][mode] * 1.1))
            if child.exitcode is None:
                child.kill()  # SIGKILL
                child.join(30)
            assert child.exitcode in (0, -9), f"{where}: exit code {child.exitcode}"
            if child.exitcode == -9:
                killed += 1
                partial += 0 < len(ledger(paths)) < len(AGENTS)
            check_after_kill(paths, reference, where)
        merge_pending(paths)  # restart to completion
        check_completed(paths, reference, f"trial {seed} ({mode})")
        shutil.rmtree(paths.root)
    assert killed >= len(seeds) // 2, f"only {killed} runs were killed before they finished"
    assert partial >= len(seeds) // 6, f"only {partial} kills landed between the first and the last merge"


# -- the tests -----------------------------------------------------------------------------------------------
def test_sigkill_at_random_points_never_loses_or_duplicates_a_merge(
    template: SessionPaths, reference: dict[str, Any], tmp_path: Path
) -> None:
    run_trials(range(TRIALS), template, reference, tmp_path)


def test_sigkill_of_the_cconductor_process_command(
    template: SessionPaths, reference: dict[str, Any], tmp_path: Path
) -> None:
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    calibration = clone(template, tmp_path / "calibration")
    started = time.monotonic()
    done = subprocess.run([*cconductor(), "process", str(calibration.root)], env=env, capture_output=True,
                          text=True, timeout=120)
    full = time.monotonic() - started
    assert done.returncode == 0, done.stderr
    check_completed(calibration, reference, "the crash-free cconductor process")
    for trial in range(CLI_TRIALS):
        rng = random.Random(7_000 + trial)
        paths = clone(template, tmp_path / f"cli-{trial}")
        proc = subprocess.Popen([*cconductor(), "process", str(paths.root)], env=env,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            proc.wait(timeout=rng.uniform(0.5 * full, 1.05 * full))
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(30)
        check_after_kill(paths, reference, f"cli trial {trial}")
        resumed = subprocess.run([*cconductor(), "process", str(paths.root)], env=env, capture_output=True,
                                 text=True, timeout=120)
        assert resumed.returncode == 0, resumed.stderr
        check_completed(paths, reference, f"cli trial {trial}")


def test_a_streamed_write_that_fails_part_way_leaves_the_old_file(tmp_path: Path) -> None:
    """Pieces from a generator are written as they come (8 MiB here, in batches of at most 4 MiB):
    an error while producing them removes the temp file and keeps the file as it was."""
    from orchestrator.session.atomic import atomic_write_bytes

    target = tmp_path / "view.json"
    atomic_write_bytes(target, b"old\n")
    produced: list[int] = []

    def pieces(fail: bool) -> Any:
        for index in range(8):
            produced.append(index)
            if fail and index == 6:
                raise TypeError("a value that cannot be written")
            yield bytes([48 + index]) * (1 << 20)

    with pytest.raises(TypeError):
        atomic_write_bytes(target, pieces(fail=True))
    assert produced == list(range(7))
    assert target.read_bytes() == b"old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["view.json"]
    atomic_write_bytes(target, pieces(fail=False))
    assert target.read_bytes() == b"".join(bytes([48 + i]) * (1 << 20) for i in range(8))
