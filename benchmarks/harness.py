"""What every benchmark script shares: printing, timing, the figures table, child processes, paths.

Not a benchmark itself. The scripts next to it import it by name (Python puts a script's own folder
first on its path), with the ``cconductor`` package installed (``pip install -e .``).
"""

from __future__ import annotations

import contextlib
import cProfile
import io
import math
import os
import pstats
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
MB = 1_000_000


def shared() -> Path:
    """The shared reference and data folder (``$CCONDUCTOR_SHARED``, else ``../shared`` of the repository
    or of the folder holding its worktree)."""
    given = os.environ.get("CCONDUCTOR_SHARED")
    candidates = [Path(given)] if given else [REPO.parent / "shared", REPO.parents[1] / "shared"]
    for candidate in candidates:
        if candidate.is_dir():
            return candidate
    raise SystemExit(f"no shared folder at {' or '.join(map(str, candidates))}; set CCONDUCTOR_SHARED")


def say(text: str) -> None:
    print(text, flush=True)


def machine() -> str:
    """CPUs and load average: a figure means little without them (the project machine is shared)."""
    return f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}"


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms"


def pct(values: list[float], q: float) -> float:
    """The q-th percentile (nearest rank)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(q / 100 * len(ordered)) - 1))]


def median_ms(fn: Callable[[], object], repeat: int, teardown: Callable[[], object] | None = None) -> float:
    """Median wall time of ``repeat`` calls of ``fn``, in ms (``teardown`` runs after each, untimed)."""
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        times.append((time.perf_counter() - started) * 1000)
        if teardown is not None:
            teardown()
    return statistics.median(times)


@contextlib.contextmanager
def timed(label: str) -> Iterator[None]:
    started = time.perf_counter()
    yield
    say(f"  {label}: {time.perf_counter() - started:.1f} s")


@dataclass
class Row:
    figure: str
    value: str
    target: str = ""
    met: bool | None = None


@dataclass
class Results:
    """The figures of a run and whether each met its target, printed as one table at the end."""

    rows: list[Row] = field(default_factory=list)
    profiles: list[tuple[str, str]] = field(default_factory=list)

    def add(self, figure: str, value: str, target: str = "", met: bool | None = None) -> None:
        self.rows.append(Row(figure, value, target, met))

    def table(self) -> str:
        cells = [("figure", "value", "target", "met")] + [
            (r.figure, r.value, r.target or "-", "-" if r.met is None else ("yes" if r.met else "NO"))
            for r in self.rows]
        widths = [max(len(c[i]) for c in cells) for i in range(4)]
        lines = ["  ".join(c[i].ljust(widths[i]) for i in range(4)) for c in cells]
        lines.insert(1, "  ".join("-" * w for w in widths))
        return "\n".join(lines)

    def report(self) -> None:
        """The profiles, then the table, then the targets missed (if any)."""
        for title, text in self.profiles:
            say(f"\n== profile: {title}\n{text}")
        say(f"\n== summary ({machine()})")
        say(self.table())
        missed = [r.figure for r in self.rows if r.met is False]
        if missed:
            say(f"\ntargets missed: {', '.join(missed)}")


def profile_text(profile: cProfile.Profile | pstats.Stats, title: str, top: int = 18) -> str:
    """A profile's hotspots, by cumulative and by own time."""
    out = io.StringIO()
    stats = profile if isinstance(profile, pstats.Stats) else pstats.Stats(profile, stream=out)
    stats.stream = out  # type: ignore[attr-defined]
    stats.strip_dirs()
    out.write(f"--- {title}: by cumulative time\n")
    stats.sort_stats("cumulative").print_stats(top)
    out.write(f"--- {title}: by own time\n")
    stats.sort_stats("tottime").print_stats(top)
    return "\n".join(line for line in out.getvalue().splitlines() if line.strip()
                     and not line.lstrip().startswith(("Ordered by", "List reduced")))


def cconductor() -> str:
    """The installed ``cconductor`` executable (next to this Python)."""
    exe = shutil.which("cconductor") or str(Path(sys.executable).with_name("cconductor"))
    if not Path(exe).exists():
        raise SystemExit("the cconductor command is not installed; run `pip install -e .`")
    return exe


@dataclass(frozen=True)
class ChildRun:
    wall_s: float
    cpu_s: float
    peak_mib: float
    code: int
    stderr: str


def run_child(argv: list[str], env: dict[str, str] | None = None) -> ChildRun:
    """Wall time, CPU time (user + system) and peak RSS of one child process.

    Through /usr/bin/time: a child forked from a large benchmark process would inherit its RSS high-water mark.
    """
    with tempfile.NamedTemporaryFile("r", suffix=".time") as out:
        started = time.perf_counter()
        proc = subprocess.run(["/usr/bin/time", "-f", "%M %U %S", "-o", out.name, *argv], stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, env=env, check=False)
        wall = time.perf_counter() - started
        rss_kib, user, system = out.read().split()[-3:]
    return ChildRun(wall, float(user) + float(system), int(rss_kib) / 1024, proc.returncode,
                    proc.stderr.decode(errors="replace"))


@contextlib.contextmanager
def workdir(keep_in: Path | None = None, prefix: str = "cconductor-bench-") -> Iterator[Path]:
    """A temporary folder, removed at the end unless it was given (``--workdir``, to reuse what it holds)."""
    if keep_in is not None:
        keep_in.mkdir(parents=True, exist_ok=True)
        yield keep_in
        return
    folder = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


class Recorder:
    """An event listener: when each expected agent's lock was seen and its merge committed."""

    def __init__(self, expected: set[str], clock: Callable[[], float] = time.perf_counter):
        import threading

        self.expected = expected
        self.clock = clock
        self.seen: dict[str, float] = {}
        self.committed: dict[str, float] = {}
        self.rejected: list[str] = []
        self.done = threading.Event()

    def __call__(self, event: dict[str, Any]) -> None:
        now = self.clock()
        agent = event.get("data", {}).get("agent")
        if agent not in self.expected:
            return
        if event["type"] == "lock.seen":
            self.seen.setdefault(agent, now)
        elif event["type"] == "merge.committed":
            self.committed[agent] = now
            if len(self.committed) == len(self.expected):
                self.done.set()
        elif event["type"] == "merge.rejected":
            self.rejected.append(f"{agent}: {event['message']}")
            self.done.set()


def count_sweeps(processor: Any) -> list[tuple[int, float]]:
    """Record (locks, seconds) of every non-empty sweep (``process_pending``) the processor runs from now on."""
    sweeps: list[tuple[int, float]] = []
    inner = processor.process_pending

    def counting(only: Any = None) -> Any:
        started = time.perf_counter()
        outcomes = inner(only)
        if outcomes:
            sweeps.append((len(outcomes), time.perf_counter() - started))
        return outcomes

    processor.process_pending = counting
    return sweeps


_PROBE = '''\
"""Loaded by every Python process of a benchmark run (PYTHONPATH): records each sweep's size, and with
BENCH_PLAIN=1 judges every sweep one by one (the burst seam off)."""
import os

if os.environ.get("BENCH_SWEEPS_FILE"):
    try:
        import orchestrator.commit.processor as _processor
    except Exception:
        _processor = None
    if _processor is not None:
        if os.environ.get("BENCH_PLAIN") == "1":
            _processor.BURST_MIN = 10**9
        _inner = _processor.Processor.process_pending

        def _recording(self, only=None):
            outcomes = _inner(self, only)
            if outcomes:
                with open(os.environ["BENCH_SWEEPS_FILE"], "a") as handle:
                    handle.write(f"{len(outcomes)}\\n")
            return outcomes

        _processor.Processor.process_pending = _recording
'''


def sweep_probe(folder: Path, *, plain: bool) -> tuple[dict[str, str], Path]:
    """An environment for child processes that records every sweep's size in the returned file (and, with
    ``plain``, judges every sweep one by one): a ``sitecustomize`` on PYTHONPATH, for benchmarks only."""
    probe = folder / "sweep-probe"
    probe.mkdir(parents=True, exist_ok=True)
    (probe / "sitecustomize.py").write_text(_PROBE)
    sizes = folder / "sweeps.txt"
    sizes.write_text("")
    path = os.pathsep.join(p for p in (str(probe), os.environ.get("PYTHONPATH", "")) if p)
    env = {**os.environ, "PYTHONPATH": path, "BENCH_SWEEPS_FILE": str(sizes), "BENCH_PLAIN": "1" if plain else "0"}
    return env, sizes


def sweep_sizes(sizes: Path) -> list[int]:
    return [int(line) for line in sizes.read_text().split()] if sizes.exists() else []
