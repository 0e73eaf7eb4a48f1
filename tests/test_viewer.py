"""`cconductor view` over a real offline run: what the API shows, and what it must never do.

A real uvicorn serves the viewer in a thread; requests go over HTTP exactly as written (no
client-side normalisation), so traversal attempts reach the server as an attacker would send them.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from orchestrator.model.layout import SessionPaths
from tests.conftest import merge_pending, sample_claim, sample_source, store_text, write_artifacts
from tests.helpers.viewer import Served, folder_digest, served

FAKE_KEY = "sk-ant-api03-FAKEtestKEY0123456789abcdefXYZ"
ENV_KEY = "fake-env-key-0123456789-not-key-shaped"


@pytest.fixture(scope="module")
def sessions(viewed_run: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the run's sessions folder that this module may alter (the original stays pristine)."""
    folder = tmp_path_factory.mktemp("viewer-api") / "sessions"
    shutil.copytree(viewed_run.parent, folder, symlinks=True)
    return folder


@pytest.fixture(scope="module")
def server(sessions: Path) -> Iterator[Served]:
    with served(sessions) as running:
        yield running


@pytest.fixture(scope="module")
def sid(sessions: Path) -> str:
    return next(p.name for p in sessions.iterdir() if (p / "session.json").is_file())


def _graph(sessions: Path, sid: str) -> dict[str, Any]:
    return json.loads((sessions / sid / "knowledge-graph.json").read_text(encoding="utf-8"))


def test_the_session_list_and_overview_show_the_run(server: Served, sessions: Path, sid: str) -> None:
    rows = server.json("/api/sessions")["sessions"]
    assert [r["id"] for r in rows] == [sid]
    session = json.loads((sessions / sid / "session.json").read_text())
    assert rows[0]["status"] == session["status"] and rows[0]["query"] == session["query"]
    overview = server.json(f"/api/sessions/{sid}/overview")
    graph = _graph(sessions, sid)
    assert overview["stats"] == graph["stats"] and overview["commit_seq"] == graph["commit_seq"]
    quality = json.loads((sessions / sid / "quality.json").read_text())
    assert overview["recorded_score"] == quality["score"]
    summary = server.json(f"/api/sessions/{sid}/summary")
    assert summary["quality"]["score"] == quality["score"] and summary["quality"]["origin"] == "quality.json"
    assert [c["message"] for c in summary["quality"]["checks"]] == [c["message"] for c in quality["checks"]]
    # the growth curve ends at the graph's own counts
    last = summary["growth"][-1]
    assert (last["claims"], last["sources"], last["entities"]) == (
        len(graph["claims"]), len(graph["sources"]), len(graph["entities"]))
    assert [p["seq"] for p in summary["growth"]] == sorted(p["seq"] for p in summary["growth"])


def test_every_agent_is_listed_with_its_state_and_history(server: Served, sessions: Path, sid: str) -> None:
    session = json.loads((sessions / sid / "session.json").read_text())
    rows = {r["agent"]: r for r in server.json(f"/api/sessions/{sid}/agents")["agents"]}
    assert set(rows) == set(session["agents"])
    for name, info in session["agents"].items():
        assert rows[name]["state"] == info["state"] and rows[name]["attempts"] == info["attempts"]
    detail = server.json(f"/api/sessions/{sid}/agent?name=pdf-analyzer")
    assert [h["type"] for h in detail["history"]][-1] == "merge.committed"
    assert server.get(f"/api/sessions/{sid}/agent?name=no-such-agent")[0] == 404


def test_the_report_cites_claims_whose_passage_and_page_are_shown(server: Served, sessions: Path, sid: str) -> None:
    document = server.json(f"/api/sessions/{sid}/report")
    assert document["title"] and document["sections"]
    cites = [part for section in document["sections"] for block in section["blocks"]
             for part in _parts(block) if part["t"] == "cite"]
    cited = {claim for part in cites for claim in part["claims"]}
    assert len(cited) >= 5
    claims = {c["id"]: c for c in _graph(sessions, sid)["claims"]}
    located = 0
    for claim_id in sorted(cited):
        detail = server.json(f"/api/sessions/{sid}/claim?id={claim_id}")
        assert detail["claim"]["statement"] == claims[claim_id]["statement"]
        for item, evidence in zip(detail["evidence"], claims[claim_id]["evidence"], strict=True):
            passage = item["passage"]
            if not evidence["verification"]["verified"]:
                continue
            start, end = passage["highlight"]
            assert passage["page_text"][start:end] == evidence["verification"]["matched_text"]
            assert passage["page"] == evidence["verification"]["page"]
            assert item["page_view"], item["no_page_view"]
            page = server.json(item["page_view"])
            assert page["page"] == passage["page"] and page["image"]
            for mark in page["marks"]:
                assert mark["kind"] == "passage"
                assert all(0 <= v <= 1 for rect in mark["rects"] for v in rect)
                assert all(r[0] < r[2] and r[1] < r[3] for r in mark["rects"])
            located += bool(page["marks"])
    assert located >= len(cited) - 1, "the quoted passages should be found in the PDFs' text layer"


def _parts(block: dict[str, Any]) -> list[dict[str, Any]]:
    if block["t"] == "para":
        return block["line"]
    if block["t"] == "bullets":
        return [p for lines in block["items"] for line in lines for p in line]
    if block["t"] == "table":
        return [p for row in block["rows"] for cell in row for p in cell]
    return [p for entry in block["entries"] for p in entry["line"]]


def test_a_page_image_is_a_png_cached_outside_the_session(server: Served, sessions: Path, sid: str) -> None:
    graph = _graph(sessions, sid)
    claim = next(c for c in graph["claims"] if c["evidence"][0]["verification"]["verified"])
    page = server.json(f"/api/sessions/{sid}/page?claim={claim['id']}&evidence=0")
    status, headers, body = server.get(page["image"])
    assert status == 200 and headers["content-type"] == "image/png" and body[:8] == b"\x89PNG\r\n\x1a\n"
    width = int.from_bytes(body[16:20], "big")
    assert 500 < width < 2000
    cache = Path(os.environ["XDG_CACHE_HOME"]) / "cconductor" / "viewer" / "pages"
    assert any(p.read_bytes() == body for p in cache.glob("*.png"))
    assert server.get(page["image"].replace(f"page={page['page']}", "page=999"))[0] == 404


def test_other_host_headers_are_refused(server: Served, sid: str) -> None:
    for host in ("evil.example", f"evil.example:{server.port}", f"127.0.0.1.evil.example:{server.port}", ""):
        status, _, body = server.get(f"/api/sessions/{sid}/overview", host=host)
        assert status == 400, host
        assert b"query" not in body
    for host in (f"127.0.0.1:{server.port}", f"localhost:{server.port}"):
        assert server.get("/api/sessions", host=host)[0] == 200


@pytest.mark.parametrize("path", [
    "/api/sessions/../overview", "/api/sessions/%2e%2e/overview", "/api/sessions/%2E%2E%2F%2E%2E%2Fetc/overview",
    "/api/sessions/..%2f..%2fetc/overview", "/api/sessions/.cconductor/overview", "/api/sessions/%00/overview",
    "/static/../app.py", "/static/%2e%2e/app.py", "/static/..%2fapp.py", "/static/%2e%2e%2f%2e%2e%2fpyproject.toml",
    "/static//etc/passwd", "/api/sessions/%2fetc/overview",
])
def test_url_paths_never_leave_the_sessions_folder(server: Served, path: str) -> None:
    status, _, body = server.get(path)
    assert status in (400, 404), (path, status)
    assert b"import" not in body and b"root:" not in body and b"[project]" not in body


def test_links_are_not_followed(server: Served, sessions: Path, sid: str, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere"
    shutil.copytree(sessions / sid, outside / "secret-session", symlinks=True)
    (sessions / "linked-session").symlink_to(outside / "secret-session", target_is_directory=True)
    try:
        assert "linked-session" not in [r["id"] for r in server.json("/api/sessions")["sessions"]]
        assert server.get("/api/sessions/linked-session/overview")[0] == 404
    finally:
        (sessions / "linked-session").unlink()
    # a stored source text replaced by a link to a file outside the session is not read
    copy = sessions / "with-link"
    shutil.copytree(sessions / sid, copy, symlinks=True)
    try:
        claim = _graph(sessions, sid)["claims"][0]
        sha = claim["evidence"][0]["verification"]["text_sha256"]
        private = tmp_path / "private.txt"
        private.write_text("PRIVATE-MARKER " * 100)
        (copy / "sources" / f"{sha}.txt").unlink()
        (copy / "sources" / f"{sha}.txt").symlink_to(private)
        detail = server.json(f"/api/sessions/with-link/claim?id={claim['id']}")
        assert "PRIVATE-MARKER" not in json.dumps(detail)
        assert detail["evidence"][0]["passage"]["has_text"] is False
    finally:
        shutil.rmtree(copy)


def test_no_secret_reaches_a_page(server: Served, sessions: Path, sid: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", ENV_KEY)
    copy = sessions / "leaky"
    shutil.copytree(sessions / sid, copy, symlinks=True)
    try:
        leak = {"timestamp": "2026-01-01T00:00:00.000Z", "type": "merge.rejected",
                "message": f"bad-agent: key {FAKE_KEY} and {ENV_KEY} leaked",
                "data": {"agent": "bad-agent", "attempt": 1, "problems": [
                    {"file": "x.json", "pointer": "", "rule": "r", "message": f"x-api-key: {ENV_KEY}",
                     "hint": FAKE_KEY}]}}
        with (copy / "events.jsonl").open("a") as handle:
            handle.write(json.dumps(leak) + "\n")
        (copy / "bad-agent.kg.lock.error").touch()
        (copy / "bad-agent.retry-instructions.json").write_text(json.dumps(
            {"agent": "bad-agent", "action_required": f"use {FAKE_KEY}", "files": []}))
        session = json.loads((copy / "session.json").read_text())
        session["query"] = f"what is {ENV_KEY}?"
        (copy / "session.json").write_text(json.dumps(session))
        bodies = [server.get(path)[2] for path in (
            "/api/sessions", "/api/sessions/leaky/overview", "/api/sessions/leaky/events?count=5",
            "/api/sessions/leaky/summary",
            "/api/sessions/leaky/agents", "/api/sessions/leaky/agent?name=bad-agent", "/api/sessions/leaky/report")]
        bodies.append(_stream(server, "/api/sessions/leaky/stream?from=0", b"leaked"))
        for body in bodies:
            assert FAKE_KEY.encode() not in body and ENV_KEY.encode() not in body
        assert all(b"[REDACTED]" in bodies[i] for i in (1, 2, 4, 5))  # overview, events, agents, agent
    finally:
        shutil.rmtree(copy)


def _stream(server: Served, path: str, until: bytes, timeout: float = 20) -> bytes:
    """Read a server-sent event stream until ``until`` appears (or fail)."""
    with socket.create_connection(("127.0.0.1", server.port), timeout=timeout) as sock:
        sock.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n\r\n".encode())
        seen = b""
        deadline = time.monotonic() + timeout
        while until not in seen:
            assert time.monotonic() < deadline, f"{until!r} did not arrive: {seen[-500:]!r}"
            seen += sock.recv(65536)
        return seen


def test_reading_writes_nothing_and_takes_no_lock(server: Served, sessions: Path, sid: str,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    import filelock

    def refuse(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("the viewer took a file lock")

    before = folder_digest(sessions / sid)
    monkeypatch.setattr(filelock.BaseFileLock, "acquire", refuse)
    graph = _graph(sessions, sid)
    paths = ["/api/sessions", f"/api/sessions/{sid}/overview", f"/api/sessions/{sid}/summary",
             f"/api/sessions/{sid}/agents",
             f"/api/sessions/{sid}/events", f"/api/sessions/{sid}/report", f"/api/sessions/{sid}/graph?kind=sources",
             f"/api/sessions/{sid}/node?id={graph['claims'][0]['id']}", f"/api/sessions/{sid}/agent?name=fact-checker",
             f"/api/sessions/{sid}/claim?id={graph['claims'][0]['id']}",
             f"/api/sessions/{sid}/page?claim={graph['claims'][0]['id']}&evidence=0", "/", "/static/app.js"]
    for path in paths:
        assert server.get(path)[0] == 200, path
    _stream(server, f"/api/sessions/{sid}/stream?from=0", b"run.finished")
    assert folder_digest(sessions / sid) == before


def test_pages_get_a_strict_content_security_policy(server: Served) -> None:
    status, headers, body = server.get("/")
    assert status == 200 and b'<script type="module" src="/static/app.js">' in body
    assert "script-src 'self'" in headers["content-security-policy"]
    assert "default-src 'none'" in headers["content-security-policy"]
    assert headers["x-content-type-options"] == "nosniff"
    for name in ("app.js", "dom.js", "views.js", "graph.js", "evidence.js"):
        assert b"innerHTML" not in server.get(f"/static/{name}")[2], f"{name} must build the DOM from text"


def test_the_graph_explorer_filters_by_agent_and_shows_provenance(server: Served, sessions: Path, sid: str) -> None:
    graph = _graph(sessions, sid)
    listing = server.json(f"/api/sessions/{sid}/graph?kind=claims&agent=web-researcher-i1-1")
    assert listing["total"] == sum(1 for c in graph["claims"] if c["provenance"]["agent"] == "web-researcher-i1-1")
    assert listing["total"] > 0 and all(r["agents"] == ["web-researcher-i1-1"] for r in listing["items"])
    claim = listing["items"][0]["id"]
    node = server.json(f"/api/sessions/{sid}/node?id={claim}")
    assert node["item"]["provenance"]["file"].startswith("artifacts/web-researcher-i1-1/")
    assert {"cites source", "about entity"} <= {n["relation"] for n in node["neighbours"]}
    source = next(n["id"] for n in node["neighbours"] if n["relation"] == "cites source")
    back = server.json(f"/api/sessions/{sid}/node?id={source}")
    assert claim in {n["id"] for n in back["neighbours"] if n["relation"] == "cited by claim"}
    assert server.json(f"/api/sessions/{sid}/graph?kind=claims&q=faithfulness")["total"] > 0


def test_a_line_being_written_is_never_shown_half(tmp_path: Path) -> None:
    sessions = tmp_path / "sessions"
    from orchestrator.session.record import create_session

    paths = create_session(sessions, "half lines")
    whole = json.dumps({"timestamp": "t", "type": "merge.committed", "message": "whole", "data": {}}) + "\n"
    half = json.dumps({"timestamp": "t", "type": "merge.committed", "message": "second", "data": {}})
    paths.events.write_text(whole + half[:25])
    with served(sessions) as server:
        shown = server.json(f"/api/sessions/{paths.root.name}/events")
        assert [e["message"] for e in shown["events"]] == ["whole"]
        collected: list[bytes] = []
        reader = threading.Thread(target=lambda: collected.append(
            _stream(server, f"/api/sessions/{paths.root.name}/stream?from={shown['end']}", b"second")))
        reader.start()
        time.sleep(0.6)
        with paths.events.open("a") as handle:
            handle.write(half[25:] + "\n")
        reader.join(20)
        assert collected and b'"message":"second"' in collected[0]
        assert b'"message":"whole"' not in collected[0]  # it continued where the page stopped


def test_a_damaged_view_keeps_the_last_complete_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    sessions = tmp_path / "sessions"
    from orchestrator.session.record import create_session

    paths = create_session(sessions, "damaged view")
    sha = store_text(paths, "Merging is hard when two agents disagree about the same entity.")
    write_artifacts(paths, "researcher", {
        "sources.json": {"sources": [sample_source("S1", content_sha256=sha)]},
        "claims.json": {"claims": [sample_claim("C1", snippet="two agents disagree about the same entity")]}})
    assert merge_pending(paths) == {"researcher": "merged"}
    with served(sessions) as server:
        good = server.json(f"/api/sessions/{paths.root.name}/overview")
        assert good["stats"]["claims_count"] == 1
        text = paths.kg_json.read_text()
        paths.kg_json.write_text(text[: len(text) // 2])  # a writer that does not replace atomically
        again = server.json(f"/api/sessions/{paths.root.name}/overview")
        assert again["stats"] == good["stats"]
    from orchestrator.viewer import state
    from orchestrator.viewer.files import JsonCache

    monkeypatch.setattr(state, "CACHE", JsonCache())  # a viewer started now has no complete version to show
    with served(sessions) as fresh:  # nothing complete to fall back on: a clear error, not half a graph
        status, _, body = fresh.get(f"/api/sessions/{paths.root.name}/graph")
        assert status == 409 and b"knowledge-graph.json cannot be shown" in body
        header = fresh.json(f"/api/sessions/{paths.root.name}/overview")  # the header needs no graph: a note
        assert header["stats"] == {} and header["damaged"][0]["file"] == "knowledge-graph.json"
        assert f"cconductor status {paths.root.name}" in header["damaged"][0]["fix"]


def test_a_view_the_ledger_does_not_vouch_for_is_flagged_not_trusted(tmp_path: Path) -> None:
    """An edited knowledge-graph.json (a claim turned verified by hand) is shown with a warning that says how to
    rebuild it; the viewer itself writes nothing, and the warning goes once the view is rebuilt."""
    sessions = tmp_path / "sessions"
    from orchestrator.commit.committed import read_committed
    from orchestrator.session.record import create_session

    paths = create_session(sessions, "edited view")
    sha = store_text(paths, "Merging is hard when two agents disagree about the same entity.")
    write_artifacts(paths, "researcher", {
        "sources.json": {"sources": [sample_source("S1", content_sha256=sha)]},
        "claims.json": {"claims": [sample_claim("C1", snippet="two agents disagree about the same entity"),
                                   sample_claim("C2", snippet="words that are nowhere in the source text")]}})
    assert merge_pending(paths) == {"researcher": "merged"}
    with served(sessions) as server:
        assert server.json(f"/api/sessions/{paths.root.name}/overview")["graph_warning"] is None
        graph = json.loads(paths.kg_json.read_text())
        for claim in graph["claims"]:
            for evidence in claim["evidence"]:
                evidence.setdefault("verification", {})["verified"] = True
        paths.kg_json.write_text(json.dumps(graph))
        before = folder_digest(paths.root)
        warning = server.json(f"/api/sessions/{paths.root.name}/overview")["graph_warning"]
        assert warning and "knowledge-graph.json" in warning and f"cconductor status {paths.root.name}" in warning
        assert folder_digest(paths.root) == before  # flagged, not repaired: the viewer never writes
        read_committed(paths)  # what `status` does: the view is rebuilt from the ledger
        assert server.json(f"/api/sessions/{paths.root.name}/overview")["graph_warning"] is None


def test_the_stream_tells_of_merges_as_they_happen(tmp_path: Path) -> None:
    sessions = tmp_path / "sessions"
    from orchestrator.session.record import create_session

    paths = create_session(sessions, "live")
    sha = store_text(paths, "Sleep deprivation reduces working memory performance in adults.")
    with served(sessions) as server:
        got: list[bytes] = []
        reader = threading.Thread(target=lambda: got.append(
            _stream(server, f"/api/sessions/{paths.root.name}/stream", b'"parts":["graph"')))
        reader.start()
        time.sleep(0.6)
        write_artifacts(paths, "sleeper", {
            "sources.json": {"sources": [sample_source("S1", content_sha256=sha)]},
            "claims.json": {"claims": [sample_claim("C1", snippet="reduces working memory performance in adults")]}})
        assert merge_pending(SessionPaths(paths.root)) == {"sleeper": "merged"}
        reader.join(30)
        assert got and b"sleeper: attempt 1 merged as commit 1" in got[0]


def test_cli_view_serves_until_interrupted(viewed_run: Path, tmp_path: Path) -> None:
    env = {**os.environ, "CCONDUCTOR_SESSIONS_DIR": str(viewed_run.parent)}
    process = subprocess.Popen([sys.executable, "-m", "orchestrator.cli", "view", "latest", "--no-browser"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        line = process.stdout.readline() if process.stdout else ""
        assert line.startswith("cconductor viewer: http://127.0.0.1:"), line + (process.stderr.read() if
                                                                             process.stderr else "")
        url = line.split()[2]
        assert url.endswith(f"#/s/{viewed_run.name}")
        import urllib.request

        with urllib.request.urlopen(url.split("#")[0] + "api/sessions", timeout=30) as response:
            assert viewed_run.name in response.read().decode()
    finally:
        process.send_signal(2)
        _, err = process.communicate(timeout=30)
    assert process.returncode == 0 and "Traceback" not in err


def test_run_view_starts_and_stops_the_viewer_with_the_run(viewed_run: Path) -> None:
    from orchestrator.viewer.serve import BackgroundViewer

    viewer = BackgroundViewer(viewed_run)
    try:
        import urllib.request

        deadline = time.monotonic() + 30
        while True:
            try:
                with urllib.request.urlopen(viewer.url.split("#")[0] + f"api/sessions/{viewed_run.name}/overview",
                                            timeout=10) as response:
                    assert json.loads(response.read())["id"] == viewed_run.name
                break
            except OSError:
                assert time.monotonic() < deadline, "the run's viewer did not answer"
                time.sleep(0.2)
    finally:
        viewer.close()
    assert viewer.process.returncode is not None
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", viewer.address.port), timeout=2).close()


def test_contradictions_show_both_sides_and_what_they_cost(tmp_path: Path) -> None:
    from orchestrator.session.record import create_session
    from tests.test_contradictions import VACCINE_12, VACCINE_40, agent

    sessions = tmp_path / "sessions"
    paths = create_session(sessions, "Does the vaccine work?")
    agent(paths, "alpha", [VACCINE_40])
    agent(paths, "beta", [VACCINE_12])
    assert merge_pending(paths) == {"alpha": "merged", "beta": "merged"}
    with served(sessions) as server:
        summary = server.json(f"/api/sessions/{paths.root.name}/summary")
        [found] = summary["contradictions"]
        assert found["kind"] == "numeric" and found["status"] == "open" and found["counted"]
        assert [(s["claim_id"], s["value"], s["statement"], s["page"]) for s in found["sides"]] == [
            ("alpha:C1", "40%", VACCINE_40, 2), ("beta:C1", "12%", VACCINE_12, 2)]
        assert all(s["snippet"] for s in found["sides"])
        penalty = next(p for p in summary["quality"]["penalties"] if p["name"] == "contradictions")
        assert penalty["points"] == -3.0 and summary["quality"]["origin"].startswith("computed from the committed")
        listing = server.json(f"/api/sessions/{paths.root.name}/graph?kind=contradictions")
        assert listing["total"] == 1
        node = server.json(f"/api/sessions/{paths.root.name}/node?id={listing['items'][0]['id']}")
        assert {n["id"] for n in node["neighbours"] if n["relation"] == "side"} == {"alpha:C1", "beta:C1"}


def test_a_passage_is_found_in_a_text_layer_that_breaks_lines_differently() -> None:
    from orchestrator.viewer.pages import find_span, line_rects

    layer = "Results.\r\nThe eﬃcient al-\r\ngorithm reduced the error by 40 %\r\nin every trial. Other text."
    span = find_span(layer, "The efficient algorithm reduced the error by 40% in every trial.")
    assert span is not None and span[2] is True
    assert layer[span[0]:span[1]].startswith("The eﬃcient") and layer[span[0]:span[1]].endswith("trial.")
    close = find_span(layer, "The efficient algorithm reduced the errors by 40% in every trial")
    assert close is not None and close[2] is False  # one letter differs: found, marked as approximate
    assert find_span(layer, "Nothing of the sort appears on this page at all.") is None
    boxes = [(0.1, 0.10, 0.12, 0.12), (0.12, 0.10, 0.14, 0.12), None, (0.1, 0.13, 0.11, 0.15)]
    assert line_rects(boxes) == [(0.1, 0.10, 0.14, 0.12), (0.1, 0.13, 0.11, 0.15)]


def test_the_report_is_the_one_run_wrote(server: Served, sessions: Path, sid: str) -> None:
    import re

    written = (sessions / sid / "mission-report.md").read_text(encoding="utf-8")
    document = server.json(f"/api/sessions/{sid}/report")
    assert [s["heading"] for s in document["sections"]] == re.findall(r"^## (.+)$", written, flags=re.M)
    answer = next(s for s in document["sections"] if s["kind"] == "answer")
    labels = [p["v"] for b in answer["blocks"] for p in _parts(b) if p["t"] == "cite"]
    section = written.split("## ", 2)[1]
    assert labels and all(label in section for label in labels)
    assert [label for label in re.findall(r"\[\d+, pp?\. [^\]]+\]", section)] == labels


def test_resume_view_prints_the_viewer_and_stops_it_at_the_end(viewed_run: Path, tmp_path: Path) -> None:
    sessions = tmp_path / "sessions"
    shutil.copytree(viewed_run, sessions / viewed_run.name, symlinks=True)
    env = {**os.environ, "CCONDUCTOR_SESSIONS_DIR": str(sessions), "BROWSER": "true"}
    out = subprocess.run([sys.executable, "-m", "orchestrator.cli", "resume", viewed_run.name, "--view", "--json"],
                         capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    line = next(ln for ln in out.stderr.splitlines() if ln.startswith("viewer: "))
    assert line.endswith(f"/#/s/{viewed_run.name}") and "http://127.0.0.1:" in line
    assert all(json.loads(ln) for ln in out.stdout.splitlines())  # --json keeps stdout to JSON lines
    port = int(line.split("127.0.0.1:")[1].split("/")[0])
    with pytest.raises(OSError):  # the run's viewer ended with the run
        socket.create_connection(("127.0.0.1", port), timeout=2).close()


@pytest.mark.parametrize("size", [100, 3_000_000])  # hashed inline, and on a second thread while parsed
def test_the_json_cache_gives_the_digest_of_the_bytes_it_parsed(tmp_path: Path, size: int) -> None:
    import hashlib

    from orchestrator.session.record import create_session
    from orchestrator.viewer.files import JsonCache

    paths = create_session(tmp_path / "sessions", "digest")
    paths.kg_json.write_text(json.dumps({"claims": [], "padding": "x" * size}), encoding="utf-8")
    cache = JsonCache()
    value, sha = cache.load_with_sha256(paths, paths.kg_json)
    assert len(value["padding"]) == size and sha == hashlib.sha256(paths.kg_json.read_bytes()).hexdigest()
    assert cache.load_with_sha256(paths, paths.kg_json) == (value, sha)  # from the cache
    paths.kg_json.write_text(json.dumps({"claims": [1]}), encoding="utf-8")
    assert cache.load_with_sha256(paths, paths.kg_json)[1] == hashlib.sha256(paths.kg_json.read_bytes()).hexdigest()
    assert cache.load_with_sha256(paths, paths.root / "absent.json", {}) == ({}, None)


def test_the_summary_is_computed_once_per_change_and_warm_up_prepares_it(
        viewed_run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from orchestrator.viewer import overview

    sessions = tmp_path / "sessions"
    shutil.copytree(viewed_run.parent, sessions, symlinks=True)
    paths = SessionPaths(next(p for p in sessions.iterdir() if (p / "session.json").is_file()))
    computed: list[int] = []
    real_growth = overview.growth
    monkeypatch.setattr(overview, "growth", lambda *a: computed.append(1) or real_growth(*a))
    overview.warm_up(paths)
    first = overview.summary_of(paths)
    assert computed == [1] and overview.summary_of(paths) is first  # the page's request found it ready
    data = json.loads(paths.session_json.read_text(encoding="utf-8"))
    paths.session_json.write_text(json.dumps({**data, "iteration": 99}), encoding="utf-8")
    assert overview.summary_of(paths) is not first and computed == [1, 1]  # session.json changed: computed again
    paths.kg_json.write_text("{", encoding="utf-8")  # damaged: warm-up leaves the error to the page
    monkeypatch.setattr(overview.state, "CACHE", type(overview.state.CACHE)())
    overview.warm_up(paths)


def test_view_warms_up_the_session_it_opens(viewed_run: Path, tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """`cconductor view SESSION` reads and summarises it while the browser starts; the page then finds it ready."""
    from click.testing import CliRunner

    from orchestrator.cli import main
    from orchestrator.viewer import overview, serve

    sessions = tmp_path / "sessions"
    shutil.copytree(viewed_run.parent, sessions, symlinks=True)
    sid = next(p.name for p in sessions.iterdir() if (p / "session.json").is_file())
    asked: list[Any] = []
    monkeypatch.setattr(serve, "serve", lambda *args, **kwargs: asked.append(kwargs.get("session")))
    result = CliRunner().invoke(main, ["--sessions-dir", str(sessions), "view", sid, "--no-browser"])
    assert result.exit_code == 0, result.output
    assert asked == [sid]
    thread = serve.warm_up_in_background(sessions, sid)
    assert thread is not None
    thread.join(60)
    paths = SessionPaths(sessions / sid)
    assert overview._summaries[paths][2] is overview.summary_of(paths)
    assert serve.warm_up_in_background(sessions, "no-such-session") is None
