"""Wall time and peak memory of an offline academic-research mission over the eight shared PDFs.

    python benchmarks/bench_mission.py [--runs N] [--plain]

Target: under 60 s and under 1 GiB on the 2-core machine. Memory is sampled every 20 ms as the
summed RSS of the whole process tree (orchestrator plus every agent process alive at that moment),
from /proc. Also printed: the sizes of the sweeps the processor judged (a real run launches at most
``--max-parallel`` agents at a time, so its sweeps are small), and with ``--plain`` every sweep is
judged one by one (the burst seam, commit/burst/, off) to compare.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from harness import machine, shared, sweep_probe, sweep_sizes

QUESTION = "How do these studies evaluate quality and outcomes, and what limitations do they report?"


def _children(pid: int) -> list[int]:
    found = []
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as handle:
                found += [int(c) for c in handle.read().split()]
    except (FileNotFoundError, ProcessLookupError):
        pass
    return found


def _tree_rss(root: int) -> int:
    total, stack = 0, [root]
    while stack:
        pid = stack.pop()
        try:
            with open(f"/proc/{pid}/statm") as handle:
                total += int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
        except (FileNotFoundError, ProcessLookupError):
            continue
        stack += _children(pid)
    return total


def run_once(plain: bool) -> tuple[float, int, dict[str, object]]:
    with tempfile.TemporaryDirectory() as sessions:
        env, sizes = sweep_probe(Path(sessions) / "probe", plain=plain)
        env["CCONDUCTOR_SESSIONS_DIR"] = sessions
        env.pop("ANTHROPIC_API_KEY", None)
        started = time.perf_counter()
        process = subprocess.Popen(
            [sys.executable, "-m", "orchestrator.cli", "run", QUESTION, "--mission", "academic-research",
             "--input-dir", str(shared() / "data" / "scientific-pdfs"), "--json", "--max-parallel", "2"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True,
        )
        peak = 0
        while process.poll() is None:
            peak = max(peak, _tree_rss(process.pid))
            time.sleep(0.02)
        elapsed = time.perf_counter() - started
        out, err = process.communicate()
        if process.returncode != 0:
            raise SystemExit(f"the mission failed: {err[-2000:]}")
        result = json.loads(out.splitlines()[-1])
        graph = json.loads((Path(result["session"]) / "knowledge-graph.json").read_text())
        return elapsed, peak, {"status": result["status"], "sources": len(graph["sources"]),
                               "claims": len(graph["claims"]), "sweeps": _summary(sweep_sizes(sizes))}


def _summary(sweeps: list[int]) -> str:
    return f"{len(sweeps)} sweeps, largest {max(sweeps, default=0)}, {sum(sweeps)} locks" if sweeps else "none"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--plain", action="store_true", help="judge every sweep one by one (burst seam off)")
    args = parser.parse_args()
    print(f"offline mission, {'burst seam off' if args.plain else 'as shipped'} ({machine()})")
    times, peaks = [], []
    for n in range(args.runs):
        elapsed, peak, info = run_once(args.plain)
        times.append(elapsed)
        peaks.append(peak)
        print(f"run {n + 1}: {elapsed:6.2f} s wall, peak tree RSS {peak / 2**20:7.1f} MiB, {info}")
    print(f"offline mission over 8 PDFs: median {statistics.median(times):.2f} s (target < 60 s), "
          f"peak RSS max {max(peaks) / 2**20:.1f} MiB (target < 1024 MiB)")


if __name__ == "__main__":
    main()
