"""A burst of locks judged as one sweep: bad agents among good ones, and the sweep's events written at once."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest

from orchestrator.commit import checks
from orchestrator.commit.processor import Processor
from orchestrator.model.layout import SessionPaths
from orchestrator.session.events import EventLog, read_events
from orchestrator.session.ledger import Ledger
from tests.conftest import sample_claim, sample_source, store_text, write_artifacts

GOOD = [f"good-{i:02d}" for i in range(12)]
BAD = {"bad-schema": "schema", "bad-shacl": "shacl", "bad-reference": "reference", "bad-internal": "internal"}


def _stage(session: SessionPaths) -> None:
    """Twelve good agents and four bad ones (schema, SHACL, reference, internal error), locks last."""
    sha = store_text(session, "Intro page.\fWe show that merging is hard in practice for agents.")
    good_claim = sample_claim(priority="high", evidence=[
        {"source_id": "S1", "snippet": "merging is hard in practice for agents", "locator": {"page": 2}}])
    files = {"sources.json": {"sources": [sample_source(content_sha256=sha)]}, "claims.json": {"claims": [good_claim]}}
    for agent in GOOD[:6]:
        write_artifacts(session, agent, files, lock=False)
    write_artifacts(session, "bad-schema", {"claims.json": {"claims": [sample_claim(confidence=2)]}}, lock=False)
    write_artifacts(session, "bad-shacl", {
        "sources.json": {"sources": [sample_source(content_sha256=sha)]},
        "claims.json": {"claims": [sample_claim(priority="high", evidence=[
            {"source_id": "S1", "snippet": "merging is easy for everybody involved", "locator": {"page": 2}}])]},
    }, lock=False)
    write_artifacts(session, "bad-reference", {"claims.json": {"claims": [sample_claim(source_id="nowhere")]}},
                    lock=False)
    write_artifacts(session, "bad-internal", files, lock=False)
    for agent in GOOD[6:]:
        write_artifacts(session, agent, files, lock=False)
    for agent in sorted([*GOOD, *BAD]):
        session.lock(agent).touch()


@pytest.fixture
def broken_citations(monkeypatch: pytest.MonkeyPatch) -> None:
    """An unexpected failure while one agent is judged (a bug, not bad input)."""
    original = checks.bind_evidence

    def bind(contribution: Any, *args: Any) -> Any:
        if contribution["agent"] == "bad-internal":
            raise RuntimeError("boom")
        return original(contribution, *args)

    monkeypatch.setattr(checks, "bind_evidence", bind)


def test_bad_agents_in_a_burst_get_retry_instructions_while_the_others_commit(
    session: SessionPaths, broken_citations: None
) -> None:
    _stage(session)
    processor = Processor(session)
    try:
        outcomes = {o.agent: o for o in processor.process_pending()}
    finally:
        processor.close()
    assert {a for a, o in outcomes.items() if o.status == "merged"} == set(GOOD)
    assert {a for a, o in outcomes.items() if o.status == "rejected"} == set(BAD)
    for agent in GOOD:
        assert not session.lock(agent).exists() and not session.retry_instructions(agent).exists()
    for agent, kind in BAD.items():
        assert session.root.joinpath(f"{agent}.kg.lock.error").is_file(), agent
        retry = json.loads(session.retry_instructions(agent).read_text())
        assert retry["action_required"], agent
        rules = " ".join(p.rule for p in outcomes[agent].problems)
        assert {"schema": "schema.", "shacl": "shacl", "reference": "reference.",
                "internal": "internal.error"}[kind] in rules, (agent, rules)

    store = Ledger(session.store_db)
    try:
        ledger = store.ledger()
    finally:
        store.close()
    merged = [e for e in ledger if e["action"] == "merge"]
    assert sorted(e["agent"] for e in merged) == sorted(GOOD)
    assert sorted(e["agent"] for e in ledger if e["action"] == "reject") == sorted(BAD)
    assert [e["seq"] for e in ledger] == sorted(e["seq"] for e in ledger)
    assert {outcomes[e["agent"]].seq for e in merged} == {e["seq"] for e in merged}

    events = list(read_events(session.events))
    for agent in [*GOOD, *BAD]:
        mine = [e["type"] for e in events if e["data"].get("agent") == agent]
        assert mine.count("lock.seen") == 1, (agent, mine)
        final = "merge.committed" if agent in GOOD else "merge.rejected"
        assert mine.count(final) == 1 and mine[-1] == final, (agent, mine)
    types = [e["type"] for e in events]
    judged = max(i for i, t in enumerate(types) if t in ("lock.seen", "validation.completed", "shacl.completed"))
    assert judged < min(i for i, t in enumerate(types) if t in ("merge.committed", "merge.rejected"))


def test_a_rejected_agent_of_a_burst_merges_once_fixed(session: SessionPaths, broken_citations: None) -> None:
    _stage(session)
    processor = Processor(session)
    try:
        processor.process_pending()
        write_artifacts(session, "bad-schema", {"claims.json": {"claims": [sample_claim(confidence=0.5)]},
                                                "sources.json": {"sources": [sample_source()]}})
        (session.root / "bad-schema.kg.lock.error").unlink()
        again = {o.agent: o.status for o in processor.process_pending()}
    finally:
        processor.close()
    assert again == {"bad-schema": "merged"}


def test_deferred_events_are_written_in_one_append_when_the_block_ends(tmp_path: Path) -> None:
    log = EventLog(tmp_path / "events.jsonl", tmp_path / "events.mutex")
    heard: list[str] = []
    log.subscribe(lambda event: heard.append(event["type"]))
    with log.deferred():
        log.emit("one", "first")
        with log.deferred():  # nested: written with the outer block
            log.emit("two", "second", token="sk-ant-api03-" + "x" * 40)
        other = threading.Thread(target=log.emit, args=("elsewhere", "another thread is not held"))
        other.start()
        other.join()
        assert [e["type"] for e in read_events(log.path)] == ["elsewhere"]
        assert heard == ["elsewhere"]
    written = list(read_events(log.path))
    assert [e["type"] for e in written] == ["elsewhere", "one", "two"]
    assert heard == ["elsewhere", "one", "two"]
    assert "x" * 40 not in log.path.read_text()  # redacted as a single emit would be


def test_deferred_events_are_written_even_when_the_block_raises(tmp_path: Path) -> None:
    log = EventLog(tmp_path / "events.jsonl", tmp_path / "events.mutex")
    with pytest.raises(RuntimeError), log.deferred():
        log.emit("before", "written anyway")
        raise RuntimeError("sweep failed")
    assert [e["type"] for e in read_events(log.path)] == ["before"]
    log.emit("after", "not held any more")
    assert [e["type"] for e in read_events(log.path)] == ["before", "after"]
