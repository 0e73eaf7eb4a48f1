"""Start-up of the command line: ``cconductor --help``, against a bare ``python -c pass``.

    python benchmarks/bench_startup.py [--runs 10] [--profile]

Median of ``--runs`` subprocess runs after a warm-up. Target: < 300 ms. A miss (or ``--profile``)
prints the slowest imports (``python -X importtime``).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time

from harness import Results, cconductor, machine, ms, say


def bench(results: Results, runs: int, force_profile: bool) -> None:
    say(f"== cconductor --help start-up (median of {runs}; {machine()})")
    exe = cconductor()
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "0"}
    subprocess.run([exe, "--help"], capture_output=True, check=True, env=env)  # warm the caches
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run([exe, "--help"], capture_output=True, check=True, env=env)
        times.append(time.perf_counter() - t0)
    median = statistics.median(times)
    say(f"  {exe} --help: median {ms(median)}, min {ms(min(times))}, max {ms(max(times))}")
    baseline = []
    for _ in range(5):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], capture_output=True, check=True)
        baseline.append(time.perf_counter() - t0)
    say(f"  (a bare `python -c pass` takes {ms(statistics.median(baseline))})")
    results.add("cconductor --help start-up", ms(median), "< 300 ms", median < 0.300)
    if median >= 0.300 or force_profile:
        code = ("import sys\nsys.argv = ['cconductor', '--help']\nfrom orchestrator.cli import main\n"
                "try:\n    main()\nexcept SystemExit:\n    pass\n")
        out = subprocess.run([sys.executable, "-X", "importtime", "-c", code],
                             capture_output=True, text=True, env=env)
        rows = []
        for line in out.stderr.splitlines():
            parts = line.split("|")
            if len(parts) == 3 and parts[1].strip().isdigit():
                rows.append((int(parts[1]), parts[2].rstrip()))
        rows.sort(reverse=True)
        text = "\n".join(f"{us / 1000:8.1f} ms  {name}" for us, name in rows[:20])
        results.profiles.append(("cconductor --help: slowest imports (cumulative, -X importtime)", text))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--profile", action="store_true", help="print the slowest imports even when the target is met")
    args = parser.parse_args()
    results = Results()
    bench(results, args.runs, args.profile)
    results.report()


if __name__ == "__main__":
    main()
