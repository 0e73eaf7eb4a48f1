"""How long does an offline run over the eight papers take, cold and warm, and how long does `ask` take?

    python benchmarks/bench_offline_run.py [--runs 5] [--question "..."]

Runs ``cconductor run QUESTION --input-dir tests/data/scientific-pdfs`` ``--runs`` times with a fresh
user cache folder (the first run parses and analyses the PDFs, later ones read them from the cache),
then ``cconductor ask`` on the last session twice: a question the run asked (answered from the graph's
claims) and one it never asked (the session's documents searched, a new passage judged and merged).
Prints, per run, the wall time, the CPU time of all its processes and the ingestion agent's own
duration (``pdf-analyzer`` in events.jsonl), and the machine's load (the targets: a run's median under
15 s, a second run's ingestion under 5 s, ``ask`` under 2 s; figures on a shared machine are inflated
by its load, the CPU times less so).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAPERS = ROOT / "tests" / "data" / "scientific-pdfs"


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _timed(args: list[str], env: dict[str, str], cwd: Path) -> tuple[subprocess.CompletedProcess[str], float, float]:
    cpu, started = _cpu(), time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "orchestrator", *args], capture_output=True, text=True, env=env,
                          cwd=cwd, timeout=900)
    return proc, time.perf_counter() - started, _cpu() - cpu


def _ingestion_seconds(session: Path) -> float | None:
    for line in (session / "events.jsonl").read_text(encoding="utf-8").splitlines():
        event = json.loads(line)
        if event.get("type") == "agent.finished" and event["data"].get("agent") == "pdf-analyzer":
            return float(event["data"].get("duration") or 0.0)
    return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--question", default="How many papers does the S2ORC corpus contain?")
    parser.add_argument("--new-question", default="Which tool turns the PDFs into structured full text in S2ORC?")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-offline-run-") as tmp:
        base = Path(tmp)
        env = {**os.environ, "XDG_CACHE_HOME": str(base / "cache"), "CCONDUCTOR_SESSIONS_DIR": str(base / "s")}
        env.pop("ANTHROPIC_API_KEY", None)
        walls, session = [], None
        for n in range(1, args.runs + 1):
            proc, wall, cpu = _timed(["run", args.question, "--input-dir", str(PAPERS), "--json"], env, base)
            if proc.returncode != 0:
                raise SystemExit(f"run {n} failed: {proc.stderr[-500:]}")
            session = Path(json.loads(proc.stdout.splitlines()[-1])["session"])
            walls.append(wall)
            print(f"run {n} ({'cold cache' if n == 1 else 'warm cache'}): wall {wall:.1f} s, CPU {cpu:.1f} s, "
                  f"ingestion {_ingestion_seconds(session) or 0:.1f} s; load {os.getloadavg()[0]:.1f}", flush=True)
        print(f"median wall over {len(walls)} runs: {statistics.median(walls):.1f} s")
        assert session is not None
        for label, question in (("asked by the run", args.question), ("never asked", args.new_question)):
            proc, wall, cpu = _timed(["ask", str(session), question, "--json"], env, base)
            found = json.loads(proc.stdout).get("found") if proc.returncode == 0 else None
            print(f"ask ({label}): wall {wall:.2f} s, CPU {cpu:.2f} s, found {found}; load {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
