"""Precision and recall of contradiction detection on labelled pairs (tests/data/contradictions/).

``dev.json`` is what the rules were designed on; ``heldout.json`` was written before them and never
tuned on (``benchmarks/bench_contradiction_quality.py`` prints both, per category). The end-to-end
cases run the issue's own kinds through real agents' submissions, merges and views.
"""

from __future__ import annotations

import json

import pytest

from orchestrator.contradictions import detect
from orchestrator.model.layout import SessionPaths
from tests.conftest import merge_pending
from tests.helpers.contradiction_pairs import DEV, HELDOUT, load, score
from tests.test_contradictions import agent, detected


@pytest.mark.parametrize("path", [DEV, HELDOUT], ids=["dev", "heldout"])
def test_precision_and_recall_on_labelled_pairs(path: object) -> None:
    pairs = load(path)  # type: ignore[arg-type]
    real = sum(p.real for p in pairs)
    assert real >= (30 if path == DEV else 15) and len(pairs) - real >= (30 if path == DEV else 15)
    verdicts = {p.id: bool(detect(p.claims, [], entities=p.entities)) for p in pairs}
    found = score(pairs, verdicts)
    assert found.precision >= 0.9, f"look-alikes flagged: {found.flagged}"
    assert found.recall >= 0.8, f"disagreements missed: {found.missed}"


def test_every_pair_is_symmetric_and_never_against_itself() -> None:
    for pair in load(DEV) + load(HELDOUT):
        one, other = pair.claims
        forward = detect([one, other], [], entities=pair.entities)
        assert forward == detect([other, one], [], entities=pair.entities), pair.id
        assert detect([one, {**one, "id": "agent-z:C1", "provenance": {"agent": "agent-z"},
                             "evidence": [{"source_id": "agent-z:S1"}]}], [], entities=pair.entities) == []


def _entities(session: SessionPaths, name: str, entities: list[dict[str, object]]) -> None:
    folder = session.agent_artifacts(name)
    (folder / "entities.json").write_text(json.dumps({"entities": entities}))


def test_the_issues_kinds_through_real_merges(session: SessionPaths) -> None:
    """A place typed city by one agent and port by another; an alias; short claims; and look-alikes."""
    agent(session, "alpha", ["Rotterdam handles 440 million tonnes of cargo a year.", "NYC has 8.3 million residents.",
                             "The trial enrolled 120 patients.", "The coolant inlet temperature is 300 °C.",
                             "Spain's unemployment rate is 30%."], entity_ids=[["E1"], ["E2"], [], [], []])
    _entities(session, "alpha", [{"id": "E1", "name": "Rotterdam", "type": "city"},
                                 {"id": "E2", "name": "New York City", "type": "city", "aliases": ["NYC"]}])
    agent(session, "beta", ["Rotterdam handles 470 million tonnes of cargo a year.",
                            "New York City has 8.8 million residents.", "The trial enrolled 210 patients.",
                            "The coolant outlet temperature is 350 °C.", "Italy's unemployment rate is 22%."],
          entity_ids=[["E1"], ["E2"], [], [], []])
    _entities(session, "beta", [{"id": "E1", "name": "Rotterdam", "type": "port"},
                                {"id": "E2", "name": "New York City", "type": "place"}])
    assert merge_pending(session) == {"alpha": "merged", "beta": "merged"}
    found = {tuple(c["claim_ids"]): c["kind"] for c in detected(session)}
    assert found == {("alpha:C1", "beta:C1"): "numeric", ("alpha:C2", "beta:C2"): "numeric",
                     ("alpha:C3", "beta:C3"): "numeric"}
