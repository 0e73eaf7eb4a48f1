"""What the viewer must never do with a session someone tampered with or damaged: trust it, hang on it,
contradict `status` about it, or let one bad file take down pages that do not need it.

One small merged session is built once; each test works on its own copy, served by a real uvicorn.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from orchestrator.model.layout import SessionPaths
from tests.conftest import merge_pending, sample_claim, sample_source, store_text, write_artifacts
from tests.helpers.viewer import Served, folder_digest, served

TEXT = "Merging is hard when two agents disagree about the same entity."


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A session: `researcher` merged (C1 verified, C2 not: its snippet is nowhere in the text), `critic` rejected."""
    from orchestrator.session.record import create_session

    paths = create_session(tmp_path_factory.mktemp("trust-base") / "sessions", "who merges what")
    sha = store_text(paths, TEXT)
    write_artifacts(paths, "researcher", {
        "sources.json": {"sources": [sample_source("S1", content_sha256=sha)]},
        "claims.json": {"claims": [sample_claim("C1", snippet="two agents disagree about the same entity"),
                                   sample_claim("C2", snippet="words that are nowhere in the source text")]}})
    write_artifacts(paths, "critic", {"claims.json": {"claims": [{"id": "bad id with spaces"}]}})
    assert merge_pending(paths) == {"critic": "rejected", "researcher": "merged"}
    return paths.root


@pytest.fixture(scope="module")
def sessions(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("trust") / "sessions"


@pytest.fixture(scope="module")
def server(sessions: Path) -> Iterator[Served]:
    sessions.mkdir(exist_ok=True)
    with served(sessions) as running:
        yield running


def copy(base: Path, sessions: Path, name: str) -> SessionPaths:
    target = sessions / name
    shutil.copytree(base, target, symlinks=True)
    return SessionPaths(target)


def claim_of(graph: dict[str, Any], suffix: str) -> dict[str, Any]:
    return next(c for c in graph["claims"] if c["id"].endswith(suffix))


def turn_verified(paths: SessionPaths) -> str:
    """Edit knowledge-graph.json as someone with write access could: the failed claim C2 turned verified."""
    graph = json.loads(paths.kg_json.read_text())
    for claims in (graph["claims"], *(v["claims"] for v in graph.values() if isinstance(v, dict) and "claims" in v)):
        for claim in claims:
            if claim["id"].endswith("C2"):
                check = claim["evidence"][0].setdefault("verification", {})
                check.update(verified=True, score=100.0)
                check.pop("reason", None)
    paths.kg_json.write_text(json.dumps(graph))
    return str(claim_of(graph, "C2")["id"])


def error_of(server: Served, path: str, status: int = 409) -> str:
    got, _, body = server.get(path)
    assert got == status, (path, got, body[:300])
    return str(json.loads(body)["error"])


# -- 1. a view the ledger does not vouch for is never presented as validated ------------------------
@pytest.mark.parametrize("damage", ["edited", "ledger deleted", "ledger replaced", "text altered", "no views row"])
def test_a_view_nothing_vouches_for_is_not_presented_as_validated(server: Served, base: Path, sessions: Path,
                                                                  damage: str) -> None:
    paths = copy(base, sessions, f"tamper-{damage.replace(' ', '-')}")
    sid = paths.root.name
    c2 = claim_of(json.loads(paths.kg_json.read_text()), "C2")["id"]
    assert server.json(f"/api/sessions/{sid}/claim?id={c2}")["evidence"][0]["verified"] is False
    assert server.get(f"/api/sessions/{sid}/report")[0] == 200  # vouched for: the report is shown
    if damage == "text altered":  # the view is as written, but the text its evidence was verified against is not
        text = next(paths.sources.iterdir())
        text.write_text(TEXT.replace("disagree", "agree"))
        c2 = claim_of(json.loads(paths.kg_json.read_text()), "C1")["id"]
    else:
        turn_verified(paths)
    if damage == "ledger deleted":
        shutil.rmtree(paths.state)
    elif damage == "ledger replaced":
        paths.store_db.write_bytes(os.urandom(8192))
    elif damage == "no views row":  # a view the ledger never recorded (its rows removed, or an older version)
        import sqlite3

        with sqlite3.connect(paths.store_db) as db:
            db.execute("DELETE FROM derived WHERE kind = 'views'")
        db.close()
    before = folder_digest(paths.root)
    warning = server.json(f"/api/sessions/{sid}/overview")["graph_warning"]
    assert warning and "knowledge-graph.json" in warning
    expected = {"edited": "edited or replaced", "ledger deleted": "is missing",
                "ledger replaced": "not a readable SQLite database", "text altered": "stored text(s) sources/",
                "no views row": "a view the ledger never recorded"}[damage]
    assert expected in warning
    refused = error_of(server, f"/api/sessions/{sid}/report")
    assert refused.startswith("The report is not shown") and f"cconductor status {sid}" in refused
    claim = server.json(f"/api/sessions/{sid}/claim?id={c2}")
    assert claim["graph_warning"] == warning
    assert claim["evidence"][0]["verified"] is False and claim["evidence"][0]["verified_in_view"] is True
    for path in (f"/api/sessions/{sid}/summary", f"/api/sessions/{sid}/graph?kind=claims",
                 f"/api/sessions/{sid}/node?id={c2}"):
        assert server.json(path)["graph_warning"] == warning, path
    assert folder_digest(paths.root) == before  # refused and flagged, never repaired: the viewer writes nothing
    if damage in ("edited", "text altered", "no views row"):  # as `status` does: rebuilt from the ledger, then trusted
        from orchestrator.commit.committed import read_committed

        read_committed(paths)
        assert server.json(f"/api/sessions/{sid}/overview")["graph_warning"] is None
        assert server.json(f"/api/sessions/{sid}/claim?id={c2}")["evidence"][0]["verified"] is False
        assert server.get(f"/api/sessions/{sid}/report")[0] == 200


def test_a_session_with_nothing_merged_is_not_flagged(server: Served, sessions: Path) -> None:
    from orchestrator.session.record import create_session

    paths = create_session(sessions, "nothing yet")
    assert server.json(f"/api/sessions/{paths.root.name}/overview")["graph_warning"] is None
    assert server.json(f"/api/sessions/{paths.root.name}/report")["empty"] is True


# -- 2. a file that is not a regular file: a clear 409 at once, never a hang ------------------------
def test_a_fifo_never_blocks_a_request_nor_the_viewer(server: Served, base: Path, sessions: Path) -> None:
    paths = copy(base, sessions, "fifo")
    sid = paths.root.name
    paths.events.unlink()
    os.mkfifo(paths.events)
    started = time.monotonic()
    with ThreadPoolExecutor(max_workers=16) as pool:  # more blocked requests than the thread pool has threads
        answers = list(pool.map(lambda _: server.get(f"/api/sessions/{sid}/events"), range(60)))
    assert time.monotonic() - started < 30
    assert {status for status, _, _ in answers} == {409}
    assert b"events.jsonl is not a regular file (a FIFO" in answers[0][2]
    assert error_of(server, f"/api/sessions/{sid}/stream").startswith("events.jsonl is not a regular file")
    agents = server.json(f"/api/sessions/{sid}/agents")  # the agents as session.json and the locks show them
    assert {a["agent"] for a in agents["agents"]} >= {"researcher", "critic"}
    assert [n["file"] for n in agents["damaged"]] == ["events.jsonl"]
    assert server.get("/api/sessions")[0] == 200  # the viewer still answers
    for name in ("quality.json", "critic.retry-instructions.json"):  # every other file the viewer opens
        target = paths.root / name
        target.unlink(missing_ok=True)
        os.mkfifo(target)
    overview = server.json(f"/api/sessions/{sid}/overview")
    assert "quality.json is not a regular file" in json.dumps(overview["damaged"])
    detail = server.json(f"/api/sessions/{sid}/agent?name=critic")
    assert "not a regular file" in detail["retry_instructions"]["unreadable"]
    sha = next(paths.sources.iterdir())
    sha.unlink()
    os.mkfifo(sha)
    c1 = claim_of(json.loads(paths.kg_json.read_text()), "C1")["id"]
    assert server.json(f"/api/sessions/{sid}/claim?id={c1}")["evidence"][0]["passage"]["has_text"] is False


@pytest.mark.parametrize("kind", ["folder", "link"])
def test_events_that_are_a_folder_or_a_link_are_said_to_be(server: Served, base: Path, sessions: Path,
                                                           kind: str) -> None:
    paths = copy(base, sessions, f"events-{kind}")
    paths.events.unlink()
    if kind == "folder":
        paths.events.mkdir()
    else:
        (paths.root / "elsewhere.jsonl").write_text("")
        paths.events.symlink_to(paths.root / "elsewhere.jsonl")
    message = error_of(server, f"/api/sessions/{paths.root.name}/events")
    assert message.startswith("events.jsonl is a folder, not a file" if kind == "folder"
                              else "events.jsonl is a symbolic link; links are not followed")
    assert "replace" in message or "remove the folder" in message


def test_a_linked_session_json_is_said_to_be_a_link(server: Served, base: Path, sessions: Path) -> None:
    paths = copy(base, sessions, "linked-marker")
    (paths.root / "record.json").write_bytes(paths.session_json.read_bytes())
    paths.session_json.unlink()
    paths.session_json.symlink_to(paths.root / "record.json")
    message = error_of(server, "/api/sessions/linked-marker/overview")
    assert "session.json is a symbolic link" in message and "no session.json" not in message
    row = next(r for r in server.json("/api/sessions")["sessions"] if r["id"] == "linked-marker")
    assert row["status"] == "unreadable" and "symbolic link" in row["query"]


# -- 3. a stale .kg.lock.error: the viewer agrees with `status` ----------------------------------
@pytest.mark.parametrize("kind", ["file", "folder"])
def test_a_stale_error_signal_is_not_a_rejection(server: Served, base: Path, sessions: Path, kind: str) -> None:
    from orchestrator.commit.inspection import session_status

    paths = copy(base, sessions, f"stale-{kind}")
    stale = paths.lock_error("researcher")
    if kind == "file":
        stale.touch()
    else:
        stale.mkdir()
        (stale / "left.txt").write_text("x")
    status = session_status(paths)
    agents = {a["agent"]: a for a in server.json(f"/api/sessions/{paths.root.name}/agents")["agents"]}
    assert status["locks_errored"] == ["critic"]
    assert agents["researcher"]["state"] == "merged" and agents["researcher"]["lock"] is None
    assert agents["critic"]["state"] == "rejected" and agents["critic"]["lock"] == "errored"
    assert server.json(f"/api/sessions/{paths.root.name}/overview")["locks_errored"] == status["locks_errored"]


# -- 4. a damaged file blocks only what needs it -------------------------------------------------
def test_a_damaged_quality_json_falls_back_to_the_computed_score(server: Served, base: Path, sessions: Path) -> None:
    paths = copy(base, sessions, "quality-nan")
    (paths.root / "quality.json").write_text('{"score": NaN}')
    sid = paths.root.name
    overview = server.json(f"/api/sessions/{sid}/overview")
    assert [n["file"] for n in overview["damaged"]] == ["quality.json"]
    assert "delete it" in overview["damaged"][0]["fix"]
    summary = server.json(f"/api/sessions/{sid}/summary")
    assert summary["quality"]["origin"].startswith("computed from the committed graph (quality.json cannot be read")
    assert isinstance(summary["quality"]["score"], (int, float))
    assert server.json(f"/api/sessions/{sid}/report")["damaged"][0]["file"] == "quality.json"


def test_a_truncated_session_json_does_not_block_the_graph_pages(server: Served, base: Path, sessions: Path) -> None:
    paths = copy(base, sessions, "session-cut")
    text = paths.session_json.read_text()
    paths.session_json.write_text(text[: len(text) // 2])
    sid = paths.root.name
    for page in ("overview", "summary", "report", "agents"):
        notes = server.json(f"/api/sessions/{sid}/{page}")["damaged"]
        assert [n["file"] for n in notes] == ["session.json"], page
        assert "cannot be shown" in notes[0]["problem"] and "restore it" in notes[0]["fix"]
    report = server.json(f"/api/sessions/{sid}/report")
    assert report["empty"] is False and report["sections"]
    row = next(r for r in server.json("/api/sessions")["sessions"] if r["id"] == sid)
    assert row["status"] == "unreadable"


# -- 5. the live stream of a deleted session ends ------------------------------------------------
def test_the_stream_of_a_deleted_session_says_gone_and_ends(server: Served, base: Path, sessions: Path) -> None:
    paths = copy(base, sessions, "deleted-live")
    with socket.create_connection(("127.0.0.1", server.port), timeout=20) as sock:
        sock.sendall(f"GET /api/sessions/deleted-live/stream HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n\r\n"
                     .encode())
        seen = b""
        while b"event: hello" not in seen:
            seen += sock.recv(65536)
        shutil.rmtree(paths.root)
        deadline = time.monotonic() + 15
        while not seen.endswith(b"0\r\n\r\n"):  # the chunked response's end: the server closed the stream
            assert time.monotonic() < deadline, seen[-300:]
            chunk = sock.recv(65536)
            if not chunk:
                break
            seen += chunk
    assert b"event: gone" in seen and b"no longer in" in seen


# -- 6. secrets of every common shape are redacted in what is served -----------------------------
SECRETS = ("sk-proj-" + "Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z" * 2, "AKIAIOSFODNN7EXAMPLE",
           "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8", "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz")


def test_no_secret_of_a_common_shape_reaches_a_page(server: Served, sessions: Path) -> None:
    from orchestrator.session.record import create_session

    paths = create_session(sessions, "leaky claims")
    text = "The deployment used the key " + " and ".join(SECRETS) + " for its storage bucket."
    sha = store_text(paths, text)
    write_artifacts(paths, "leaker", {
        "sources.json": {"sources": [sample_source("S1", content_sha256=sha, title=f"Notes {SECRETS[1]}")]},
        "claims.json": {"claims": [sample_claim("C1", snippet=" and ".join(SECRETS[:2]),
                                                statement=f"The key was {SECRETS[0]} ({SECRETS[2]}).")]}})
    assert merge_pending(paths) == {"leaker": "merged"}
    sid = paths.root.name
    c1 = json.loads(paths.kg_json.read_text())["claims"][0]["id"]
    for path in (f"/api/sessions/{sid}/claim?id={c1}", f"/api/sessions/{sid}/node?id={c1}",
                 f"/api/sessions/{sid}/graph?kind=sources", f"/api/sessions/{sid}/report",
                 f"/api/sessions/{sid}/events?count=50"):
        status, _, body = server.get(path)
        assert status == 200, path
        for secret in SECRETS:
            assert secret.encode() not in body, (path, secret)
    assert b"[REDACTED]" in server.get(f"/api/sessions/{sid}/claim?id={c1}")[2]


def test_requests_for_a_damaged_session_stay_fast(server: Served, base: Path, sessions: Path) -> None:
    """A damaged file is judged once per change, not re-read with pauses on every request."""
    paths = copy(base, sessions, "fast-damage")
    (paths.root / "quality.json").write_text("{")
    server.json(f"/api/sessions/{paths.root.name}/overview")
    started = time.monotonic()
    for _ in range(10):
        server.json(f"/api/sessions/{paths.root.name}/overview")
    assert time.monotonic() - started < 5  # 10 requests; each re-read with its pauses would cost 0.1 s more
