"""What one merge costs as the graph grows, and what the views flush after it costs.

    python benchmarks/bench_merge.py [--sizes 1 10 50] [--repeat 30] [--profile]

One session is grown in-process (``process_pending`` in sweeps of 500 agents of 12 claims and 4
sources) until knowledge-graph.json is 1, 10 and 50 MB (MB = 10**6 bytes); at each size one
``process_pending`` of one small agent is timed (median of ``--repeat``, after 3 warm-up merges),
wall clock and this process's CPU time (steadier on a shared machine), with a cProfile breakdown of
one merge by step. Then ``flush_views(force=True)`` after one merge, at each size (under ``watch`` it
runs in a background thread). Target: the cost at the largest size <= 3x the cost at the smallest.
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import random
import statistics
import time
from pathlib import Path
from typing import Any

from harness import MB, Results, machine, ms, pct, profile_text, say, workdir
from synthetic import GraphBuilder, expect_merged, new_processor, write_small

from orchestrator.commit.views import flush_views
from orchestrator.session.record import create_session


def merge_once(builder: GraphBuilder, agent: str, rng: random.Random) -> tuple[float, float]:
    """(wall seconds, CPU seconds of this process) of one ``process_pending`` for a new small agent.

    CPU time leaves out fsync waits but is far less disturbed by other processes on a busy machine.
    """
    write_small(builder.paths, agent, rng)
    builder.paths.lock(agent).touch()
    c0, t0 = time.process_time(), time.perf_counter()
    outcomes = builder.processor.process_pending()
    elapsed, cpu = time.perf_counter() - t0, time.process_time() - c0
    expect_merged(outcomes)
    return elapsed, cpu


def stats_per_merge(profile: cProfile.Profile, merges: int) -> dict[tuple[str, int, str], float]:
    stats = pstats.Stats(profile)
    raw: dict[Any, Any] = stats.stats  # type: ignore[attr-defined]
    return {func: value[3] / merges for func, value in raw.items()}  # cumulative seconds per merge


#: Steps of one merge, as (file name, function name, label), for the per-step breakdown.
STEPS = [
    ("processor.py", "process_pending", "process_pending (a sweep of one lock)"),
    ("artifacts.py", "read_artifact_set", "  read + JSON Schema (read_artifact_set)"),
    ("merge.py", "build_contribution", "  build_contribution"),
    ("evidence.py", "bind_evidence", "  bind_evidence (snippets vs source text)"),
    ("convert.py", "contribution_to_graph", "  contribution_to_graph"),
    ("state.py", "replace_agent", "  RdfState.replace_agent"),
    ("state.py", "validate_agent", "  SHACL validate_agent"),
    ("artifacts.py", "folder_fingerprint", "  folder_fingerprint (re-check)"),
    ("ledger.py", "commit", "  SQLite group commit (Ledger.commit)"),
    ("outcomes.py", "record_outcomes", "  session.json update"),
    ("events.py", "emit", "  events.jsonl (all emits)"),
    ("~", "<built-in method posix.fsync>", "  fsync (all)"),
]


def breakdown(per_merge: dict[tuple[str, int, str], float]) -> dict[str, float]:
    """Cumulative seconds per merge of each step in STEPS (profiled, so inflated ~1.5x)."""
    out = {}
    for file, func, label in STEPS:
        out[label] = sum(v for (f, _, name), v in per_merge.items() if name == func and Path(f).name == file)
    return out


def bench(results: Results, folder: Path, sizes_mb: list[float], repeat: int, force_profile: bool) -> None:
    say(f"== per-merge cost (median of {repeat}) and views flush vs graph size ({machine()})")
    paths = create_session(folder, "merge-cost benchmark", "bench")
    processor = new_processor(paths)
    builder = GraphBuilder(paths, processor)
    rng = random.Random(5)
    medians: dict[float, float] = {}
    cpu_medians: dict[float, float] = {}
    profiles: dict[float, cProfile.Profile] = {}
    profiled = 10
    for size_mb in sorted(sizes_mb):
        t0 = time.perf_counter()
        size = builder.grow_to(int(size_mb * MB))
        build = time.perf_counter() - t0
        label = f"{size_mb:g} MB"
        os.sync()  # write back what building (and earlier benchmarks) left dirty, so fsyncs don't wait for it
        for i in range(3):  # warm-up
            merge_once(builder, f"warm-{size_mb:g}-{i}".replace(".", "-"), rng)
        tag = f"{size_mb:g}".replace(".", "-")
        measured = [merge_once(builder, f"probe-{tag}-{i}", rng) for i in range(repeat)]
        costs = [wall for wall, _ in measured]
        cpu_medians[size_mb] = statistics.median(cpu for _, cpu in measured)
        profile = cProfile.Profile()
        for i in range(profiled):
            agent = f"prof-{size_mb:g}-{i}".replace(".", "-")
            write_small(paths, agent, rng)
            paths.lock(agent).touch()
            expect_merged(profile.runcall(processor.process_pending))
        profiles[size_mb] = profile
        flushes = []
        for i in range(3):  # steady state: one small agent merged, then the views brought up to date
            merge_once(builder, f"flush-{tag}-{i}", rng)
            t1 = time.perf_counter()
            flush_views(processor, force=True)
            flushes.append(time.perf_counter() - t1)
        medians[size_mb] = statistics.median(costs)
        triples = getattr(processor.rdf, "triple_count", None)
        trig = paths.kg_trig.stat().st_size / MB
        say(f"  {label}: knowledge-graph.json {size / MB:.2f} MB, .trig {trig:.2f} MB, {builder.agents} bulk "
            f"agents" + (f", {triples:,} triples" if triples else "") + f" (built in {build:.0f} s)")
        say(f"    process_pending, one small agent: median {ms(medians[size_mb])}, p90 {ms(pct(costs, 90))}, "
            f"min {ms(min(costs))}, max {ms(max(costs))}; CPU time median {ms(cpu_medians[size_mb])}")
        say(f"    flush_views: {ms(statistics.median(flushes))}")
        steps = breakdown(stats_per_merge(profile, profiled))
        say("    where one merge's time goes (cProfile, ms per merge): " + "; ".join(
            f"{label.strip()} {value * 1000:.1f}" for label, value in steps.items() if value >= 0.0005))
        results.add(f"per-merge cost at {size / MB:.1f} MB (CPU time)",
                    f"{ms(medians[size_mb])} ({ms(cpu_medians[size_mb])})")
        results.add(f"views flush at {size / MB:.1f} MB (background)", ms(statistics.median(flushes)))
    processor.close()
    small, large = min(medians), max(medians)
    ratio = medians[large] / medians[small]
    met = ratio <= 3.0
    cpu_ratio = cpu_medians[large] / cpu_medians[small]
    results.add(f"per-merge cost {large:g} MB / {small:g} MB (CPU time)", f"{ratio:.2f}x ({cpu_ratio:.2f}x)",
                "<= 3x", met)
    if not met or force_profile:
        results.profiles.append((f"process_pending at {large:g} MB ({profiled} merges)",
                                 profile_text(profiles[large], f"process_pending at {large:g} MB")))
        at_small = stats_per_merge(profiles[small], profiled)
        at_large = stats_per_merge(profiles[large], profiled)
        growth = sorted(((at_large[f] - at_small.get(f, 0.0), f) for f in at_large), reverse=True)[:15]
        lines = [f"{'+ms/merge':>10}  {f'at {small:g} MB':>12}  {f'at {large:g} MB':>12}  function"]
        for delta, func in growth:
            lines.append(f"{delta * 1000:10.1f}  {at_small.get(func, 0.0) * 1000:12.1f}  "
                         f"{at_large[func] * 1000:12.1f}  {Path(func[0]).name}:{func[1]}({func[2]})")
        results.profiles.append((f"cumulative time per merge that grew from {small:g} MB to {large:g} MB",
                                 "\n".join(lines)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=float, nargs="+", default=[1, 10, 50], help="graph sizes in MB")
    parser.add_argument("--repeat", type=int, default=30, help="merges timed per size")
    parser.add_argument("--profile", action="store_true", help="print hotspots even when the target is met")
    parser.add_argument("--workdir", type=Path, help="keep the session here")
    args = parser.parse_args()
    results = Results()
    with workdir(args.workdir) as folder:
        bench(results, folder, args.sizes, args.repeat, args.profile)
    results.report()


if __name__ == "__main__":
    main()
