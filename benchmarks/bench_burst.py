"""A burst: 1,000 agents' locks created at once while `cconductor watch` runs. A stress test.

    python benchmarks/bench_burst.py [--agents 1000] [--plain] [--in-process]

A separate process stages every agent's artifacts (the small agent of bench_watch.py), then creates
all the locks at once while a ``Watcher`` runs here. Printed: first lock -> last commit, the sweeps
it took, the CPU of the committing process per agent (steadier than the wall clock on a shared
machine), and a check in the ledger that every agent merged and no lock is left. Target: every
agent merged, in under 8 s on the 2-core project machine.

``--plain`` judges every sweep one agent after the other (no burst seam, commit/burst/), to see
what the seam buys. ``--in-process`` skips the watcher: the agents are staged with their locks and
one ``process_pending`` judges them, both ways, to compare CPU per agent without the writer.
"""

from __future__ import annotations

import argparse
import multiprocessing
import random
import threading
import time
from pathlib import Path
from typing import Any

from harness import Recorder, Results, count_sweeps, machine, ms, say, workdir
from synthetic import expect_merged, new_processor, write_small

from orchestrator.commit import burst, locks
from orchestrator.commit import processor as processor_module
from orchestrator.commit.watcher import Watcher
from orchestrator.model.layout import SessionPaths
from orchestrator.session.ledger import Ledger
from orchestrator.session.record import create_session

TARGET_S = 8.0


def plain(enabled: bool) -> None:
    """Judge every sweep one by one (the burst seam off), or let big sweeps use it (the default)."""
    processor_module.BURST_MIN = 10**9 if enabled else burst.BURST_MIN


def writer(root: str, count: int, ready: Any, go: Any, report: Any) -> None:
    """Separate process: stage every agent's artifacts, then create all the locks at once."""
    paths = SessionPaths(Path(root))
    rng = random.Random(23)
    agents = [f"burst-{i:04d}" for i in range(count)]
    for agent in agents:
        write_small(paths, agent, rng)
    ready.set()
    go.wait()
    first = time.time()
    for agent in agents:
        paths.lock(agent).touch()
    report.put((first, time.time()))


def watched(results: Results, folder: Path, count: int, label: str) -> None:
    say(f"\n== burst ({label}): {count} locks created at once by another process, watcher running ({machine()})")
    paths = create_session(folder, "burst benchmark", "bench")
    processor = new_processor(paths)
    agents = {f"burst-{i:04d}" for i in range(count)}
    recorder = Recorder(agents, clock=time.time)
    processor.events.subscribe(recorder)
    sweeps = count_sweeps(processor)
    watcher = Watcher(processor)  # as `cconductor watch` starts it
    thread = threading.Thread(target=watcher.run, name="bench-watcher")
    thread.start()
    watcher.ready.wait(10)
    ctx = multiprocessing.get_context("spawn")
    ready, go, report = ctx.Event(), ctx.Event(), ctx.Queue()
    staging = ctx.Process(target=writer, args=(str(paths.root), count, ready, go, report))
    staging.start()
    try:
        if not ready.wait(600):
            raise SystemExit("the burst writer did not stage its artifacts in time")
        time.sleep(0.3)
        cpu0 = time.process_time()
        go.set()
        first, last_lock = report.get(timeout=300)
        finished = recorder.done.wait(1800)
        cpu = time.process_time() - cpu0
    finally:
        staging.join(60)
        watcher.stop()
        thread.join(120)
        processor.close()
    if not finished or recorder.rejected:
        raise SystemExit(f"burst: {len(recorder.committed)}/{count} committed; rejected {recorder.rejected[:3]}")
    elapsed = max(recorder.committed.values()) - first
    ledger = Ledger(paths.store_db)
    try:
        merged = {e["agent"] for e in ledger.ledger() if e["action"] == "merge"}
    finally:
        ledger.close()
    leftovers = locks.waiting(paths) + [p.name for p in paths.root.glob("*.kg.lock.error")]
    say(f"  locks created in {ms(last_lock - first)}; last commit {elapsed:.2f} s after the first lock")
    say(f"  {len(sweeps)} sweeps, sizes {[n for n, _ in sweeps][:6]}; CPU of the committing process "
        f"{ms(cpu / count)} per agent")
    say(f"  ledger: {len(merged & agents)}/{count} merged, {len(leftovers)} locks left")
    results.add(f"burst ({label}): all merged, no lock left", f"{len(merged & agents)}/{count}", "all",
                merged >= agents and not leftovers)
    results.add(f"burst ({label}): first lock -> last commit", f"{elapsed:.2f} s",
                f"< {TARGET_S:g} s" if count == 1000 else "", elapsed < TARGET_S if count == 1000 else None)
    results.add(f"burst ({label}): CPU per agent", ms(cpu / count))


def in_process(results: Results, folder: Path, count: int, label: str) -> None:
    paths = create_session(folder, "burst benchmark", "bench")
    rng = random.Random(23)
    for i in range(count):
        write_small(paths, f"burst-{i:04d}", rng)
        paths.lock(f"burst-{i:04d}").touch()
    processor = new_processor(paths)
    try:
        cpu0, wall0 = time.process_time(), time.perf_counter()
        expect_merged(processor.process_pending())
        cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
    finally:
        processor.close()
    say(f"  in-process ({label}): one sweep of {count}: {wall:.2f} s wall, {ms(cpu / count)} CPU per agent "
        f"({machine()})")
    results.add(f"one sweep of {count}, in-process ({label}): CPU per agent", ms(cpu / count))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--agents", type=int, default=1000)
    parser.add_argument("--plain", action="store_true", help="judge one by one: the burst seam off")
    parser.add_argument("--in-process", action="store_true",
                        help="one process_pending, burst seam on and off alternately (--runs each)")
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--workdir", type=Path)
    args = parser.parse_args()
    results = Results()
    with workdir(args.workdir) as folder:
        if args.in_process:
            cpu: dict[str, list[str]] = {"burst": [], "plain": []}
            for n in range(args.runs):
                for label in ("burst", "plain") if n % 2 == 0 else ("plain", "burst"):
                    plain(label == "plain")
                    in_process(results, folder / f"{label}-{n}", args.agents, label)
                    cpu[label].append(results.rows[-1].value)
            say("  " + "; ".join(f"{k}: {', '.join(v)}" for k, v in cpu.items()))
        else:
            plain(args.plain)
            watched(results, folder, args.agents, "plain" if args.plain else "burst seam")
    results.report()


if __name__ == "__main__":
    main()
