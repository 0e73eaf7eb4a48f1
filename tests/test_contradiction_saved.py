"""A new process seeded with the saved rows finds exactly what a full search finds, whatever the merge changed.

The rows stand in for the ledger's ``derived`` table: one per agent, written back for the agents a flush
marks, and dropped when an agent's record changes (the views read only the rows of each agent's current
record, orchestrator/session/ledger.py ``derived``).
"""

from __future__ import annotations

import base64
import random
from typing import Any

import orjson
import pytest

from orchestrator.contradictions.entities import groups
from orchestrator.contradictions.saved import read_row
from orchestrator.contradictions.search import ConflictCache, find_conflicts
from tests.test_contradiction_detector import CONFLICTS, LOOK_ALIKES, claim

POOL = [s for _, a, b in CONFLICTS + LOOK_ALIKES for s in (a, b)]
AGENTS = "abcdefg"
ENTITIES: list[dict[str, Any]] = [{"id": "a:E1", "name": "Acme", "type": "company"},
                                  {"id": "b:E1", "name": "Initech", "type": "company"}]
ALIASED: list[dict[str, Any]] = [{"id": "a:E1", "name": "Acme", "type": "company", "aliases": ["Initech"]},
           {"id": "b:E1", "name": "Initech", "type": "company"}]


def _claims_of(rng: random.Random, agent: str, count: int) -> dict[str, dict[str, Any]]:
    found = {}
    for i in rng.sample(range(1, 40), count):
        cid = f"{agent}:C{i}"
        extra = {"entity_ids": [rng.choice(["a:E1", "b:E1"])]} if rng.random() < 0.15 else {}
        found[cid] = claim(cid, rng.choice(POOL), f"{rng.choice(AGENTS)}:S{rng.randint(1, 2)}", **extra)
    return found


def _older(row: dict[str, Any]) -> dict[str, Any]:
    """The row as the version before this one saved it: ``claims``: id -> [context, keys]."""
    raw = base64.b64decode(row["keys"])
    keys = [int.from_bytes(raw[i:i + 8], "little", signed=True) for i in range(0, len(raw), 8)]
    lines, at = {}, 0
    for cid, context, size in zip(row["ids"], row["contexts"], row["sizes"], strict=True):
        lines[cid] = [context, keys[at:at + size]]
        at += size
    return {"claims": lines, "conflicts": row["conflicts"]}


@pytest.mark.parametrize("seed", [3, 8, 21])
def test_a_new_process_after_merges_that_add_edit_and_remove_finds_what_a_full_search_finds(seed: int) -> None:
    """Each step is a new process: agents resubmit (claims added, edited, removed: their rows dropped), a
    source moves (a claim re-sourced without its agent's record changing), an alias joins two entities; some
    steps read the rows back in the older format, or have none at all."""
    rng = random.Random(seed)
    records = {agent: _claims_of(rng, agent, rng.randint(30, 38)) for agent in AGENTS[:5]}
    ledger: dict[str, bytes] = {}
    seen = {"saved": 0, "scanned": 0, "found": 0, "older": 0}
    for step in range(12):
        entities = ALIASED if step in (6, 7) else ENTITIES
        changed = rng.sample("fg", 1) if rng.random() < 0.6 else rng.sample(AGENTS, 2)
        for agent in changed:
            if agent in records and rng.random() < 0.15:
                del records[agent]  # rolled back
                continue
            mine = dict(records.get(agent, {}))
            for cid in rng.sample(sorted(mine), min(len(mine), rng.randint(0, 3))):
                del mine[cid]
            for cid in rng.sample(sorted(mine), min(len(mine), rng.randint(0, 3))):
                mine[cid] = {**mine[cid], "statement": rng.choice(POOL)}  # edited
            mine.update(_claims_of(rng, agent, rng.randint(1, 4 if agent in "fg" else 8)))
            records[agent] = mine
            ledger.pop(agent, None)  # a new record: its row no longer applies
        for agent in [a for a in ledger if a not in records]:
            del ledger[agent]
        if step % 4 == 1 and records:  # a canonical source moves: the claims' records stay as they were
            agent = rng.choice(sorted(records))
            for cid in list(records[agent])[:2]:
                records[agent][cid] = {**records[agent][cid], "evidence": [{"source_id": "z:S1", "snippet": "s"}]}
        by_id = {cid: c for agent in sorted(records) for cid, c in records[agent].items()}
        cache = ConflictCache()
        older = step % 5 == 2
        for body in ([] if step % 6 == 5 else ledger.values()):
            row = orjson.loads(body)
            cache.seed_from(_older(row) if older else row)
        seen["older"] += older and bool(ledger)
        analysed = cache.update(by_id, groups(entities))
        found = cache.search(analysed)
        seen["saved"] += len(by_id) - len(analysed)
        seen["scanned"] += cache.scanned and not cache.filed
        assert found == find_conflicts(by_id, groups(entities)), f"step {step}"  # a full search
        seen["found"] += len(found)
        ledger.update({agent: orjson.dumps(row) for agent, row in cache.take_saved().items() if agent in records})
        # the next flush in the same process (watch) agrees too
        extra = _claims_of(rng, "g", 2)
        assert find_conflicts({**by_id, **extra}, groups(entities), cache) == find_conflicts(
            {**by_id, **extra}, groups(entities))
    assert all(seen.values()), seen


def test_rows_that_do_not_hold_are_not_read() -> None:
    cache = ConflictCache()
    find_conflicts({"a:C1": claim("a:C1", CONFLICTS[0][1], "a:S1"), "a:C2": claim("a:C2", POOL[5], "a:S1")},
                   groups([]), cache)
    row = orjson.loads(orjson.dumps(cache.take_saved()["a"]))
    assert read_row(row) is not None and read_row(_older(row)) is not None
    broken = [
        {**row, "keys": row["keys"][:-4]},  # keys cut short
        {**row, "keys": "not base64!"},
        {**row, "sizes": [True] * len(row["sizes"])},
        {**row, "sizes": [-1, *row["sizes"][1:]]},
        {**row, "ids": ["a:C1", "b:C2"]},  # another agent's claim
        {**row, "ids": ["a:C1", "a:C1"]},
        {**row, "contexts": [1, 2]},
        {**row, "ids": row["ids"][:1]},
        {"claims": {"a:C1": ["a:S1", [1, "2"]]}},
        {"claims": {"a:C1": ["a:S1", [1, 2**64]]}},
        {"claims": {"a:C1": "damaged"}},
        {},
    ]
    for item in broken:
        assert read_row(item) is None, item
