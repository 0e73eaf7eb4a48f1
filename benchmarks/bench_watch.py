"""Watch latency: from an agent's lock to its committed merge, with `cconductor watch` running.

    python benchmarks/bench_watch.py [--drops 200] [--graph-mb 1] [--profile]

A real ``Watcher`` (inotify observer, background views flusher, the defaults of ``cconductor
watch``) runs in a thread over a session whose knowledge-graph.json is about ``--graph-mb`` MB. A
writer drops one small agent every 20 ms: sources.json (2 sources, one with a stored text) and
claims.json (5 claims, one high-priority, every snippet quoted from the text, so evidence binding
and SHACL run), then the lock. Latency is from just before the lock is created to the moment the
``merge.committed`` event is written (after the ledger commit). Target: p50 <= 30 ms. Also: the
same with drops 200 ms apart (no queueing), and, with ``--profile`` or a missed target, without
background flushes and with cProfile of the watcher and flusher threads.
"""

from __future__ import annotations

import argparse
import cProfile
import random
import statistics
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from harness import MB, Recorder, Results, count_sweeps, machine, ms, pct, profile_text, say, timed, workdir
from synthetic import GraphBuilder, new_processor, write_small

from orchestrator.commit.processor import Processor
from orchestrator.commit.view_flusher import ViewFlusher
from orchestrator.commit.watcher import Watcher
from orchestrator.model.layout import SessionPaths
from orchestrator.session.record import create_session

TARGET_S = 0.030


class _ProfiledFlusher(ViewFlusher):
    def __init__(self, processor: Processor, interval: float, profile: cProfile.Profile):
        self.profile = profile
        super().__init__(processor, interval)

    def _run(self) -> None:
        self.profile.runcall(super()._run)


@dataclass
class Run:
    latency: list[float]  # lock created -> merge.committed written
    wake: list[float]  # lock created -> lock.seen (wake-up, and waiting for the sweep before)
    work: list[float]  # lock.seen -> merge.committed (the sweep holding this lock)
    sweeps: list[tuple[int, float]]
    profiles: dict[str, cProfile.Profile]

    def line(self) -> str:
        locks, busy = sum(n for n, _ in self.sweeps), sum(t for _, t in self.sweeps)
        return (f"p50 {ms(statistics.median(self.latency))}, p90 {ms(pct(self.latency, 90))}, "
                f"p99 {ms(pct(self.latency, 99))}, max {ms(max(self.latency))}; {len(self.sweeps)} sweeps "
                f"(largest {max(n for n, _ in self.sweeps)}), {ms(busy / max(1, locks))} of sweep time per lock")


def run(paths: SessionPaths, drops: int, spacing: float, tag: str, *, background_flushes: bool = True,
        profile: bool = False) -> Run:
    processor = new_processor(paths)
    agents = [f"lat{tag}-{i:04d}" for i in range(drops)]
    recorder = Recorder(set(agents))
    processor.events.subscribe(recorder)
    sweeps = count_sweeps(processor)
    watcher = Watcher(processor)  # as `cconductor watch` starts it
    profiles: dict[str, cProfile.Profile] = {}
    if profile:
        profiles["flusher thread"] = cProfile.Profile()
        watcher.flusher = _ProfiledFlusher(processor, watcher.flusher.interval, profiles["flusher thread"])
        profiles["watcher thread"] = cProfile.Profile()
    if not background_flushes:
        watcher.flusher.mark_dirty = lambda: None  # type: ignore[method-assign]
    target = (lambda: profiles["watcher thread"].runcall(watcher.run)) if profile else watcher.run
    thread = threading.Thread(target=target, name="bench-watcher")
    thread.start()
    watcher.ready.wait(10)
    time.sleep(0.5)  # the start-up rescan
    rng = random.Random(11)
    created: dict[str, float] = {}
    next_drop = time.perf_counter()
    try:
        for agent in agents:
            write_small(paths, agent, rng)  # the agent writes its files, then its lock
            time.sleep(max(0.0, next_drop - time.perf_counter()))
            created[agent] = time.perf_counter()
            paths.lock(agent).touch()
            next_drop += spacing
        if not recorder.done.wait(300) or recorder.rejected:
            raise SystemExit(f"run {tag}: {len(recorder.committed)}/{drops} committed; {recorder.rejected[:3]}")
    finally:
        watcher.stop()
        thread.join(120)
        processor.close()
    return Run([recorder.committed[a] - created[a] for a in agents], [recorder.seen[a] - created[a] for a in agents],
               [recorder.committed[a] - recorder.seen[a] for a in agents], sweeps, profiles)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--drops", type=int, default=200, help="agents dropped 20 ms apart (default 200)")
    parser.add_argument("--graph-mb", type=float, default=1.0, help="size of the session's graph (default 1 MB)")
    parser.add_argument("--profile", action="store_true", help="profile even when the target is met")
    parser.add_argument("--workdir", type=Path, help="keep the session here")
    args = parser.parse_args()
    results = Results()
    say(f"== watch latency: {args.drops} drops every 20 ms on a ~{args.graph_mb:g} MB graph ({machine()})")
    with workdir(args.workdir) as folder:
        paths = create_session(folder, "latency benchmark", "bench")
        builder = GraphBuilder(paths, new_processor(paths))
        with timed("graph built"):
            size = builder.grow_to(int(args.graph_mb * MB))
        builder.processor.close()
        say(f"  knowledge-graph.json {size / MB:.2f} MB ({builder.agents} agents)")
        queued = run(paths, args.drops, 0.020, "a")
        p50 = statistics.median(queued.latency)
        say(f"  lock -> commit: {queued.line()}")
        say(f"    lock -> lock.seen p50 {ms(statistics.median(queued.wake))}; "
            f"lock.seen -> commit p50 {ms(statistics.median(queued.work))}")
        results.add(f"watch latency p50 ({args.drops} drops / 20 ms, {size / MB:.1f} MB graph)", ms(p50),
                    f"<= {TARGET_S * 1000:.0f} ms", p50 <= TARGET_S)
        results.add("watch latency p99", ms(pct(queued.latency, 99)))
        isolated = run(paths, 30, 0.2, "i")
        say(f"  drops every 200 ms (no queueing): {isolated.line()}")
        results.add("watch latency p50, drops every 200 ms", ms(statistics.median(isolated.latency)))
        if p50 > TARGET_S or args.profile:
            quiet = run(paths, args.drops, 0.020, "q", background_flushes=False)
            results.add("watch latency p50, no background views flush", ms(statistics.median(quiet.latency)))
            profiled = run(paths, min(args.drops, 80), 0.020, "p", profile=True)
            for name, prof in profiled.profiles.items():
                results.profiles.append((f"watch latency: {name}", profile_text(prof, name)))
    results.report()


if __name__ == "__main__":
    main()
