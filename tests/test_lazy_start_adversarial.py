"""Adversarial inputs for the lazy start: each is judged by a lazily started processor and by one
holding every record (the key index emptied, as in a store of an older version); both must agree."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from orchestrator.commit.processor import Processor
from orchestrator.commit.rollback import rollback_session
from orchestrator.model.layout import SessionPaths
from orchestrator.session.ledger import Ledger
from tests.conftest import sample_claim, sample_source, write_artifacts
from tests.test_lazy_start import _judged, _timeless


def _agree(session: SessionPaths, tmp_path: Path, name: str) -> list[dict[str, Any]]:
    lazy_root, eager_root = tmp_path / f"{name}-lazy", tmp_path / f"{name}-eager"
    shutil.copytree(session.root, lazy_root)
    shutil.copytree(session.root, eager_root)
    lazy, _, lazy_view = _judged(lazy_root, drop_index=False)
    eager, _, eager_view = _judged(eager_root, drop_index=True)
    assert lazy == eager
    assert _timeless(lazy_view) == _timeless(eager_view)
    return lazy


def _process(session: SessionPaths) -> list[str]:
    processor = Processor(session)
    try:
        return [o.status for o in processor.process_pending()]
    finally:
        processor.close()


def test_rollback_to_records_committed_before_keys_existed(session: SessionPaths, tmp_path: Path) -> None:
    from tests.test_lazy_start import _drop_index
    write_artifacts(session, "ant", {"sources.json": {"sources": [sample_source("S1")]}})
    write_artifacts(session, "bee", {"sources.json": {"sources": [sample_source("S1")]}})
    assert _process(session) == ["merged", "merged"]
    _drop_index(session.root)  # ant's and bee's records as an older version wrote them
    base = Ledger(session.store_db).head()
    write_artifacts(session, "bee", {"sources.json": {"sources": [sample_source("S2")]}})
    assert _process(session) == ["merged"]  # bee's new record indexed; ant adopted at start
    rollback_session(session, base)  # bee's unindexed record is current again
    # a bare S1 is ambiguous (ant and bee both hold it) only if bee's restored record is seen
    write_artifacts(session, "cat", {"sources.json": {"sources": [sample_source("S9")]},
                                     "claims.json": {"claims": [sample_claim("C1", source_id="S1")]}})
    outcomes = _agree(session, tmp_path, "rollback")
    assert [o["agent"] for o in outcomes] == ["cat"]
    assert any("ambiguous" in p["message"] for p in outcomes[0]["problems"]), outcomes


def test_a_local_id_shared_by_a_source_and_a_claim(session: SessionPaths, tmp_path: Path) -> None:
    write_artifacts(session, "ant", {"sources.json": {"sources": [sample_source("X1")]},
                                     "claims.json": {"claims": [sample_claim("X1", source_id="X1")]}})
    assert _process(session) == ["merged"]
    write_artifacts(session, "bee", {"sources.json": {"sources": [sample_source("S1")]},
                                     "claims.json": {"claims": [sample_claim("C1", source_id="X1")]}})
    write_artifacts(session, "cat", {"entities.json": {"entities": [{"id": "E1", "name": "W", "type": "substance"}]},
                                     "relationships.json": {"relationships": [
                                         {"id": "R1", "subject": "E1", "predicate": "mentions",
                                          "object": "ant:X1"}]}})
    _agree(session, tmp_path, "collide")


def test_an_agent_committed_by_another_process_after_start(session: SessionPaths, tmp_path: Path) -> None:
    write_artifacts(session, "ant", {"sources.json": {"sources": [sample_source("S1")]}})
    assert _process(session) == ["merged"]
    watcher = Processor(session)  # started lazily, then another process commits bee
    try:
        write_artifacts(session, "bee", {"sources.json": {"sources": [sample_source("S1")]}})
        assert _process(session) == ["merged"]
        write_artifacts(session, "cat", {"sources.json": {"sources": [sample_source("S9")]},
                                         "claims.json": {"claims": [sample_claim("C1", source_id="S1")]}})
        late = [(o.agent, o.status, [p.to_dict() for p in o.problems]) for o in watcher.process_pending()]
    finally:
        watcher.close()
    # bee, committed after the watcher started, makes the bare S1 ambiguous
    assert [a for a, _, _ in late] == ["cat"]
    assert any("ambiguous" in p["message"] for p in late[0][2]), late


def _outline(marker: str) -> dict[str, Any]:
    return {"report_outline": {"title": "T", "sections": [
        {"heading": "Key Findings", "paragraphs": [{"text": f"Merging is hard {marker}."}]}]}}


def test_report_outlines_citing_claims_of_unread_records(session: SessionPaths, tmp_path: Path) -> None:
    write_artifacts(session, "ant", {"sources.json": {"sources": [sample_source("S1")]},
                                     "claims.json": {"claims": [sample_claim("C1", source_id="S1")]}})
    assert _process(session) == ["merged"]
    write_artifacts(session, "bee", {"report-outline.json": _outline("[@ant:C1]")})
    write_artifacts(session, "cat", {"report-outline.json": _outline("[@C1]")})  # bare: resolved via the key index
    outcomes = _agree(session, tmp_path, "outline")
    messages = [" ".join(p["message"] for p in o["problems"]) for o in outcomes]
    # both markers resolve to ant's claim, read from the store (it has no verified evidence)
    assert len(messages) == 2 and all("cites claim 'ant:C1'" in m for m in messages), messages


def test_an_unread_record_removed_by_another_process_rollback(session: SessionPaths, tmp_path: Path) -> None:
    write_artifacts(session, "bee", {"sources.json": {"sources": [sample_source("S0")]}})
    assert _process(session) == ["merged"]
    before_ant = Ledger(session.store_db).head()
    write_artifacts(session, "ant", {"sources.json": {"sources": [sample_source("S1")]}})
    assert _process(session) == ["merged"]
    watcher = Processor(session)  # ant's record unread
    try:
        rollback_session(session, before_ant)  # another process: ant's record is no longer current
        shutil.rmtree(session.agent_artifacts("ant"))
        write_artifacts(session, "cat", {"sources.json": {"sources": [sample_source("S9")]},
                                         "claims.json": {"claims": [sample_claim("C1", source_id="S1"),
                                                                    sample_claim("C2", source_id="ant:S1")]}})
        late = [(o.agent, [p.to_dict() for p in o.problems]) for o in watcher.process_pending(["cat"])]
        assert "ant" not in watcher.state.records
    finally:
        watcher.close()
    assert [a for a, _ in late] == ["cat"]
    pointers = {p["pointer"] for p in late[0][1] if p["severity"] == "error"}
    # neither the bare nor the qualified reference may resolve to the rolled-back record
    assert any(ptr.startswith("/claims/0") for ptr in pointers), late
    assert any(ptr.startswith("/claims/1") for ptr in pointers), late
