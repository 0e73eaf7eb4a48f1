"""Soak: kill -9 at random moments, and many agents released at one instant. Prints lost / duplicated / mismatched.

    python benchmarks/soak.py [--trials 100] [--burst 50]

1. ``--trials`` times: a session with 20 pending agents is processed by ``cconductor process`` or by
   ``cconductor watch`` (alternating), killed with SIGKILL at a random moment, then finished by a
   clean ``cconductor process``. Each trial is compared with a crash-free reference: an agent not
   merged is *lost*, one merged twice is *duplicated*, and any difference in the graph, the ledger
   states recorded in session.json or a leftover lock or claim is a *state mismatch*.
2. ``--burst`` agent processes write their artifacts and create their locks at the same wall-clock
   instant while one watcher runs; half of them store one shared text with a plain ``cp``.

Every count must be 0.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from harness import REPO

from orchestrator.commit import locks
from orchestrator.model.layout import SessionPaths
from orchestrator.session.ledger import read_ledger
from orchestrator.session.record import create_session

AGENTS = [f"agent-{i:02d}" for i in range(20)]
WRITER = REPO / "tests" / "helpers" / "agent_writer.py"
VOLATILE = {"generated_at", "merged_at", "committed_at", "created_at", "updated_at", "written_at",
            "commit_seq", "seq", "last_commit_seq", "record_seq", "timestamp", "attempt"}


def cconductor() -> list[str]:
    script = Path(sys.executable).parent / "cconductor"
    return [str(script)] if script.exists() else [sys.executable, "-m", "orchestrator.cli"]


def normalized(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: normalized(v) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, list):
        return [normalized(v) for v in value]
    return value


def template(folder: Path) -> SessionPaths:
    paths = create_session(folder, "What survives kill -9?", "soak")
    for agent in AGENTS:
        subprocess.run([sys.executable, str(WRITER), str(paths.root), agent, "--claims", "1"], check=True)
    return paths


def clone(source: SessionPaths, where: Path) -> SessionPaths:
    target = where / source.root.name
    shutil.copytree(source.root, target, symlinks=True)
    return SessionPaths(target)


def finish(paths: SessionPaths) -> None:
    subprocess.run([*cconductor(), "process", str(paths.root)], capture_output=True, timeout=120, check=False)


def outcome(paths: SessionPaths) -> dict[str, Any]:
    graph = json.loads(paths.kg_json.read_text())
    return {agent: normalized(graph.get(agent)) for agent in AGENTS} | {"stats": normalized(graph["stats"])}


def start(paths: SessionPaths, mode: str) -> subprocess.Popen[bytes]:
    argv = ["process", str(paths.root)] if mode == "process" else ["watch", str(paths.root), "--rescan-interval", "0.2"]
    return subprocess.Popen([*cconductor(), *argv], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def trial(source: SessionPaths, where: Path, mode: str, window: float, reference: dict[str, Any]) -> dict[str, int]:
    paths = clone(source, where)
    process = start(paths, mode)
    time.sleep(random.uniform(0.0, window))
    process.send_signal(signal.SIGKILL)
    process.wait()
    finish(paths)
    merges = [e["agent"] for e in read_ledger(paths.store_db) if e["action"] == "merge"]
    lost = len(set(AGENTS) - set(merges))
    duplicated = len(merges) - len(set(merges))
    mismatch = 0
    try:
        if outcome(paths) != reference:
            mismatch += 1
    except (OSError, ValueError):
        mismatch += 1
    states = json.loads(paths.session_json.read_text()).get("agents", {})
    if any((states.get(a) or {}).get("state") != "merged" for a in AGENTS):
        mismatch += 1
    if locks.waiting(paths) or list(paths.root.glob("*.kg.lock.error")):
        mismatch += 1
    shutil.rmtree(paths.root)
    return {"lost": lost, "duplicated": duplicated, "mismatch": mismatch}


def kill_trials(count: int, work: Path) -> dict[str, int]:
    source = template(work / "template")
    reference_paths = clone(source, work / "reference")
    started = time.monotonic()
    finish(reference_paths)
    window = (time.monotonic() - started) * 1.2
    reference = outcome(reference_paths)
    totals = {"lost": 0, "duplicated": 0, "mismatch": 0}
    for number in range(count):
        mode = "process" if number % 2 == 0 else "watch"
        result = trial(source, work / f"trial-{number:04d}", mode, window, reference)
        for key, value in result.items():
            totals[key] += value
    return totals


def burst(count: int, work: Path) -> dict[str, int]:
    paths = create_session(work / "burst", "Many at once", "soak")
    watcher = start(paths, "watch")
    try:
        deadline = time.monotonic() + 30
        while not (paths.events.exists() and "watch.started" in paths.events.read_text()):
            if time.monotonic() > deadline:
                raise SystemExit("the watcher did not start")
            time.sleep(0.05)
        agents = [f"burst-{i:03d}" for i in range(count)]
        start_at = time.time() + 3.0
        writers = [subprocess.Popen([sys.executable, str(WRITER), str(paths.root), agent, "--start-at", str(start_at),
                                     *(["--shared-text"] if i % 2 else [])]) for i, agent in enumerate(agents)]
        for writer in writers:
            writer.wait(timeout=120)
        deadline = time.monotonic() + 180
        while locks.waiting(paths) and time.monotonic() < deadline:
            time.sleep(0.1)
    finally:
        watcher.send_signal(signal.SIGINT)
        watcher.wait(timeout=60)
    merges = [e["agent"] for e in read_ledger(paths.store_db) if e["action"] == "merge"]
    rejected = len(list(paths.root.glob("*.kg.lock.error")))
    return {"lost": len(set(agents) - set(merges)), "duplicated": len(merges) - len(set(merges)),
            "mismatch": rejected + len(locks.waiting(paths))}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=100)
    parser.add_argument("--burst", type=int, default=50)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    random.seed(args.seed)
    os.environ.setdefault("CCONDUCTOR_SESSIONS_DIR", tempfile.mkdtemp())
    with tempfile.TemporaryDirectory(prefix="cconductor-soak-") as tmp:
        work = Path(tmp)
        started = time.monotonic()
        killed = kill_trials(args.trials, work)
        print(f"kill -9 trials: {args.trials} (process and watch alternating), {time.monotonic() - started:.0f} s: "
              f"lost {killed['lost']}, duplicated {killed['duplicated']}, state mismatches {killed['mismatch']}")
        started = time.monotonic()
        released = burst(args.burst, work)
        print(f"{args.burst} agents released at one instant under watch (half cp one shared text), "
              f"{time.monotonic() - started:.0f} s: lost {released['lost']}, duplicated {released['duplicated']}, "
              f"rejected or left pending {released['mismatch']}")
    bad = sum(killed.values()) + sum(released.values())
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
