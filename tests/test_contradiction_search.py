"""The contradiction search finds exactly what comparing every pair finds, kept or fresh, filed or scanned."""

from __future__ import annotations

import itertools
import random
from typing import Any

import orjson

from orchestrator.contradictions.entities import groups
from orchestrator.contradictions.entries import Entry, keys_of, pair_conflict
from orchestrator.contradictions.search import ConflictCache, find_conflicts
from orchestrator.contradictions.statements import analyse
from tests.test_contradiction_detector import CONFLICTS, LOOK_ALIKES, claim

SUBJECTS = ["hospital admissions", "reading scores", "wind output", "ethanol yield", "ticket sales"]
NO_ENTITIES = groups([])


def _statement(rng: random.Random) -> str:
    if rng.random() < 0.3:
        return rng.choice([s for _, a, b in CONFLICTS + LOOK_ALIKES for s in (a, b)])
    return (f"The {rng.choice(SUBJECTS)} grew by {rng.choice([12, 40, 41, 75])}% "
            f"in {rng.choice(['rural', 'urban', ''])} regions during {rng.choice([2019, 2020])}.")


def _every_pair(items: list[dict[str, Any]]) -> dict[tuple[str, str], Any]:
    """The definition: every pair compared by the rules, no search at all."""
    entries = {c["id"]: Entry(c, (), frozenset(), (), analyse(c["statement"]).topic) for c in items}
    found = {}
    for a, b in itertools.combinations(sorted(entries), 2):
        conflict = pair_conflict(entries[a], entries[b])
        if conflict is not None:
            found[(a, b)] = conflict
    return found


def test_keys_put_a_topic_and_the_same_topic_with_one_word_more_under_one_key() -> None:
    assert set(keys_of(["a", "b"])) & set(keys_of(["a", "b", "c"]))
    assert set(keys_of(["a", "b", "c"])) & set(keys_of(["b", "c", "a"]))
    assert keys_of(["a"]) == ()  # too little to compare
    assert not set(keys_of(["a", "b"])) & set(keys_of(["a", "c", "d"]))


def test_the_kept_search_matches_every_pair_while_the_graph_grows_and_changes() -> None:
    """Hundreds of claims; edits, removals, re-sourcing, one cache throughout."""
    rng = random.Random(11)
    claims: dict[str, dict[str, Any]] = {}
    cache = ConflictCache()
    found_any = False
    for step in range(20):
        for _ in range(rng.randint(5, 25)):
            action = rng.random()
            if action < 0.7 or not claims:
                cid = f"{rng.choice('abcdefgh')}:C{rng.randint(1, 60)}"
                claims[cid] = claim(cid, _statement(rng), f"{cid.partition(':')[0]}:S{rng.randint(1, 3)}")
            elif action < 0.85:
                del claims[rng.choice(sorted(claims))]
            else:
                cid = rng.choice(sorted(claims))
                claims[cid] = {**claims[cid], "evidence": [{"source_id": f"z:S{rng.randint(1, 3)}", "snippet": "s"}]}
        by_id = {c["id"]: c for c in claims.values()}
        incremental = find_conflicts(by_id, NO_ENTITIES, cache)
        assert incremental == _every_pair(list(claims.values())), f"step {step}"
        found_any = found_any or bool(incremental)
    assert found_any


def test_a_new_process_scans_for_its_few_changed_claims_and_files_them_all_for_many() -> None:
    """Seeded from saved rows: the claims as saved are held, and a pass over their keys finds the changed claims'
    pairs, search after search; a change to many claims files them all and goes on incrementally. Every result
    is every pair's."""
    rng = random.Random(5)
    claims = {f"{a}:C{i}": claim(f"{a}:C{i}", _statement(rng), f"{a}:S1") for a in "abc" for i in range(60)}
    first = ConflictCache()
    find_conflicts(dict(claims), NO_ENTITIES, first)
    saved = orjson.loads(orjson.dumps(first.take_saved()))
    _, statement, opposite = CONFLICTS[0]
    claims["a:C3"] = claim("a:C3", statement, "a:S2")
    claims["d:C1"] = claim("d:C1", opposite, "d:S1")

    fresh = ConflictCache()
    for row in saved.values():
        fresh.seed_from(row)
    found = find_conflicts(dict(claims), NO_ENTITIES, fresh)
    assert fresh.scanned and not fresh.filed and fresh.dirty >= {"a", "d"}
    assert found == _every_pair(list(claims.values())) and ("a:C3", "d:C1") in found
    assert fresh.held and len(fresh.entries) + len(fresh.held) == len(claims)  # some never made entries
    claims["b:C7"] = claim("b:C7", opposite, "b:S9")
    del claims["c:C5"]
    assert find_conflicts(dict(claims), NO_ENTITIES, fresh) == _every_pair(list(claims.values()))
    assert not fresh.filed
    for cid in rng.sample(sorted(claims), 40):
        claims[cid] = claim(cid, _statement(rng), f"{cid.partition(':')[0]}:S{rng.randint(1, 3)}")
    assert find_conflicts(dict(claims), NO_ENTITIES, fresh) == _every_pair(list(claims.values()))
    assert fresh.filed and not fresh.held
    claims["b:C8"] = claim("b:C8", statement, "b:S9")
    assert find_conflicts(dict(claims), NO_ENTITIES, fresh) == _every_pair(list(claims.values()))


def test_names_of_an_entity_group_that_change_make_its_claims_analysed_again() -> None:
    a = {**claim("a:C1", "NYC has 8.3 million residents.", "a:S1"), "entity_ids": ["a:E1"]}
    b = {**claim("b:C1", "New York City has 8.8 million residents.", "b:S1"), "entity_ids": ["b:E1"]}
    apart = groups([{"id": "a:E1", "name": "NYC", "type": "city"}, {"id": "b:E1", "name": "New York City"}])
    one = groups([{"id": "a:E1", "name": "NYC", "type": "city", "aliases": ["New York City"]},
                  {"id": "b:E1", "name": "New York City", "type": "place"}])
    cache = ConflictCache()
    by_id = {"a:C1": a, "b:C1": b}
    assert find_conflicts(by_id, apart, cache) == {}
    assert set(find_conflicts(by_id, one, cache)) == {("a:C1", "b:C1")}  # an alias joined them
    assert find_conflicts(by_id, apart, cache) == {}
