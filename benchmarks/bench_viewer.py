"""How fast `cconductor view` opens a large session: the first page and the API calls it makes.

Run: ``python benchmarks/bench_viewer.py [--size-mb 50] [--graph] [--runs 5] [--workdir DIR] [--browser]``.

Builds (once per ``--workdir``) a session folder of about ``--size-mb`` MB through the real
pipeline (synthetic.GraphBuilder: bulk agents merged in sweeps, views flushed), starts
``cconductor view SESSION --no-browser`` as a user would, and times what opening the session's
page costs, in the order the page asks for it: the HTML, its CSS and ES modules, the overview (the
header), the summary (quality computed from the graph, contradictions, growth), the live
stream's first message and the newest 200 events. "cold" is the first open after the viewer
printed its address (the session it names is read and summarised from then on, as the browser
starts; the benchmark asks at once, without a browser's start-up to hide behind); "warm" the median
of the next ``--runs`` opens, and the time from the command typed to the page complete is given
too. The viewer's CPU time for the cold open is read from /proc (wall time on a loaded machine
overstates it). ``--browser`` also times the page in headless Chromium, from navigation to the
timeline drawn (tests/browser.py). Target: the cold open under one second at 50 MB. ``--graph``
sizes knowledge-graph.json itself instead of the folder (a 50 MB JSON view makes a folder of about
240 MB).
"""

from __future__ import annotations

import argparse
import http.client
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from harness import REPO, say
from synthetic import GraphBuilder, new_processor

from orchestrator.model.layout import SessionPaths
from orchestrator.session.record import create_session

STATIC = ("/static/app.css", "/static/app.js", "/static/dom.js", "/static/evidence.js", "/static/graph.js",
          "/static/views.js")


def folder_size(root: Path) -> int:
    return sum(p.stat().st_size for p in root.rglob("*") if p.is_file() and not p.is_symlink())


def build(workdir: Path, size_mb: int, graph: bool = False) -> SessionPaths:
    done = workdir / f"viewer-{size_mb}mb{'-graph' if graph else ''}.done"
    if done.exists():
        return SessionPaths(Path(done.read_text().strip()))
    paths = create_session(workdir / f"sessions-{size_mb}mb{'-graph' if graph else ''}",
                           f"viewer benchmark {size_mb} MB", "bench")
    processor = new_processor(paths)
    builder = GraphBuilder(paths, processor)
    t0 = time.perf_counter()
    target = size_mb * 1_000_000
    builder.add(20)
    builder.flush()
    if graph:
        builder.grow_to(target)
        processor.close()
        done.write_text(str(paths.root))
        return paths
    while True:
        size = folder_size(paths.root)
        if size >= target:
            processor.close()  # folds the ledger's write-ahead log in: measure the folder as it then is
            if folder_size(paths.root) >= target:
                break
            processor = builder.processor = new_processor(paths)
            size = folder_size(paths.root)
        builder.add(max(1, int((target - size) / (size / max(builder.agents, 1)) * 1.02) + 1))
        builder.flush()
    say(f"  built {paths.root.name}: {folder_size(paths.root) / 1e6:.1f} MB in {time.perf_counter() - t0:.0f} s "
        f"({builder.agents} agents; knowledge-graph.json {paths.kg_json.stat().st_size / 1e6:.1f} MB)")
    done.write_text(str(paths.root))
    return paths


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def get(port: int, path: str) -> bytes:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    try:
        connection.request("GET", path)
        response = connection.getresponse()
        body = response.read()
        assert response.status == 200, (path, response.status, body[:300])
        return body
    finally:
        connection.close()


def first_stream_message(port: int, sid: str) -> None:
    with socket.create_connection(("127.0.0.1", port), timeout=120) as sock:
        sock.sendall(f"GET /api/sessions/{sid}/stream HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
        seen = b""
        while b"event: hello" not in seen:
            chunk = sock.recv(65536)
            assert chunk, "the stream closed"
            seen += chunk


def open_page(port: int, sid: str) -> float:
    t0 = time.perf_counter()
    get(port, "/")
    for path in STATIC:
        get(port, path)
    get(port, f"/api/sessions/{sid}/overview")
    get(port, f"/api/sessions/{sid}/summary")
    first_stream_message(port, sid)
    get(port, f"/api/sessions/{sid}/events?count=200")
    return time.perf_counter() - t0


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def browser_open(port: int, sid: str, runs: int) -> list[float]:
    sys.path.insert(0, str(REPO))  # the headless browser the tests use (tests/browser.py), not a benchmark script
    from tests.browser import Browser

    profile = Path(tempfile.mkdtemp())
    browser = Browser(profile, 1280, 900)
    times = []
    try:
        for _ in range(runs):
            browser.go("about:blank")
            t0 = time.perf_counter()
            browser.go(f"http://127.0.0.1:{port}/#/s/{sid}/timeline")
            browser.wait("document.querySelector('#timeline li') && document.querySelector('#overview')",
                         "the timeline", timeout=120)
            times.append(time.perf_counter() - t0)
    finally:
        browser.close()
        shutil.rmtree(profile, ignore_errors=True)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size-mb", type=int, default=50)
    parser.add_argument("--graph", action="store_true", help="size knowledge-graph.json, not the folder")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--workdir", type=Path)
    parser.add_argument("--browser", action="store_true", help="also time the page in headless Chromium")
    args = parser.parse_args()
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="bench-viewer-"))
    workdir.mkdir(parents=True, exist_ok=True)
    say(f"cpus {os.cpu_count()}, load average {os.getloadavg()[0]:.2f}")
    paths = build(workdir, args.size_mb, args.graph)
    sid = paths.root.name
    say(f"session folder {folder_size(paths.root) / 1e6:.1f} MB: knowledge-graph.json "
        f"{paths.kg_json.stat().st_size / 1e6:.1f} MB, events.jsonl {paths.events.stat().st_size / 1e6:.1f} MB")
    port = free_port()
    env = {**os.environ, "XDG_CACHE_HOME": str(workdir / "cache")}
    launched = time.perf_counter()
    server = subprocess.Popen([sys.executable, "-m", "orchestrator.cli", "--sessions-dir", str(paths.root.parent),
                               "view", sid, "--no-browser", "--port", str(port)], stdout=subprocess.PIPE, env=env)
    try:
        assert server.stdout is not None
        server.stdout.readline()  # the address: it is listening
        before = cpu_seconds(server.pid)
        cold = open_page(port, sid)
        cold_cpu = cpu_seconds(server.pid) - before
        end_to_end = time.perf_counter() - launched
        warm = [open_page(port, sid) for _ in range(args.runs)]
        say(f"open the session page: cold {cold * 1000:.0f} ms (viewer CPU {cold_cpu * 1000:.0f} ms), "
            f"warm median {statistics.median(warm) * 1000:.0f} ms over {args.runs} "
            f"(target: cold < 1000 ms) -> {'met' if cold < 1.0 else 'MISSED'}")
        say(f"from the command typed to the page complete (start-up included): {end_to_end * 1000:.0f} ms")
        if args.browser:
            shown = browser_open(port, sid, args.runs)
            say(f"in headless Chromium, navigation to the timeline drawn: first {shown[0] * 1000:.0f} ms, "
                f"median {statistics.median(shown) * 1000:.0f} ms")
        say(f"load average now {os.getloadavg()[0]:.2f}")
    finally:
        server.terminate()
        server.wait(timeout=30)
        if not args.workdir:
            shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
