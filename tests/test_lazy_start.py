"""A processor starts without reading the committed records, and judges exactly as one holding them all.

Start-up reads only each agent's record seq; a merge reads the records its references name, the
owners of a bare local id (from the store's key index) and the agents citing it. The oracle is
the same session whose key index is emptied, as in a store of an older version: the processor
then reads every record at start and answers every lookup from memory, the way it always did.
"""

from __future__ import annotations

import random
import re
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from orchestrator.commit.lazy_rdf import referenced_agents
from orchestrator.commit.processor import Outcome, Processor
from orchestrator.commit.rollback import rollback_session
from orchestrator.commit.views import flush_views
from orchestrator.graph.dependents import _all_references, cited_agents
from orchestrator.model.layout import SessionPaths
from orchestrator.session.ledger import Ledger
from tests.conftest import sample_claim, sample_source, write_artifacts

pytestmark = pytest.mark.slow  # a stress or long end-to-end case: `pytest -m slow` (CI runs it)

AGENTS = ["ant", "bee", "cat", "dog", "eel", "fox"]


def _unloaded(processor: Processor) -> set[str]:
    return {a for a in processor.state.records if processor.state.base_seq(a) is not None
            and not isinstance(processor.state.records._data[a], dict)}


def _drop_index(root: Path) -> None:
    db = sqlite3.connect(SessionPaths(root).store_db)
    db.execute("DELETE FROM record_keys")
    db.commit()
    db.close()


def _submission(rng: random.Random, agent: str, merged: dict[str, list[str]]) -> dict[str, Any]:
    """Sources with ids unique to the agent (bare references resolve to them) or shared by all
    (bare references are ambiguous); claims citing them bare or qualified; sometimes items dropped."""
    ids = [f"S{i}" if rng.random() < 0.3 else f"S-{agent}-{i}" for i in range(rng.randint(1, 3))]
    if rng.random() < 0.3 and len(ids) > 1:  # a retry that drops an item others may cite
        ids = ids[:1]
    sources = [sample_source(sid, url=f"https://example.org/{agent}/{sid}") for sid in ids]
    others = [(a, s) for a, locals_ in merged.items() if a != agent for s in locals_]
    claims = []
    for i in range(rng.randint(1, 3)):
        cited = rng.choice(ids)
        if others and rng.random() < 0.6:
            owner, local = rng.choice(others)
            cited = local if rng.random() < 0.5 else f"{owner}:{local}"  # bare or qualified
        claims.append(sample_claim(f"C{i}", source_id=cited, snippet="merging is hard"))
    files: dict[str, Any] = {"sources.json": {"sources": sources}, "claims.json": {"claims": claims}}
    if others and rng.random() < 0.4:
        owner = rng.choice(sorted({a for a, _ in others}))
        files["entities.json"] = {"entities": [{"id": "E1", "name": "Water", "type": "substance"}]}
        files["relationships.json"] = {"relationships": [
            {"id": "R1", "subject": "E1", "predicate": "mentions", "object": f"{owner}:C0"}]}
    return files


def _judged(root: Path, *, drop_index: bool) -> tuple[list[dict[str, Any]], set[str], bytes]:
    """Process the pending locks of a copy of the session; outcomes, records left unread, the JSON view."""
    if drop_index:
        _drop_index(root)
    processor = Processor(SessionPaths(root))
    try:
        unread_at_start = _unloaded(processor)
        outcomes = processor.process_pending()
        unread = _unloaded(processor) if unread_at_start else set()
        flush_views(processor)
        return [_comparable(o) for o in outcomes], unread, SessionPaths(root).kg_json.read_bytes()
    finally:
        processor.close()


def _timeless(view: bytes) -> bytes:
    """The view with its time stamps (merge and writing times) blanked: the rest must match byte for byte."""
    return re.sub(rb'"\d{4}-\d\d-\d\dT[\d:.]+Z"', b'"T"', view)


def _comparable(outcome: Outcome) -> dict[str, Any]:
    return {"agent": outcome.agent, "status": outcome.status,
            "problems": [{k: v for k, v in p.to_dict().items()} for p in outcome.problems]}


@pytest.mark.parametrize("seed", [3, 5, 8, 10])
def test_a_lazy_start_judges_like_a_processor_holding_every_record(session: SessionPaths, tmp_path: Path,
                                                                   seed: int) -> None:
    rng = random.Random(seed)
    merged: dict[str, list[str]] = {}
    seen = {"unread": 0, "ambiguous": 0, "removed_in_use": 0, "merged": 0}
    for step in range(14):
        if merged and rng.random() < 0.12:
            rollback_session(session, rng.randint(1, Ledger(session.store_db).head()))
        for agent in rng.sample(AGENTS, rng.randint(1, 2)):
            for stale in session.root.glob(f"{agent}.kg.lock*"):
                stale.unlink()
            shutil.rmtree(session.agent_artifacts(agent), ignore_errors=True)
            write_artifacts(session, agent, _submission(rng, agent, merged))
        copies = [tmp_path / f"{step}-lazy", tmp_path / f"{step}-eager"]
        for copy in copies:
            shutil.copytree(session.root, copy)
        lazy, unread, lazy_view = _judged(copies[0], drop_index=False)
        eager, _, eager_view = _judged(copies[1], drop_index=True)
        assert lazy == eager
        assert _timeless(lazy_view) == _timeless(eager_view)
        seen["unread"] += len(unread)
        rules = [p["rule"] for o in lazy for p in o["problems"]]
        seen["ambiguous"] += sum("ambiguous" in p["message"] for o in lazy for p in o["problems"])
        seen["removed_in_use"] += rules.count("reference.removed_in_use")
        seen["merged"] += sum(o["status"] == "merged" for o in lazy)
        shutil.rmtree(session.root)
        shutil.copytree(copies[0], session.root)  # the lazily judged session goes on
        fresh = Processor(session)
        try:
            merged = {a: [s["local_id"] for s in r["contribution"]["items"]["sources"]]
                      for a, r in fresh.state.records.items()}
        finally:
            fresh.close()
    # every path ran: records a merge never read, ambiguous bare ids, a retry dropping a cited item
    assert seen["unread"] and seen["ambiguous"] and seen["removed_in_use"] and seen["merged"], seen


def test_start_up_reads_no_record_and_a_merge_reads_only_what_it_names(session: SessionPaths) -> None:
    for agent in AGENTS:
        write_artifacts(session, agent, {"sources.json": {"sources": [sample_source(f"S-{agent}")]}})
    processor = Processor(session)
    try:
        processor.process_pending()
    finally:
        processor.close()
    write_artifacts(session, "gnu", {"sources.json": {"sources": [sample_source("S1")]},
                                     "claims.json": {"claims": [sample_claim("C1", "S-ant"),
                                                                sample_claim("C2", "bee:S-bee")]}})
    again = Processor(session)
    try:
        assert _unloaded(again) == set(AGENTS)  # nothing read at start
        assert [o.status for o in again.process_pending()] == ["merged"]
        assert _unloaded(again) == {"cat", "dog", "eel", "fox"}  # only the cited agents' records were read
        cites = again.state.records["gnu"]["contribution"]["items"]["claims"]
        assert [c["evidence"][0]["source_id"] for c in cites] == ["ant:S-ant", "bee:S-bee"]
    finally:
        again.close()


def test_a_store_of_an_older_version_is_indexed_once(session: SessionPaths, tmp_path: Path) -> None:
    write_artifacts(session, "ant", {"sources.json": {"sources": [sample_source("S-ant")]}})
    first = Processor(session)
    first.process_pending()
    first.close()
    _drop_index(session.root)
    upgraded = Processor(session)  # reads the record, holds it in memory and indexes its keys
    try:
        assert _unloaded(upgraded) == set() and "ant" in upgraded.state.records
    finally:
        upgraded.close()
    later = Processor(session)
    try:
        assert _unloaded(later) == {"ant"}
        assert later.state.excluding("bee").by_local("sources", "S-ant") == ["ant:S-ant"]
    finally:
        later.close()


def test_the_cited_agents_are_those_the_reference_walk_finds() -> None:
    rng = random.Random(11)
    for _ in range(300):
        def ref() -> Any:
            return rng.choice([f"{rng.choice(AGENTS)}:x", "bare", 7, None, {"a": 1}, ["ant:y"]])
        claim = {"evidence": rng.choice([[{"source_id": ref()} for _ in range(2)], "no", [ref()]]),
                 "entity_ids": rng.choice([[ref(), ref()], ref()]), "sub_question_id": ref()}
        contribution = {"items": {"claims": [claim, rng.choice([claim, "not an item"])],
                                  "relationships": [{"subject": ref(), "object": ref(), "claim_ids": [ref()]}],
                                  "confidence_scores": [{"claim_id": ref(), "supporting_source_ids": ref()}]}}
        walked = {gid.partition(":")[0] for _, gid, _ in _all_references(contribution["items"]) if ":" in gid}
        assert cited_agents(contribution) == walked
        assert walked <= referenced_agents({"agent": "zzz", "contribution": contribution}) | {"zzz"}
