"""One-shot ``cconductor process`` against the original bash/jq processor, side by side in one run.

    python benchmarks/bench_oneshot.py [--sizes 3k,1m,10m,50m] [--runs 5] [--flush] [--concurrent 8]

For each size, a session whose knowledge-graph.json is about that size is built once, through the
real pipeline. Then, alternately, ``--runs`` times each:

* ``cconductor process SESSION`` on a fresh copy of the session with one small agent dropped in
  (2 sources, 5 claims: ``synthetic.small_agent``);
* ``bash kg-artifact-processor.sh DIR AGENT`` (the upstream original, MIT, in
  ``shared/reference/upstream-processor/``; it needs jq) on a copy of the same knowledge-graph.json
  with the same agent's files.

Printed: medians of wall time, CPU time (user + system) and peak RSS of each child, and the ratios
(the CPU ratio moves less with other work on a shared machine). Targets: cconductor within 2x /
1.5x / 0.75x / 0.5x of the original at 3 KB / 1 MB / 10 MB / 50 MB, under 300 MiB at 50 MB, and
(``--flush``, in one process as ``watch`` runs it) a views flush after one merge under 150 ms at
50 MB. ``--concurrent 8`` starts 8 one-shot runs on one session at once, against 8 originals.

The packages are byte-compiled first, as a regular install is (an editable install run with
``PYTHONDONTWRITEBYTECODE=1`` would compile every module on every run). Copies are never timed.
Sessions are kept in ``--workdir`` when given, so a second run reuses the built graphs.
"""

from __future__ import annotations

import argparse
import compileall
import os
import random
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from harness import MB, REPO, ChildRun, Results, cconductor, machine, run_child, say, shared, workdir
from synthetic import GraphBuilder, expect_merged, new_processor, small_agent, write_files, write_small

from orchestrator.commit.views import flush_views
from orchestrator.model.layout import SessionPaths
from orchestrator.session.record import create_session

SIZES = {"3k": 3_000, "1m": 1_000_000, "10m": 10_000_000, "50m": 50_000_000}
TARGETS = {"3k": 2.0, "1m": 1.5, "10m": 0.75, "50m": 0.5}
MAX_RSS_MIB_50M = 300
FLUSH_TARGET_S_50M = 0.150
AGENT = "probe-agent"


def upstream() -> Path:
    return shared() / "reference" / "upstream-processor" / "src" / "utils" / "kg-artifact-processor.sh"


def build(folder: Path, label: str) -> SessionPaths:
    """The base session for one size (reused when already built in ``folder``)."""
    done = folder / f"base-{label}.done"
    if done.exists():
        paths = SessionPaths(Path(done.read_text().strip()))
        new_processor(paths).close()  # a base built by an older version gets its ledger's key index once
        return paths
    paths = create_session(folder / f"base-{label}", f"oneshot benchmark {label}", "bench")
    processor = new_processor(paths)
    started = time.perf_counter()
    if SIZES[label] < 100_000:  # a few small agents
        rng, i = random.Random(3), 0
        while not paths.kg_json.exists() or paths.kg_json.stat().st_size < 0.97 * SIZES[label]:
            write_small(paths, f"base-{i:03d}", rng)
            paths.lock(f"base-{i:03d}").touch()
            expect_merged(processor.process_pending())
            flush_views(processor, force=True)
            i += 1
        size = paths.kg_json.stat().st_size
    else:
        size = GraphBuilder(paths, processor).grow_to(SIZES[label])
    processor.close()
    say(f"  built {label}: knowledge-graph.json {size:,} bytes in {time.perf_counter() - started:.0f} s")
    done.write_text(str(paths.root))
    return paths


def stage_ours(base: SessionPaths, run_dir: Path, agents: list[str], seed: int) -> SessionPaths:
    target = run_dir / base.root.name
    shutil.copytree(base.root, target, symlinks=True)
    paths = SessionPaths(target)
    rng = random.Random(seed)
    for agent in agents:
        write_small(paths, agent, rng)
        paths.lock(agent).touch()
    return paths


def stage_upstream(base: SessionPaths, run_dir: Path, agents: list[str], seed: int) -> Path:
    """The original's layout: knowledge/knowledge-graph.json, artifacts/<agent>/, <agent>.kg.lock."""
    root = run_dir / "upstream"
    (root / "knowledge").mkdir(parents=True)
    shutil.copyfile(base.kg_json, root / "knowledge" / "knowledge-graph.json")
    rng = random.Random(seed)
    for agent in agents:
        files, _, _ = small_agent(agent, rng)  # the same files (same seed) as ours; no stored texts upstream
        write_files(SessionPaths(root), agent, files)
        (root / f"{agent}.kg.lock").touch()
    return root


def one_run(base: SessionPaths, folder: Path, side: str, seed: int) -> ChildRun:
    run_dir = Path(tempfile.mkdtemp(prefix="run-", dir=folder))
    try:
        if side == "cconductor":
            paths = stage_ours(base, run_dir, [AGENT], seed)
            argv = [cconductor(), "process", str(paths.root)]
        else:
            root = stage_upstream(base, run_dir, [AGENT], seed)
            argv = ["bash", str(upstream()), str(root), AGENT]
        os.sync()  # what staging wrote is not written back during the timed run
        result = run_child(argv)
        if result.code != 0:
            raise SystemExit(f"{side} failed: {result.stderr[-600:]}")
        return result
    finally:
        shutil.rmtree(run_dir, ignore_errors=True)


def bench_size(results: Results, folder: Path, label: str, runs: int) -> None:
    base = build(folder, label)
    timed: dict[str, list[ChildRun]] = {"original": [], "cconductor": []}
    for i in range(runs):
        for side in ("cconductor", "original") if i % 2 == 0 else ("original", "cconductor"):
            timed[side].append(one_run(base, folder, side, i))
    wall = {k: statistics.median(r.wall_s for r in v) for k, v in timed.items()}
    cpu = {k: statistics.median(r.cpu_s for r in v) for k, v in timed.items()}
    rss = {k: statistics.median(r.peak_mib for r in v) for k, v in timed.items()}
    ratio, cpu_ratio = wall["cconductor"] / wall["original"], cpu["cconductor"] / cpu["original"]
    say(f"  {label} ({base.kg_json.stat().st_size / MB:.2f} MB): original {wall['original']:.2f} s wall / "
        f"{cpu['original']:.2f} s CPU / {rss['original']:.0f} MiB; cconductor {wall['cconductor']:.2f} s / "
        f"{cpu['cconductor']:.2f} s / {rss['cconductor']:.0f} MiB; ratio {ratio:.2f}x wall, {cpu_ratio:.2f}x CPU")
    results.add(f"one-shot process at {label}: cconductor / original (wall; CPU)", f"{ratio:.2f}x; {cpu_ratio:.2f}x",
                f"<= {TARGETS[label]}x", ratio <= TARGETS[label])
    if label == "50m":
        results.add("one-shot process at 50m: peak RSS", f"{rss['cconductor']:.0f} MiB", f"< {MAX_RSS_MIB_50M} MiB",
                    rss["cconductor"] < MAX_RSS_MIB_50M)


def bench_concurrent(results: Results, folder: Path, label: str, count: int) -> None:
    """Wall time until ``count`` one-shot runs started together have all finished, both tools."""
    base = build(folder, label)
    agents = [f"conc-{i}" for i in range(count)]
    walls = {}
    for side in ("original", "cconductor"):
        run_dir = Path(tempfile.mkdtemp(prefix=f"conc-{label}-", dir=folder))
        try:
            if side == "cconductor":
                paths = stage_ours(base, run_dir, agents, seed=99)
                argvs = [[cconductor(), "process", str(paths.root), "--agent", a] for a in agents]
            else:
                root = stage_upstream(base, run_dir, agents, seed=99)
                argvs = [["bash", str(upstream()), str(root), a] for a in agents]
            os.sync()
            started = time.perf_counter()
            procs = [subprocess.Popen(a, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) for a in argvs]
            codes = [p.wait() for p in procs]
            walls[side] = time.perf_counter() - started
            if any(codes):
                say(f"    {side}: exit codes {codes}")
        finally:
            shutil.rmtree(run_dir, ignore_errors=True)
    results.add(f"{count} one-shot runs at once at {label}: cconductor (original)",
                f"{walls['cconductor']:.2f} s ({walls['original']:.2f} s)", "faster than the original",
                walls["cconductor"] < walls["original"])


def bench_flush(results: Results, folder: Path, label: str, merges: int = 7) -> None:
    """The views flush after one merge and the processor's start-up, in one process as ``watch`` runs them."""
    base = build(folder, label)
    run_dir = Path(tempfile.mkdtemp(prefix=f"flush-{label}-", dir=folder))
    try:
        paths = stage_ours(base, run_dir, [], seed=0)
        started = time.perf_counter()
        processor = new_processor(paths)
        start = time.perf_counter() - started
        flush_views(processor)  # the views are current: nothing to write
        rng = random.Random(5)
        walls, cpus = [], []
        for i in range(merges):
            write_small(paths, f"flush-{i}", rng)
            paths.lock(f"flush-{i}").touch()
            expect_merged(processor.process_pending())
            wall0, cpu0 = time.perf_counter(), time.process_time()
            flush_views(processor)
            walls.append(time.perf_counter() - wall0)
            cpus.append(time.process_time() - cpu0)
        processor.close()
    finally:
        shutil.rmtree(run_dir, ignore_errors=True)
    steady = walls[2:]  # the first reads every record, the first two build every agent's parts
    median = statistics.median(steady)
    say(f"  {label}: processor start-up {start * 1000:.0f} ms; flushes after one merge "
        f"{', '.join(f'{w * 1000:.0f}' for w in walls)} ms (CPU median {statistics.median(cpus[2:]) * 1000:.0f} ms)")
    results.add(f"views flush after one merge at {label} (CPU)",
                f"{median * 1000:.0f} ms ({statistics.median(cpus[2:]) * 1000:.0f} ms)",
                f"< {FLUSH_TARGET_S_50M * 1000:.0f} ms" if label == "50m" else "",
                median < FLUSH_TARGET_S_50M if label == "50m" else None)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="3k,1m", help="comma-separated of 3k,1m,10m,50m (default 3k,1m)")
    parser.add_argument("--runs", type=int, default=5, help="alternating runs per size and tool (default 5)")
    parser.add_argument("--concurrent", type=int, default=0, help="also start this many runs at once")
    parser.add_argument("--concurrent-size", default=None, help="size for --concurrent (default: largest)")
    parser.add_argument("--flush", action="store_true", help="also time views flushes and processor start-up")
    parser.add_argument("--workdir", type=Path, help="keep built sessions here and reuse them")
    args = parser.parse_args()
    labels = [s.strip() for s in args.sizes.split(",") if s.strip()]
    if unknown := [s for s in labels if s not in SIZES]:
        raise SystemExit(f"unknown size {unknown}: use {', '.join(SIZES)}")
    if shutil.which("jq") is None:
        raise SystemExit("the original processor needs jq: apt-get install -y jq")
    if not upstream().exists():
        raise SystemExit(f"the original processor is not at {upstream()}")
    for package in ("orchestrator", "agents"):  # the ordinary __pycache__: what a child with default flags reads
        compileall.compile_dir(REPO / package, quiet=1)
    say(f"one-shot process vs the original, {args.runs} runs per tool ({machine()})")
    results = Results()
    with workdir(args.workdir, "cconductor-oneshot-") as folder:
        for label in labels:
            bench_size(results, folder, label, args.runs)
        if args.concurrent:
            bench_concurrent(results, folder, args.concurrent_size or labels[-1], args.concurrent)
        if args.flush:
            for label in labels:
                bench_flush(results, folder, label)
    results.report()


if __name__ == "__main__":
    main()
