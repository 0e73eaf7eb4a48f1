"""One-shot ``cconductor process`` against the original bash/jq processor, side by side.

Run: ``python benchmarks/bench_oneshot.py [--sizes 3k,1m,10m,50m] [--runs N] [--concurrent 8]``.

For each size, builds (once, through the real pipeline) a session whose knowledge-graph.json is
about that size, then alternates N runs of:

* ``cconductor process SESSION`` on a fresh copy of the session with one small agent dropped in
  (2 sources, 5 claims, as ``bench_pipeline.small_agent``);
* ``bash kg-artifact-processor.sh DIR AGENT`` (the upstream original, MIT, in
  ``../shared/reference/upstream-processor/``) on a copy of the same knowledge-graph.json with
  the same agent's files.

Prints medians of wall time and peak RSS (``os.wait4`` of each child) and the ratio. Optional:
``--concurrent 8`` starts 8 one-shot runs on one session at once (8 different agents) and
compares with 8 original runs at once; ``--flush`` times an in-process view flush after one
merge (what ``watch`` does after each commit) and the processor's start-up.
The copy of the session is never timed. Before timing, the ``orchestrator`` and ``agents``
packages are byte-compiled (``compileall``, as ``pip install`` does for a regular install): an
editable install run with ``PYTHONDONTWRITEBYTECODE=1`` (as on the shared machine) would
otherwise recompile every module from source on every run (~70-80 ms), which no installed
copy pays. ``--no-compile`` skips it (and says so). Sessions are kept in ``--workdir`` (default a temporary
folder) so that a second run with the same ``--workdir`` reuses the built graphs.
"""

from __future__ import annotations

import argparse
import compileall
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

from bench_pipeline import (  # noqa: E402
    GraphBuilder,
    expect_merged,
    new_processor,
    say,
    small_agent,
    write_files,
    write_small,
)

from orchestrator.model.layout import SessionPaths  # noqa: E402
from orchestrator.session.record import create_session  # noqa: E402

UPSTREAM = REPO.parent / "shared" / "reference" / "upstream-processor" / "src" / "utils" / "kg-artifact-processor.sh"
SIZES = {"3k": 3_000, "1m": 1_000_000, "10m": 10_000_000, "50m": 50_000_000}
TARGETS = {"3k": 2.0, "1m": 1.5, "10m": 0.75, "50m": 0.5}


def build(workdir: Path, label: str) -> SessionPaths:
    """The base session for one size (reused when already built in ``workdir``)."""
    done = workdir / f"base-{label}.done"
    if done.exists():
        paths = SessionPaths(Path(done.read_text().strip()))
        new_processor(paths).close()  # a base built by an older version gets its store's key index once
        return paths
    folder = workdir / f"base-{label}"
    folder.mkdir(parents=True, exist_ok=True)
    paths = create_session(folder, f"oneshot benchmark {label}", "bench")
    processor = new_processor(paths)
    t0 = time.perf_counter()
    target = SIZES[label]
    if target < 100_000:  # a few small agents
        rng = random.Random(3)
        from orchestrator.commit.views import flush_views

        i = 0
        while not paths.kg_json.exists() or paths.kg_json.stat().st_size < 0.97 * target:
            write_small(paths, f"base-{i:03d}", rng)
            paths.lock(f"base-{i:03d}").touch()
            expect_merged(processor.process_pending())
            flush_views(processor, force=True)
            i += 1
        size = paths.kg_json.stat().st_size
    else:
        size = GraphBuilder(paths, processor).grow_to(target)
    processor.close()
    say(f"  built {label}: knowledge-graph.json {size:,} bytes in {time.perf_counter() - t0:.0f} s")
    done.write_text(str(paths.root))
    return paths


def run_child(argv: list[str], env: dict[str, str] | None = None) -> tuple[float, float, int]:
    """(wall seconds, peak RSS MiB, exit status) of one child process."""
    # Through /usr/bin/time: a child forked from this (large) process would inherit its RSS high-water mark.
    with tempfile.NamedTemporaryFile("r", suffix=".rss") as out:
        t0 = time.perf_counter()
        proc = subprocess.run(["/usr/bin/time", "-f", "%M", "-o", out.name, *argv], stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, env=env, check=False)
        wall = time.perf_counter() - t0
        rss_kib = int(out.read().split()[-1])
    if proc.returncode != 0:
        say(f"    {argv[0]} exited {proc.returncode}: {proc.stderr.decode(errors='replace')[-400:]}")
    return wall, rss_kib / 1024, proc.returncode


def cconductor() -> str:
    exe = shutil.which("cconductor") or str(Path(sys.executable).with_name("cconductor"))
    if not Path(exe).exists():
        raise SystemExit("the cconductor command is not installed; run `pip install -e .`")
    if "orchestrator.cli.launch" not in Path(exe).read_text(errors="replace"):
        say(f"  note: {exe} predates the cli/launch.py entry point; run `pip install -e .` to measure the current one")
    return exe


def stage_ours(base: SessionPaths, run_dir: Path, agents: list[str], seed: int) -> SessionPaths:
    target = run_dir / base.root.name
    shutil.copytree(base.root, target, symlinks=True)
    paths = SessionPaths(target)
    rng = random.Random(seed)
    for agent in agents:
        write_small(paths, agent, rng)
    return paths


def stage_upstream(base: SessionPaths, run_dir: Path, agents: list[str], seed: int) -> Path:
    """The original's session layout: knowledge/knowledge-graph.json, artifacts/<agent>/, <agent>.kg.lock."""
    root = run_dir / "upstream"
    (root / "knowledge").mkdir(parents=True)
    shutil.copyfile(base.kg_json, root / "knowledge" / "knowledge-graph.json")
    scratch = SessionPaths(root)
    rng = random.Random(seed)
    for agent in agents:
        files, _, _ = small_agent(agent, rng)  # same files (same seed) as ours; no stored texts upstream
        write_files(scratch, agent, files)
    return root


def drop_locks(paths: SessionPaths | Path, agents: list[str]) -> None:
    root = paths.root if isinstance(paths, SessionPaths) else paths
    for agent in agents:
        (root / f"{agent}.kg.lock").touch()


def byte_compile() -> None:
    """Write the .pyc files a regular install has, so each run imports rather than compiles."""
    for package in ("orchestrator", "agents"):
        # the ordinary __pycache__ location: what a child process with the default flags reads
        if not compileall.compile_dir(REPO / package, quiet=1):
            raise SystemExit(f"byte-compiling {package} failed")


def bench_size(workdir: Path, label: str, runs: int) -> tuple[float, float, float, float]:
    base = build(workdir, label)
    os.sync()
    exe = cconductor()
    ours: list[tuple[float, float]] = []
    theirs: list[tuple[float, float]] = []
    agent = "probe-agent"
    for i in range(runs):
        for side in ("ours", "theirs") if i % 2 == 0 else ("theirs", "ours"):
            run_dir = Path(tempfile.mkdtemp(prefix=f"run-{label}-", dir=workdir))
            try:
                if side == "ours":
                    paths = stage_ours(base, run_dir, [agent], seed=i)
                    drop_locks(paths, [agent])
                    os.sync()
                    wall, rss, code = run_child([exe, "process", str(paths.root)])
                    if code != 0:
                        raise SystemExit(f"cconductor process failed at {label}")
                    ours.append((wall, rss))
                else:
                    root = stage_upstream(base, run_dir, [agent], seed=i)
                    drop_locks(root, [agent])
                    os.sync()
                    wall, rss, code = run_child(["bash", str(UPSTREAM), str(root), agent])
                    if code != 0 or (root / f"{agent}.kg.lock").exists():
                        raise SystemExit(f"the original processor failed at {label}")
                    theirs.append((wall, rss))
            finally:
                shutil.rmtree(run_dir, ignore_errors=True)
    o_wall = statistics.median(w for w, _ in ours)
    t_wall = statistics.median(w for w, _ in theirs)
    o_rss = statistics.median(r for _, r in ours)
    t_rss = statistics.median(r for _, r in theirs)
    size = base.kg_json.stat().st_size
    say(f"  {label} ({size / 1e6:.2f} MB): original {t_wall:.2f} s, {t_rss:.0f} MiB; cconductor {o_wall:.2f} s, "
        f"{o_rss:.0f} MiB; ratio {o_wall / t_wall:.2f}x (target <= {TARGETS[label]}x)")
    return t_wall, t_rss, o_wall, o_rss


def bench_concurrent(workdir: Path, label: str, count: int) -> tuple[float, float]:
    """Wall time until ``count`` one-shot runs started together have all finished, both tools."""
    base = build(workdir, label)
    exe = cconductor()
    agents = [f"conc-{i}" for i in range(count)]
    results = []
    for side in ("theirs", "ours"):
        run_dir = Path(tempfile.mkdtemp(prefix=f"conc-{label}-", dir=workdir))
        try:
            if side == "ours":
                paths = stage_ours(base, run_dir, agents, seed=99)
                drop_locks(paths, agents)
                argvs = [[exe, "process", str(paths.root), "--agent", a] for a in agents]
            else:
                root = stage_upstream(base, run_dir, agents, seed=99)
                drop_locks(root, agents)
                argvs = [["bash", str(UPSTREAM), str(root), a] for a in agents]
            os.sync()
            t0 = time.perf_counter()
            procs = [subprocess.Popen(a, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) for a in argvs]
            codes = [p.wait() for p in procs]
            wall = time.perf_counter() - t0
            if any(codes):
                say(f"    {side}: exit codes {codes}")
            results.append(wall)
        finally:
            shutil.rmtree(run_dir, ignore_errors=True)
    say(f"  {count} at once at {label}: original {results[0]:.2f} s, cconductor {results[1]:.2f} s")
    return results[0], results[1]


def bench_flush(workdir: Path, label: str, merges: int) -> tuple[float, float]:
    """(median view flush after one merge, processor start-up) in-process, as ``watch`` runs them."""
    from orchestrator.commit.views import flush_views

    base = build(workdir, label)
    run_dir = Path(tempfile.mkdtemp(prefix=f"flush-{label}-", dir=workdir))
    try:
        paths = stage_ours(base, run_dir, [], seed=0)
        t0 = time.perf_counter()
        processor = new_processor(paths)
        start = time.perf_counter() - t0
        flush_views(processor)  # the views are current: nothing to write
        rng = random.Random(5)
        flushes, cpu = [], []
        for i in range(merges):
            write_small(paths, f"flush-{i}", rng)
            paths.lock(f"flush-{i}").touch()
            expect_merged(processor.process_pending())
            t1, c1 = time.perf_counter(), time.process_time()
            flush_views(processor)
            flushes.append(time.perf_counter() - t1)
            cpu.append(time.process_time() - c1)  # CPU: less at the mercy of a shared machine's load
        processor.close()
    finally:
        shutil.rmtree(run_dir, ignore_errors=True)
    median = statistics.median(flushes)
    say(f"  {label}: processor start-up {start * 1000:.0f} ms (reads no record); view flush after one merge: "
        f"median {median * 1000:.0f} ms, CPU {statistics.median(cpu) * 1000:.0f} ms (target at 50 MB < 150 ms); "
        f"each: {', '.join(f'{f * 1000:.0f}' for f in flushes)} ms (the first reads every record, the first two "
        "build every agent's parts)")
    return median, start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="3k,1m", help="comma-separated of 3k,1m,10m,50m (default 3k,1m)")
    parser.add_argument("--runs", type=int, default=5, help="alternating runs per size and tool (default 5)")
    parser.add_argument("--concurrent", type=int, default=0, help="also start this many runs at once")
    parser.add_argument("--concurrent-size", default=None, help="size for --concurrent (default: largest)")
    parser.add_argument("--flush", action="store_true", help="also time view flushes and processor start-up")
    parser.add_argument("--workdir", type=Path, help="keep built sessions here and reuse them")
    parser.add_argument("--no-compile", action="store_true",
                        help="do not byte-compile the packages first (each run then compiles from source "
                             "if PYTHONDONTWRITEBYTECODE is set)")
    args = parser.parse_args()
    labels = [s.strip() for s in args.sizes.split(",") if s.strip()]
    unknown = [s for s in labels if s not in SIZES]
    if unknown:
        raise SystemExit(f"unknown size {unknown}: use {', '.join(SIZES)}")
    if shutil.which("jq") is None:
        raise SystemExit("the original processor needs jq: apt-get install -y jq")
    if not UPSTREAM.exists():
        raise SystemExit(f"the original processor is not at {UPSTREAM}")
    keep = args.workdir is not None
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="cconductor-oneshot-"))
    workdir.mkdir(parents=True, exist_ok=True)
    say(f"one-shot process vs the original; {os.cpu_count()} CPUs; load average {os.getloadavg()[0]:.2f}; "
        f"{args.runs} runs per tool; sessions in {workdir}")
    if args.no_compile:
        say("  not byte-compiled (--no-compile): runs may compile modules from source")
    else:
        byte_compile()
        say("  byte-compiled orchestrator/ and agents/ (compileall), as a regular install is")
    rows = []
    try:
        for label in labels:
            rows.append((label, *bench_size(workdir, label, args.runs)))
        extra = []
        if args.concurrent:
            label = args.concurrent_size or labels[-1]
            theirs, ours = bench_concurrent(workdir, label, args.concurrent)
            extra.append(f"{args.concurrent} at once at {label}: original {theirs:.2f} s, cconductor {ours:.2f} s")
        if args.flush:
            for label in labels:
                median, start = bench_flush(workdir, label, 7)
                extra.append(f"view flush at {label}: median {median * 1000:.0f} ms; start-up {start * 1000:.0f} ms")
    finally:
        if not keep:
            shutil.rmtree(workdir, ignore_errors=True)
    say("\n| size | original | cconductor | ratio | target |\n|---|---|---|---|---|")
    for label, t_wall, t_rss, o_wall, o_rss in rows:
        met = "met" if o_wall / t_wall <= TARGETS[label] else "NOT met"
        say(f"| {label} | {t_wall:.2f} s, {t_rss:.0f} MiB | {o_wall:.2f} s, {o_rss:.0f} MiB | "
            f"{o_wall / t_wall:.2f}x | <= {TARGETS[label]}x ({met}) |")
    for line in extra:
        say(line)


if __name__ == "__main__":
    main()
