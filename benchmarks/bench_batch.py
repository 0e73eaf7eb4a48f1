"""Batch throughput: an offline batch over the shared papers, with the local executor and with Dask.

    python benchmarks/bench_batch.py                 # 100 questions (long: minutes per mode)
    python benchmarks/bench_batch.py --questions 10  # smaller

Each mode runs in a child process of its own so that its driver's peak memory (ru_maxrss)
is its own. Prints, per mode: wall time, questions per minute, the driver's peak memory, and
then the per-job overhead of Dask against a local process, measured on trivial agent jobs
(a process that writes one artifact and its lock) so that the agent's own work is left out.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from harness import machine, shared, sweep_probe, sweep_sizes

TOPICS = ["quality evaluation", "reported limitations", "study outcomes", "data collection methods",
          "sample sizes", "statistical analysis", "patient experience", "annotation of corpora",
          "long-form summarization", "metabolic response"]
ASPECTS = ["How do these studies address {}?", "What do the papers report about {}?",
           "Which evidence exists on {}?", "What are the open questions about {}?"]
TRIVIAL_JOBS = 20


def questions(n: int) -> list[str]:
    return [ASPECTS[(i // len(TOPICS)) % len(ASPECTS)].format(TOPICS[i % len(TOPICS)]) + f" (#{i + 1})"
            for i in range(n)]


def run_mode(mode: str, n: int, papers: Path) -> dict[str, float]:
    """In the child: run the batch through the same code as `cconductor batch`, measure, print JSON."""
    from orchestrator.run.batch import BatchState, read_questions
    from orchestrator.run.batch_runner import LocalSessionPool, SessionPool, run_batch
    from orchestrator.run.session_jobs import SessionJob

    work = Path(tempfile.mkdtemp(prefix=f"bench-batch-{mode}-"))
    qfile = work / "questions.txt"
    qfile.write_text("\n".join(questions(n)) + "\n")
    listed = read_questions(qfile)
    dirs = (str(papers.resolve()),)
    state = BatchState.open(work / "out", listed, {}, resume=False)
    jobs = {q.qid: SessionJob(q.qid, q.text, "academic-research", ("--backend", "offline"), dirs) for q in listed}
    started = time.perf_counter()
    pool: SessionPool
    if mode == "local":
        pool = LocalSessionPool(2)
    else:
        import distributed

        from orchestrator.run.dask_batch import DaskSessionPool

        cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0")
        pool = DaskSessionPool(distributed.Client(cluster), 2, owned=(cluster,))
    ready = time.perf_counter() - started
    try:
        rows = run_batch(state, pool, jobs, work / "sessions", dirs, live=False, stream=sys.stderr)
    finally:
        wall = time.perf_counter() - started
        shutil.rmtree(work, ignore_errors=True)
    ok = sum(1 for r in rows if r["status"] in ("completed", "partial"))
    inside = [float(r["wall_seconds"]) for r in rows if r.get("wall_seconds")]
    return {"wall_s": wall, "startup_s": ready, "ok": ok, "n": n, "session_s": sum(inside) / max(1, len(inside)),
            "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def trivial_overhead() -> dict[str, float]:
    """Seconds per trivial agent job: LocalExecutor (2 at a time) vs DaskExecutor on LocalCluster(n_workers=2)."""
    import distributed

    from orchestrator.run.dask_executor import DaskExecutor
    from orchestrator.run.executor import Executor, Job, LocalExecutor
    from orchestrator.session.record import create_session

    code = ("import json, os, sys; t = json.load(open(sys.argv[1])); d = os.path.join(t['session'], 'artifacts', "
            "t['agent']); os.makedirs(d, exist_ok=True); open(os.path.join(d, 'x.json'), 'w').write('{}'); "
            "open(os.path.join(t['session'], t['agent'] + '.kg.lock'), 'w').close()")

    def jobs(root: Path) -> list[Job]:
        paths = create_session(root, "q", "bench")
        paths.kg_json.write_text("{}")
        made = []
        for i in range(TRIVIAL_JOBS):
            task = paths.tasks / f"a{i}-1.json"
            task.parent.mkdir(parents=True, exist_ok=True)
            task.write_text(json.dumps({"agent": f"a{i}", "attempt": 1, "session": str(paths.root),
                                        "inputs": {"graph": str(paths.kg_json)}}))
            made.append(Job(f"a{i}-1", f"a{i}", (sys.executable, "-c", code, str(task)), str(paths.root),
                            str(paths.logs / f"a{i}.log"), 60, env={"CCONDUCTOR_TASK": str(task)}))
        return made

    def timed(executor: Executor, root: Path) -> float:
        batch = jobs(root)
        started = time.perf_counter()
        for job in batch:
            executor.submit(job)
        while executor.pending():
            executor.wait(timeout=1)
        return (time.perf_counter() - started) / TRIVIAL_JOBS

    work = Path(tempfile.mkdtemp(prefix="bench-overhead-"))
    try:
        local = timed(LocalExecutor(2), work / "local")
        with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                      dashboard_address=":0") as cluster, distributed.Client(cluster) as client:
            timed(DaskExecutor(client, 2), work / "warm")  # workers import orchestrator once
            dask = timed(DaskExecutor(client, 2), work / "dask")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return {"local_s": local, "dask_s": dask}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=100, help="questions in the batch (default 100)")
    parser.add_argument("--papers", type=Path, default=None, help="input folder (default: the shared PDFs)")
    parser.add_argument("--plain", action="store_true", help="judge every sweep one by one (burst seam off)")
    parser.add_argument("--only", choices=["local", "dask"], help="run one mode only")
    parser.add_argument("--mode", choices=["local", "dask", "overhead"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.mode == "overhead":
        print(json.dumps(trivial_overhead()))
        return
    if args.mode:
        print(json.dumps(run_mode(args.mode, args.questions, args.papers)))
        return
    args.papers = args.papers or shared() / "data" / "scientific-pdfs"
    if not args.papers.is_dir():
        sys.exit(f"{args.papers}: no such folder; pass --papers DIR")
    print(f"batch of {args.questions} offline question(s) over {args.papers} ({len(list(args.papers.glob('*.pdf')))} "
          "PDFs), 2 sessions at a time")
    print(f"{'burst seam off' if args.plain else 'as shipped'} ({machine()})")
    results = {}
    probe_dir = Path(tempfile.mkdtemp(prefix="bench-batch-probe-"))
    for mode in [args.only] if args.only else ["local", "dask"]:
        env, sizes = sweep_probe(probe_dir / mode, plain=args.plain)
        out = subprocess.run([sys.executable, __file__, "--mode", mode, "--questions", str(args.questions),
                              "--papers", str(args.papers)], capture_output=True, text=True, check=True, env=env)
        sweeps = sweep_sizes(sizes)
        print(f"  {mode}: {len(sweeps)} sweeps, largest {max(sweeps, default=0)}, {sum(sweeps)} locks judged")
        r = results[mode] = json.loads(out.stdout.strip().splitlines()[-1])
        label = "local executor (2 threads)" if mode == "local" else "Dask LocalCluster(n_workers=2)"
        print(f"{label:34s} wall {r['wall_s']:7.1f} s  {60 * r['n'] / r['wall_s']:6.2f} questions/min  "
              f"driver peak {r['peak_mib']:6.1f} MiB  ok {r['ok']}/{r['n']}  (start-up {r['startup_s']:.2f} s, "
              f"one session {r['session_s']:.1f} s on average inside its job)")
    shutil.rmtree(probe_dir, ignore_errors=True)
    if len(results) < 2:
        return
    per_question = (results["dask"]["wall_s"] - results["local"]["wall_s"]) / args.questions
    print(f"Dask minus local, per question (whole session): {per_question:+.2f} s; the machine's load average "
          f"is {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPU(s), so part of it may be contention")
    over = json.loads(subprocess.run([sys.executable, __file__, "--mode", "overhead"], capture_output=True, text=True,
                                     check=True).stdout.strip().splitlines()[-1])
    print(f"trivial agent job, {TRIVIAL_JOBS} jobs 2 at a time: local process {1000 * over['local_s']:.0f} ms/job, "
          f"Dask {1000 * over['dask_s']:.0f} ms/job, overhead {1000 * (over['dask_s'] - over['local_s']):+.0f} ms/job")


if __name__ == "__main__":
    main()
