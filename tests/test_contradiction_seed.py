"""A new process takes the saved keys and conflicts of the claims whose record, sources and entity names are unchanged.

Each run of ``merge_pending`` is a one-shot ``cconductor process``: a fresh processor that seeds its
contradiction search from the rows the views keep beside each record in the ledger. The claims analysed
afresh are counted, and every result is compared with a contradiction search from scratch.
"""

from __future__ import annotations

import random
import shutil
from typing import Any

import orjson
import pytest

from orchestrator.commit.processor import Processor
from orchestrator.commit.rollback import rollback_session
from orchestrator.contradictions import search
from orchestrator.graph.unified import build_views
from orchestrator.model.layout import SessionPaths
from tests.conftest import merge_pending, sample_claim, sample_source, write_artifacts
from tests.test_contradiction_detector import CONFLICTS, LOOK_ALIKES

STATEMENTS = [s for _, a, b in CONFLICTS + LOOK_ALIKES for s in (a, b)]


class Counted:
    """The claims the search analyses instead of taking them from a saved row."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.analysed: list[str] = []
        entry = search.ConflictCache._entry

        def counting(cache: search.ConflictCache, cid: str, *args: Any) -> Any:
            found = entry(cache, cid, *args)
            if not found[1]:
                self.analysed.append(cid)
            return found

        monkeypatch.setattr(search.ConflictCache, "_entry", counting)

    def reset(self) -> None:
        self.analysed.clear()


def _submit(session: SessionPaths, agent: str, statements: list[str], doi: str | None = None,
            cited: list[str] | None = None, entity: str | None = None) -> None:
    """One source (its own URL, or ``doi``) and a claim per statement, citing it (or ``cited``, by claim);
    with ``entity``, an entity of that name that every claim is about."""
    for stale in session.root.glob(f"{agent}.kg.lock*"):
        stale.unlink()
    shutil.rmtree(session.agent_artifacts(agent), ignore_errors=True)
    source = sample_source("S1", doi=doi) if doi else sample_source("S1", url=f"https://example.org/{agent}")
    cited = cited or ["S1"] * len(statements)
    claims = [sample_claim(f"C{i}", source_id=sid, statement=text)
              for i, (text, sid) in enumerate(zip(statements, cited, strict=True))]
    files: dict[str, Any] = {"sources.json": {"sources": [source]}, "claims.json": {"claims": claims}}
    if entity:
        files["entities.json"] = {"entities": [{"id": "E1", "name": entity, "type": "organisation"}]}
        for item in claims:
            item["entity_ids"] = ["E1"]
    write_artifacts(session, agent, files)


def _detected(graph: dict[str, Any]) -> dict[tuple[str, ...], list[str]]:
    return {tuple(c["claim_ids"]): c["kinds"] for c in graph["contradictions"] if c.get("detected")}


def _written(session: SessionPaths) -> dict[tuple[str, ...], list[str]]:
    return _detected(orjson.loads(session.kg_json.read_bytes()))


def _from_scratch(session: SessionPaths) -> dict[tuple[str, ...], list[str]]:
    """The contradictions of the session's records, searched without any cache."""
    fresh = Processor(session)
    try:
        return _detected(build_views(fresh.state.records, fresh.session_id, fresh.state.head_seq, "now"))
    finally:
        fresh.close()


def test_a_new_process_analyses_only_the_claims_of_agents_that_changed(session: SessionPaths,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    for agent, pick in (("ant", 0), ("bee", 1), ("cat", 2)):  # pairs of CONFLICTS split across agents
        _submit(session, agent, [CONFLICTS[pick][1], CONFLICTS[(pick + 1) % 3][2], STATEMENTS[20 + pick]])
    assert set(merge_pending(session).values()) == {"merged"}
    before = _written(session)
    assert before  # conflicts among the first three agents, found by a full search
    counted = Counted(monkeypatch)
    _submit(session, "dog", [CONFLICTS[0][2], CONFLICTS[1][1]])
    assert merge_pending(session) == {"dog": "merged"}
    assert sorted(counted.analysed) == ["dog:C0", "dog:C1"]  # the others' keys were read back
    counted.reset()
    found = _written(session)
    assert found == _from_scratch(session)
    assert {pair for pair in found if any(c.startswith("dog:") for c in pair)}  # dog's new ones
    assert {pair: kinds for pair, kinds in found.items() if not any(c.startswith("dog:") for c in pair)} == before


def test_a_changed_canonical_source_makes_the_agent_analysed_again(session: SessionPaths,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """ant's source, with bee's DOI, sorts first: bee's claims now cite ``ant:S1`` (another signature)."""
    _submit(session, "bee", [CONFLICTS[0][1], CONFLICTS[1][1]], doi="10.1000/shared")
    _submit(session, "cat", [CONFLICTS[0][2], CONFLICTS[3][1]])
    assert set(merge_pending(session).values()) == {"merged"}
    assert ("bee:C0", "cat:C0") in _written(session)
    counted = Counted(monkeypatch)
    _submit(session, "ant", [CONFLICTS[1][2]], doi="10.1000/shared")
    assert merge_pending(session) == {"ant": "merged"}
    assert sorted(counted.analysed) == ["ant:C0", "bee:C0", "bee:C1"]  # cat unchanged: read back
    graph = orjson.loads(session.kg_json.read_bytes())
    bee = [c for c in graph["claims"] if c["id"].startswith("bee:")]
    assert {e["source_id"] for c in bee for e in c["evidence"]} == {"ant:S1"}
    found = _detected(graph)
    assert found == _from_scratch(session)
    assert ("bee:C0", "cat:C0") in found
    assert ("ant:C0", "bee:C1") not in found  # one source now: their disagreement is not independent



def test_a_changed_canonical_entity_of_the_same_names_changes_nothing_the_search_reads(
        session: SessionPaths, monkeypatch: pytest.MonkeyPatch) -> None:
    """ant's entity of the same name and type sorts first: bee's claims are now about ``ant:E1``, one
    thing under the same names as before, so their saved keys still hold."""
    _submit(session, "bee", [CONFLICTS[0][1]], entity="Acme")
    _submit(session, "cat", [CONFLICTS[0][2]], entity="Acme")
    assert set(merge_pending(session).values()) == {"merged"}
    counted = Counted(monkeypatch)
    _submit(session, "ant", [CONFLICTS[1][2]], entity="Acme")
    assert merge_pending(session) == {"ant": "merged"}
    assert sorted(counted.analysed) == ["ant:C0"]
    graph = orjson.loads(session.kg_json.read_bytes())
    assert {e for c in graph["claims"] for e in c["entity_ids"]} == {"ant:E1"}
    assert _detected(graph) == _from_scratch(session)
    assert ("bee:C0", "cat:C0") in _detected(graph)

@pytest.mark.parametrize("seed", [1, 2, 16, 20])
def test_random_merges_retries_and_rollbacks_across_processes_match_a_search_from_scratch(
        session: SessionPaths, monkeypatch: pytest.MonkeyPatch, seed: int) -> None:
    """Every step in a new process: agents merge or resubmit (a retry: another attempt, other
    statements or another DOI, so canonical sources move), or the session rolls back. Claims cite
    their own source or another agent's, so a canonical id that moves makes two claims
    (in)dependent without either agent's record changing."""
    rng = random.Random(seed)
    agents = ["ant", "bee", "cat", "dog", "eel", "fox"]
    counted = Counted(monkeypatch)
    seen = {"merged": 0, "rollback": 0, "read back": 0}
    for step in range(14):
        counted.reset()
        processor = Processor(session)
        head, merged = processor.ledger.head(), sorted(processor.state.records)
        processor.close()
        if head and rng.random() < 0.2:
            rollback_session(session, rng.randint(0, head - 1))
            merge_pending(session)  # a process after the rollback (nothing pending: the views only)
            seen["rollback"] += 1
        else:
            for agent in rng.sample(agents, rng.randint(1, 2)):
                doi = f"10.1000/{rng.choice('xy')}" if rng.random() < 0.6 else None
                statements = rng.sample(STATEMENTS, rng.randint(1, 4))
                others = [f"{a}:S1" for a in merged if a != agent]
                cited = [rng.choice(others) if others and rng.random() < 0.4 else "S1" for _ in statements]
                _submit(session, agent, statements, doi, cited, rng.choice([None, "Acme", "Initech"]))
            seen["merged"] += list(merge_pending(session).values()).count("merged")
        graph = orjson.loads(session.kg_json.read_bytes())
        seen["read back"] += len({c["id"] for c in graph["claims"]} - set(counted.analysed))
        assert _detected(graph) == _from_scratch(session), f"step {step}"
    assert seen["merged"] and seen["rollback"] and seen["read back"], seen
