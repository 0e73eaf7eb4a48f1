"""One id rule and order-independent RDF: what the merge resolved is what every view shows, after any restart."""

from __future__ import annotations

import json
from typing import Any

from orchestrator.commit.inspection import validate_session
from orchestrator.commit.processor import Processor
from orchestrator.model.layout import SessionPaths
from tests.conftest import merge_pending, write_artifacts


def _claimer() -> dict[str, Any]:
    return {"claims.json": {"claims": [{"id": "C1", "statement": "Water boils at 100 C at sea level.",
                                        "confidence": 0.8, "priority": "low", "evidence": []}]},
            "entities.json": {"entities": [{"id": "E1", "name": "Water", "type": "substance",
                                            "aliases": ["H2O", "dihydrogen monoxide"]}]}}


def _relater(subject: str) -> dict[str, Any]:
    return {
        "entities.json": {"entities": [{"id": "E9", "name": "water", "type": "substance", "aliases": ["aqua"]}]},
        "relationships.json": {"relationships": [
            {"id": "R1", "subject": subject, "predicate": "mentions", "object": "claimer:E1"}]},
    }


def _quads(processor: Processor) -> set[tuple[Any, ...]]:
    return {(g.agent, t) for g in processor.rdf.agent_graphs().values() for t in g.triples}


def test_rdf_of_a_contribution_does_not_depend_on_the_load_order(session: SessionPaths) -> None:
    # "a-relater" sorts (and installs) before "claimer": its subject must still be a claim after a restart
    write_artifacts(session, "claimer", _claimer())
    assert merge_pending(session) == {"claimer": "merged"}
    write_artifacts(session, "a-relater", _relater("claimer:C1"))
    assert merge_pending(session) == {"a-relater": "merged"}
    first = Processor(session)
    before = _quads(first)
    first.close()
    again = Processor(session)  # a restart replays the ledger in its own order
    try:
        assert _quads(again) == before
        relationship = again.state.item("relationships", "a-relater:R1")
        assert relationship is not None and relationship["subject_kind"] == "claim"
    finally:
        again.close()
    assert not [p for p in validate_session(session) if p.is_error]
    graph = json.loads(session.kg_json.read_text())
    [rel] = graph["relationships"]
    assert rel["subject"] == "claimer:C1" and rel["subject_kind"] == "claim"
    assert rel["object_kind"] == "entity"


def test_a_reference_that_names_both_an_entity_and_a_claim_is_ambiguous(session: SessionPaths) -> None:
    files = _claimer()
    files["entities.json"]["entities"].append({"id": "C1", "name": "Boiling", "type": "process"})
    write_artifacts(session, "claimer", files)
    assert merge_pending(session) == {"claimer": "merged"}
    write_artifacts(session, "relater", _relater("claimer:C1"))
    assert merge_pending(session) == {"relater": "rejected"}
    instructions = json.loads(session.retry_instructions("relater").read_text())
    messages = [p["message"] for f in instructions["files"] for p in f["problems"]]
    assert any("'claimer:C1' is ambiguous: it is both an entity and a claim" in m for m in messages), messages


def test_the_unified_view_keeps_entity_aliases_and_lists_merged_ids_apart(session: SessionPaths) -> None:
    write_artifacts(session, "claimer", _claimer())
    write_artifacts(session, "relater", _relater("claimer:C1"))
    merge_pending(session)
    graph = json.loads(session.kg_json.read_text())
    [water] = graph["entities"]
    assert water["aliases"] == ["H2O", "dihydrogen monoxide", "aqua"]
    assert water["merged_ids"] == ["claimer:E1", "relater:E9"]
    [rel] = graph["relationships"]
    assert rel["subject"] == "claimer:C1", "a claim subject is never rewritten to the merged entity"


def test_removing_an_item_other_agents_cite_tells_the_remover_what_it_breaks(session: SessionPaths) -> None:
    write_artifacts(session, "claimer", _claimer())
    merge_pending(session)
    write_artifacts(session, "relater", {
        **_relater("claimer:C1"),
        "key-findings.json": {"key_findings": [{"statement": "Boiling point", "claim_ids": ["claimer:C1"]}]},
    })
    assert merge_pending(session) == {"relater": "merged"}
    for name in ("claims.json", "entities.json"):
        (session.agent_artifacts("claimer") / name).unlink()
    write_artifacts(session, "claimer", {"entities.json": {"entities": [{"id": "E2", "name": "Ice"}]}})
    assert merge_pending(session) == {"claimer": "rejected"}
    instructions = json.loads(session.retry_instructions("claimer").read_text())
    problems = [p for f in instructions["files"] for p in f["problems"]]
    assert {p["file"] for p in problems} == {"artifacts/claimer"}
    assert all(p["rule"] == "reference.removed_in_use" for p in problems)
    messages = " | ".join(p["message"] for p in problems)
    assert "no longer has the claim 'C1' (claimer:C1), but agent 'relater' cites it at " \
           "artifacts/relater/relationships.json/relationships/0/subject" in messages
    assert "artifacts/relater/key-findings.json/key_findings/0/claim_ids/0" in messages
    assert "the entity 'E1'" in messages
    assert "artifacts/relater" not in instructions["action_required"]
    assert not instructions["shacl_violations"]
