"""Readers trust only what the ledger vouches for: a changed view is rebuilt, a damaged stored text unverifies.

A hand-edited ``knowledge-graph.json`` (a claim turned verified), a view deleted or restored to old
bytes with its size and times kept, a stored text deleted or overwritten after its claims merged:
``ask``, ``report``, ``status`` and ``validate`` (through the command line) neither cite nor count any
of it, and say what happened.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from orchestrator.cli import main
from orchestrator.commit.committed import read_committed
from orchestrator.model.errors import SessionDamaged
from orchestrator.model.layout import SessionPaths
from orchestrator.session.events import read_events
from orchestrator.session.record import update_session
from tests.conftest import merge_pending, write_artifacts
from tests.helpers.ask_session import TEXT, A, reactor_session

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning:rdflib.*")
UNVERIFIED = "The Lumen reactor was decommissioned in the spring after a coolant leak"


@pytest.fixture
def sessions(tmp_path: Path) -> Path:
    return tmp_path / "sessions"


@pytest.fixture
def reactor(sessions: Path) -> SessionPaths:
    paths = reactor_session(sessions)
    write_artifacts(paths, "rumours", {
        "sources.json": {"sources": [{"id": "S1", "type": "report", "title": "Lumen reactor field notes",
                                      "content_sha256": _sha(paths)}]},
        "claims.json": {"claims": [{"id": "C1", "statement": f"{UNVERIFIED}.", "priority": "medium",
                                    "confidence": 0.4, "evidence": [{"source_id": "S1", "snippet": UNVERIFIED}]}]}})
    assert merge_pending(paths) == {"rumours": "merged"}
    return paths


def _sha(paths: SessionPaths) -> str:
    [text] = list(paths.sources.glob("*.txt"))
    return text.stem


def _run(sessions: Path, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["--sessions-dir", str(sessions), *args], catch_exceptions=False)
    return result.exit_code, result.stdout


def _ask(sessions: Path, paths: SessionPaths, question: str) -> dict[str, Any]:
    code, out = _run(sessions, "ask", str(paths.root), question, "--json")
    assert code == 0, out
    return dict(json.loads(out))


def _mark_verified(paths: SessionPaths) -> bytes:
    """Turn the rumour's evidence verified in the view file, as anyone who can write the folder could."""
    before = paths.kg_json.read_bytes()
    graph = json.loads(before)
    [claim] = [c for c in graph["claims"] if c["id"] == "rumours:C1"]
    claim["evidence"][0]["verification"] = {"verified": True, "score": 100.0, "matched_text": f"{UNVERIFIED}.",
                                            "page": 2, "reason": "exact", "match": "exact"}
    graph["stats"]["evidence_verified"] += 1
    paths.kg_json.write_text(json.dumps(graph, indent=2))
    return before


def test_a_claim_edited_to_verified_in_the_view_is_never_cited(sessions: Path, reactor: SessionPaths) -> None:
    original = _mark_verified(reactor)
    doc = _ask(sessions, reactor, "When was the Lumen reactor decommissioned?")
    assert "rumours:C1" not in {c["node_id"] for c in doc["citations"]}
    assert doc["found"] is False and doc["answer"] == "Not found in this session."
    # Rebuilt from the ledger: the view is the one it vouches for, with the rumour unverified as merged. (Not
    # byte for byte the view before the edit: finding nothing, ask had its researcher read the stored texts,
    # and what it merged is in the ledger, so in the view, too.)
    view = read_committed(reactor)
    assert view.rebuilt is None and view.data == reactor.kg_json.read_bytes()
    [rumour] = [c for c in view.graph["claims"] if c["id"] == "rumours:C1"]
    assert rumour["evidence"][0]["verification"]["verified"] is False
    assert {c["id"] for c in json.loads(original)["claims"]} <= {c["id"] for c in view.graph["claims"]}
    [event] = [e for e in read_events(reactor.events) if e["type"] == "views.rebuilt"]
    assert "changed outside cconductor" in event["data"]["reason"]


def test_ask_writes_no_claim_for_passages_that_only_share_the_question_words(sessions: Path,
                                                                           reactor: SessionPaths) -> None:
    """The stored notes name the Lumen reactor ("Lumen reactor field notes, page one.") but never say when it
    was decommissioned: the search finds such passages, the answer check would drop them, so ask writes no
    ask-researcher agent and the ledger is as it was."""
    ledger_before = reactor.store_db.read_bytes()
    doc = _ask(sessions, reactor, "When was the Lumen reactor decommissioned?")
    assert doc["found"] is False
    assert not any(p.name.startswith("ask-researcher") for p in reactor.artifacts.iterdir())
    graph = read_committed(reactor).graph
    assert not any(key.startswith("ask-researcher") for key in graph)
    assert reactor.store_db.read_bytes() == ledger_before


def test_status_and_report_read_the_committed_state(sessions: Path, reactor: SessionPaths) -> None:
    honest = read_committed(reactor).graph["stats"]["evidence_verified"]
    _mark_verified(reactor)
    code, out = _run(sessions, "status", str(reactor.root), "--json")
    assert code == 0 and json.loads(out)["stats"]["evidence_verified"] == honest
    _mark_verified(reactor)
    update_session(reactor, lambda data: data.update(mission="general-research"))
    code, _ = _run(sessions, "report", str(reactor.root))
    assert code == 0
    report = (reactor.root / "mission-report.md").read_text()
    assert UNVERIFIED not in report and "cooled by molten salt" in report
    quality = json.loads((reactor.root / "quality.json").read_text())
    assert quality["view_sha256"] == read_committed(reactor).sha256
    code, out = _run(sessions, "status", str(reactor.root), "--json")
    assert json.loads(out)["quality"]["current"] is True


def test_a_view_with_its_size_and_times_kept_is_still_caught(reactor: SessionPaths) -> None:
    good = reactor.kg_json.read_bytes()
    info = reactor.kg_json.stat()
    forged = good.replace(b'"verified": false', b'"verified": true ')  # the same length
    assert forged != good and len(forged) == len(good)
    reactor.kg_json.write_bytes(forged)
    os.utime(reactor.kg_json, ns=(info.st_atime_ns, info.st_mtime_ns))
    view = read_committed(reactor)
    assert view.rebuilt and "changed outside cconductor" in view.rebuilt
    assert b'"verified": true ' not in reactor.kg_json.read_bytes()


def test_a_deleted_view_is_rebuilt_and_one_that_cannot_be_is_refused(reactor: SessionPaths) -> None:
    reactor.kg_json.unlink()
    assert read_committed(reactor).rebuilt and reactor.kg_json.is_file()
    _mark_verified(reactor)
    with pytest.raises(SessionDamaged, match=r"changed outside cconductor\); refusing to read it: run `cconductor "
                                             "process"):
        read_committed(reactor, rebuild=False)


def test_a_damaged_stored_text_unverifies_its_claims_everywhere(sessions: Path, reactor: SessionPaths) -> None:
    sha = _sha(reactor)
    text = reactor.source_text(sha)
    assert _ask(sessions, reactor, "How is the Lumen reactor cooled?")["found"] is True
    text.write_text(TEXT.replace("molten salt", "sea water"))  # overwritten after the claims merged
    old = text.stat().st_mtime - 60
    os.utime(text, (old, old))  # a settled file (not one being written right now)
    doc = _ask(sessions, reactor, "How is the Lumen reactor cooled?")
    assert doc["found"] is False and [c for c in doc["citations"] if c["number"]] == []
    code, out = _run(sessions, "status", str(reactor.root), "--json")
    assert json.loads(out)["stats"]["evidence_verified"] == 0
    code, out = _run(sessions, "validate", str(reactor.root), "--json")
    assert code == 1
    [problem] = [p for p in json.loads(out)["problems"] if p["rule"].startswith("source_text.")]
    assert (problem["rule"], problem["file"]) == ("source_text.altered", f"sources/{sha}.txt")
    assert f"{A}:C2" in problem["details"]["claim_ids"] and "no longer counts as verified" in problem["message"]
    text.unlink()
    code, out = _run(sessions, "validate", str(reactor.root), "--json")
    assert [p["rule"] for p in json.loads(out)["problems"] if p["rule"].startswith("source_text.")] == [
        "source_text.missing"]
    text.write_text(TEXT)  # restored: verified again
    assert _ask(sessions, reactor, "How is the Lumen reactor cooled?")["found"] is True


def _verified_in_rdf(text: str) -> int:
    """Evidence items the RDF says are verified, in any of the formats export writes."""
    return sum(text.count(mark) for mark in ('verified "true"', 'verified> "true"', 'verified "true"^^',
                                             '"cc:verified": true', '"@value": "true"'))


@pytest.mark.parametrize("fmt", ["trig", "turtle", "nquads", "jsonld"])
def test_export_and_the_trig_count_evidence_as_the_view_does(sessions: Path, reactor: SessionPaths,
                                                              fmt: str) -> None:
    """A stored text deleted after its claims merged: every export format and knowledge-graph.trig stop
    counting its evidence as verified, as status does; restored, it counts again."""
    code, before = _run(sessions, "export", str(reactor.root), "--format", fmt)
    assert code == 0 and _verified_in_rdf(before) > 0, before[:2000]
    text = reactor.source_text(_sha(reactor))
    kept = text.read_bytes()
    text.unlink()
    code, out = _run(sessions, "export", str(reactor.root), "--format", fmt)
    assert code == 0 and _verified_in_rdf(out) == 0, out[:2000]
    assert 'verified "true"' not in reactor.kg_trig.read_text() and "true" not in \
        "".join(line for line in reactor.kg_trig.read_text().splitlines() if "cc:verified" in line)
    assert json.loads(_run(sessions, "status", str(reactor.root), "--json")[1])["stats"]["evidence_verified"] == 0
    text.write_bytes(kept)
    code, out = _run(sessions, "export", str(reactor.root), "--format", fmt)
    assert _verified_in_rdf(out) == _verified_in_rdf(before)
    assert "cc:verified true" in reactor.kg_trig.read_text() or 'verified "true"' in reactor.kg_trig.read_text()
