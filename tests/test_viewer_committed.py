"""Every page of the viewer counts evidence as the committed state does now, as `status`, `ask` and `export` do.

Two kinds of tampering, each checked on every endpoint that shows a count or a verified flag (overview,
summary, graph lists and word filter, node, claim): a stored text deleted or altered after its claims
merged (the view's bytes still vouched for), and a view edited by hand (a fake claim marked verified, a
failed one turned verified). One small merged session is built once; each test works on its own copy.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from orchestrator.model.layout import SessionPaths
from tests.conftest import merge_pending, sample_claim, sample_source, store_text, write_artifacts
from tests.helpers.viewer import Served, folder_digest, served

TEXT = "Merging is hard when two agents disagree about the same entity. Lisbon is the capital of Portugal."
FAKE = "Lisbon is the capital of Spain."


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """researcher merged: C1 and C3 verified against the one stored text, C2 not (its snippet is nowhere)."""
    from orchestrator.session.record import create_session

    paths = create_session(tmp_path_factory.mktemp("committed-base") / "sessions", "who merges what")
    sha = store_text(paths, TEXT)
    write_artifacts(paths, "researcher", {
        "sources.json": {"sources": [sample_source("S1", content_sha256=sha)]},
        "claims.json": {"claims": [sample_claim("C1", snippet="two agents disagree about the same entity"),
                                   sample_claim("C2", snippet="words that are nowhere in the source text"),
                                   sample_claim("C3", statement="Lisbon is the capital of Portugal.",
                                                snippet="Lisbon is the capital of Portugal")]}})
    assert merge_pending(paths) == {"researcher": "merged"}
    # quality.json as a run writes it after the round: scored when all evidence was there
    (paths.root / "quality.json").write_text(json.dumps({
        "score": 99.0, "computed_at": "2999-01-01T00:00:00+00:00",
        "components": {"evidence_verification": 100.0},
        "breakdown": [{"name": "evidence_verification", "score": 100.0,
                       "detail": "3 of 3 evidence snippets verified against source texts"}]}))
    return paths.root


@pytest.fixture(scope="module")
def sessions(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("committed") / "sessions"
    folder.mkdir()
    return folder


@pytest.fixture(scope="module")
def server(sessions: Path) -> Iterator[Served]:
    with served(sessions) as running:
        yield running


def copy(base: Path, sessions: Path, name: str) -> SessionPaths:
    target = sessions / name
    shutil.copytree(base, target, symlinks=True)
    return SessionPaths(target)


def ids(paths: SessionPaths) -> dict[str, str]:
    return {c["id"].rsplit(":", 1)[-1]: c["id"] for c in json.loads(paths.kg_json.read_text())["claims"]}


def verified_rows(server: Served, sid: str, query: str = "") -> dict[str, bool]:
    listed = server.json(f"/api/sessions/{sid}/graph?kind=claims{'&q=' + query if query else ''}")
    return {row["id"].rsplit(":", 1)[-1]: row["verified"] for row in listed["items"]}


def evidence_component(server: Served, sid: str) -> dict[str, Any]:
    quality = server.json(f"/api/sessions/{sid}/summary")["quality"]
    assert quality["origin"].startswith("computed from the committed graph"), quality["origin"]
    return next(c for c in quality["breakdown"] if c["name"] == "evidence_verification")


def node_verified(server: Served, sid: str, claim_id: str) -> bool:
    item = server.json(f"/api/sessions/{sid}/node?id={claim_id}")["item"]
    return any((e.get("verification") or {}).get("verified") is True for e in item["evidence"])


def test_untampered_the_view_is_shown_as_it_is(server: Served, base: Path, sessions: Path) -> None:
    paths = copy(base, sessions, "intact")
    sid, claim = paths.root.name, ids(paths)
    assert server.json(f"/api/sessions/{sid}/overview")["stats"]["evidence_verified"] == 2
    assert verified_rows(server, sid) == {"C1": True, "C2": False, "C3": True}
    assert server.json(f"/api/sessions/{sid}/summary")["quality"]["origin"] == "quality.json"
    assert server.json(f"/api/sessions/{sid}/claim?id={claim['C1']}")["evidence"][0]["verified"] is True


@pytest.mark.parametrize("damage", ["deleted", "altered"])
def test_a_stored_text_changed_after_merging_stops_counting_everywhere(server: Served, base: Path, sessions: Path,
                                                                      damage: str) -> None:
    paths = copy(base, sessions, f"text-{damage}")
    sid, claim = paths.root.name, ids(paths)
    for text in paths.sources.glob("*.txt"):
        if damage == "deleted":
            text.unlink()
        else:
            text.write_text(TEXT.replace("disagree", "agree"))
    before = folder_digest(paths.root)
    overview = server.json(f"/api/sessions/{sid}/overview")
    assert "stored text(s) sources/" in overview["graph_warning"]
    assert overview["stats"]["evidence_verified"] == 0 and overview["stats"]["evidence_items"] == 3
    component = evidence_component(server, sid)
    assert component["score"] == 0.0 and component["detail"].startswith("0 of 3"), component
    assert server.json(f"/api/sessions/{sid}/summary")["graph_warning"] == overview["graph_warning"]
    assert verified_rows(server, sid) == {"C1": False, "C2": False, "C3": False}
    assert verified_rows(server, sid, "Lisbon") == {"C3": False}
    for name in ("C1", "C3"):
        assert node_verified(server, sid, claim[name]) is False
        detail = server.json(f"/api/sessions/{sid}/claim?id={claim[name]}")
        assert detail["evidence"][0]["verified"] is False and detail["evidence"][0]["verified_in_view"] is True
        assert detail["graph_warning"] == overview["graph_warning"]
    assert folder_digest(paths.root) == before  # counted again in memory: the viewer writes nothing
    from orchestrator.commit.committed import read_committed  # `status` agrees, and then the view is trusted

    graph = read_committed(paths).graph
    assert graph["stats"]["evidence_verified"] == 0
    assert server.json(f"/api/sessions/{sid}/overview")["graph_warning"] is None
    assert verified_rows(server, sid) == {"C1": False, "C2": False, "C3": False}


def add_fake_claim(paths: SessionPaths) -> str:
    """Edit knowledge-graph.json as anyone who can write the folder could: a claim never merged, marked verified,
    and the failed C2 turned verified, with the stats to match."""
    graph = json.loads(paths.kg_json.read_text())
    model = next(c for c in graph["claims"] if c["id"].endswith("C1"))
    fake = {**model, "id": model["id"].replace("C1", "C9"), "statement": FAKE,
            "evidence": [{**model["evidence"][0], "snippet": FAKE,
                          "verification": {**model["evidence"][0]["verification"], "verified": True}}]}
    graph["claims"].append(fake)
    for claim in graph["claims"]:
        if claim["id"].endswith("C2"):
            claim["evidence"][0]["verification"].update(verified=True, score=100.0)
    graph["stats"].update(evidence_verified=4, evidence_items=4, claims_count=4)
    paths.kg_json.write_text(json.dumps(graph))
    return str(fake["id"])


def test_an_edited_view_supplies_no_claim_flag_or_count(server: Served, base: Path, sessions: Path) -> None:
    paths = copy(base, sessions, "edited")
    sid, claim = paths.root.name, ids(paths)
    fake = add_fake_claim(paths)
    overview = server.json(f"/api/sessions/{sid}/overview")
    assert "edited or replaced" in overview["graph_warning"]
    assert overview["stats"]["evidence_verified"] == 2 and overview["stats"]["claims_count"] == 3  # the ledger's
    component = evidence_component(server, sid)
    assert component["detail"].startswith("2 of 3"), component
    assert verified_rows(server, sid) == {"C1": True, "C2": False, "C3": True}
    assert verified_rows(server, sid, "Spain") == {}
    assert server.get(f"/api/sessions/{sid}/node?id={fake}")[0] == 404
    assert server.get(f"/api/sessions/{sid}/claim?id={fake}")[0] == 404
    assert node_verified(server, sid, claim["C2"]) is False
    detail = server.json(f"/api/sessions/{sid}/claim?id={claim['C2']}")
    assert detail["evidence"][0]["verified"] is False and detail["evidence"][0]["verified_in_view"] is True
    assert server.json(f"/api/sessions/{sid}/claim?id={claim['C1']}")["evidence"][0]["verified"] is True


@pytest.mark.parametrize("ledger", ["deleted", "replaced"])
def test_with_no_ledger_to_count_from_nothing_counts_as_verified(server: Served, base: Path, sessions: Path,
                                                                 ledger: str) -> None:
    paths = copy(base, sessions, f"no-ledger-{ledger}")
    sid = paths.root.name
    fake = add_fake_claim(paths)
    if ledger == "deleted":
        shutil.rmtree(paths.state)
    else:
        paths.store_db.write_bytes(b"not a database" * 600)
    overview = server.json(f"/api/sessions/{sid}/overview")
    assert overview["graph_warning"] and overview["stats"]["evidence_verified"] == 0
    assert evidence_component(server, sid)["detail"].startswith("0 of 4")
    assert verified_rows(server, sid, "Spain") == {"C9": False}
    assert set(verified_rows(server, sid).values()) == {False}
    assert node_verified(server, sid, fake) is False
    detail = server.json(f"/api/sessions/{sid}/claim?id={fake}")
    assert detail["evidence"][0]["verified"] is False and detail["evidence"][0]["verified_in_view"] is True


@pytest.mark.parametrize("kind", ["fifo", "folder"])
def test_the_advice_for_a_view_that_is_not_a_file_is_what_status_does(server: Served, base: Path, sessions: Path,
                                                                      kind: str) -> None:
    """The fix the viewer gives, followed word for word, makes `status` rebuild the view (it refuses it as it is)."""
    from click.testing import CliRunner

    from orchestrator.cli import main

    paths = copy(base, sessions, f"view-{kind}")
    sid = paths.root.name
    paths.kg_json.unlink()
    os.mkfifo(paths.kg_json) if kind == "fifo" else paths.kg_json.mkdir()
    [note] = [n for n in server.json(f"/api/sessions/{sid}/overview")["damaged"] if n["file"] == "knowledge-graph.json"]
    assert note["fix"].startswith("move knowledge-graph.json aside") and f"`cconductor status {sid}`" in note["fix"]
    assert note["fix"] in error_of(server, f"/api/sessions/{sid}/graph?kind=claims")

    def status() -> tuple[int, str]:
        result = CliRunner().invoke(main, ["--sessions-dir", str(sessions), "status", sid, "--json"])
        return result.exit_code, result.output

    code, out = status()
    assert code != 0 and "move it aside" in out  # as it is, `status` refuses it: the advice must say to move it
    paths.kg_json.rename(paths.root / "knowledge-graph.json.aside")
    code, out = status()
    assert code == 0, out
    assert paths.kg_json.is_file() and server.json(f"/api/sessions/{sid}/overview")["damaged"] == []
    assert verified_rows(server, sid) == {"C1": True, "C2": False, "C3": True}


def error_of(server: Served, path: str) -> str:
    status, _, body = server.get(path)
    assert status == 409, (path, status, body[:300])
    return str(json.loads(body)["error"])
