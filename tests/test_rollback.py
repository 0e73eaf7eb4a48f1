"""Rollback restores exactly the state right after ledger entry N, including earlier rollbacks, in every view."""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path
from typing import Any

import pytest

from orchestrator.commit.processor import Processor
from orchestrator.commit.rollback import rollback_session
from orchestrator.commit.views import flush_views
from orchestrator.model.layout import SessionPaths
from orchestrator.session.ledger import read_ledger
from orchestrator.session.record import load_session
from tests.conftest import merge_pending, write_artifacts


def _version(session: SessionPaths, agent: str, marker: str) -> None:
    folder = session.agent_artifacts(agent)
    if folder.exists():
        shutil.rmtree(folder)
    write_artifacts(session, agent, {"notes.json": {"notes": {"version": marker}},
                                     "entities.json": {"entities": [{"id": "E1", "name": f"{agent} {marker}"}]}})


def _namespaces(session: SessionPaths) -> dict[str, Any]:
    graph = json.loads(session.kg_json.read_text())
    return {k: v["notes"]["version"] for k, v in graph.items() if isinstance(v, dict) and "notes" in v}


def _rdf_labels(session: SessionPaths) -> set[str]:
    processor = Processor(session)
    try:
        return {str(t[2]) for g in processor.rdf.agent_graphs().values() for t in g.triples
                if str(t[1]).endswith("#label") and " v" in str(t[2])}
    finally:
        processor.close()


def test_rollback_after_an_earlier_rollback_does_not_bring_back_what_it_removed(session: SessionPaths) -> None:
    _version(session, "alpha", "v1")
    merge_pending(session)  # 1: alpha v1
    _version(session, "alpha", "v2")
    merge_pending(session)  # 2: alpha v2
    rollback_session(session, 1)  # 3: alpha back to v1
    _version(session, "beta", "v1")
    merge_pending(session)  # 4: beta v1
    assert _namespaces(session) == {"alpha": "v1", "beta": "v1"}
    rollback_session(session, 4)  # the state right after entry 4: alpha v1 (not v2), beta v1
    assert _namespaces(session) == {"alpha": "v1", "beta": "v1"}
    assert _rdf_labels(session) == {"alpha v1", "beta v1"}
    rollback_session(session, 2)
    assert _namespaces(session) == {"alpha": "v2"}
    assert _rdf_labels(session) == {"alpha v2"}
    agents = load_session(session)["agents"]
    assert agents["beta"]["state"] == "rolled_back" and agents["beta"]["last_commit_seq"] is None
    assert agents["alpha"]["state"] == "merged"


def _replay(ledger: list[dict[str, Any]], upto: int) -> dict[str, int | None]:
    state: dict[str, int | None] = {}
    for entry in ledger:
        if entry["seq"] > upto:
            break
        if entry["action"] == "merge":
            state[entry["agent"]] = entry["seq"]
        elif entry["action"] == "rollback":
            state[entry["agent"]] = entry["detail"]["record_seq"]
    return {a: s for a, s in state.items() if s is not None}


@pytest.mark.parametrize("seed", range(6))
def test_random_merges_retries_and_rollbacks_match_a_rebuild_from_the_ledger(
    session: SessionPaths, tmp_path: Path, seed: int
) -> None:
    rng = random.Random(seed)
    expected_versions: dict[int, dict[str, str]] = {0: {}}  # ledger head -> versions shown
    versions: dict[str, str] = {}
    for step in range(14):
        head = len(read_ledger(session.store_db))
        if rng.random() < 0.3 and head:
            target = rng.randint(0, head)
            rollback_session(session, target)
            versions = dict(expected_versions[target])
        else:
            agent = rng.choice(["alpha", "beta", "gamma"])
            marker = f"v{step}"
            _version(session, agent, marker)
            merge_pending(session)
            versions[agent] = marker
        for seq in range(head + 1, len(read_ledger(session.store_db)) + 1):
            expected_versions[seq] = dict(versions)
        assert _namespaces(session) == versions, f"seed {seed} step {step}"
    ledger = read_ledger(session.store_db)
    shown = {agent for agent in _namespaces(session)}
    assert shown == set(_replay(ledger, ledger[-1]["seq"]))
    # the incremental views are byte-for-byte what a fresh rebuild from the ledger writes
    incremental = session.kg_json.read_text()
    trig = session.kg_trig.read_text()
    session.kg_json.unlink()
    session.kg_trig.unlink()
    processor = Processor(session)
    try:
        flush_views(processor, force=True)
    finally:
        processor.close()
    rebuilt = json.loads(session.kg_json.read_text())
    before = json.loads(incremental)
    for doc in (rebuilt, before):
        doc.pop("generated_at")
    assert rebuilt == before
    assert session.kg_trig.read_text() == trig
