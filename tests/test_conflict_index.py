"""The conflict search's kept word index finds exactly what a search from scratch finds."""

from __future__ import annotations

import random
from typing import Any

import pytest

from orchestrator.graph import word_index
from orchestrator.graph.conflict_search import ConflictCache, find_conflicts
from orchestrator.graph.conflicts import TOLERANCE
from tests.test_contradiction_detector import CONFLICTS, LOOK_ALIKES, claim

SUBJECTS = ["hospital admissions", "reading scores", "wind output", "ethanol yield", "ticket sales"]


def _statement(rng: random.Random) -> str:
    if rng.random() < 0.3:
        return rng.choice([s for _, a, b in CONFLICTS + LOOK_ALIKES for s in (a, b)])
    return (f"The {rng.choice(SUBJECTS)} grew by {rng.choice([12, 40, 41, 75])}% "
            f"in {rng.choice(['rural', 'urban'])} regions during {rng.choice([2019, 2020])}.")


@pytest.mark.parametrize("stop_df", [word_index.STOP_DF, 25])
def test_the_kept_index_matches_a_fresh_search_while_the_graph_grows_and_changes(
        monkeypatch: pytest.MonkeyPatch, stop_df: int) -> None:
    """Hundreds of claims, so the index is re-ranked as it doubles; edits, removals, re-sourcing.
    With few claims per stop word, words become stop words and stop being ones on the way."""
    monkeypatch.setattr(word_index, "STOP_DF", stop_df)
    rng = random.Random(11)
    claims: dict[str, dict[str, Any]] = {}
    cache = ConflictCache()
    found_any = False
    for step in range(40):
        for _ in range(rng.randint(5, 40)):
            action = rng.random()
            if action < 0.7 or not claims:
                cid = f"{rng.choice('abcdefgh')}:C{rng.randint(1, 60)}"
                claims[cid] = claim(cid, _statement(rng), f"{cid.partition(':')[0]}:S{rng.randint(1, 3)}")
            elif action < 0.85:
                del claims[rng.choice(sorted(claims))]
            else:
                cid = rng.choice(sorted(claims))
                claims[cid] = {**claims[cid], "evidence": [{"source_id": f"z:S{rng.randint(1, 3)}", "snippet": "s"}]}
        items = list(claims.values())
        incremental = find_conflicts(items, TOLERANCE, cache)
        assert incremental == find_conflicts(items, TOLERANCE), f"step {step}"
        found_any = found_any or bool(incremental)
    assert found_any
    assert cache.index is not None and cache.index.ranked_at > 100  # the snapshot was taken again
    assert bool(cache.index.stop) is (stop_df < 100)
    reloaded = ConflictCache.from_json(cache.to_json())  # a new process: only claims holding no flipped word kept
    assert reloaded.stop == cache.stop
    assert find_conflicts(items[5:], TOLERANCE, reloaded) == find_conflicts(items[5:], TOLERANCE)


def test_statements_of_stop_words_only_are_compared_with_none(monkeypatch: pytest.MonkeyPatch) -> None:
    """A word held by more than STOP_DF claims does not make two statements about the same thing."""
    a = claim("a:C1", "The trial enrolled 120 patients across three hospitals.", "a:S1")
    b = claim("b:C1", "The trial enrolled 200 patients across three hospitals.", "b:S1")
    fillers = [claim(f"c:C{i}", "Trial hospitals enrolled patients across three regions.", f"c:S{i}")
               for i in range(4)]
    pair = ("a:C1", "b:C1")
    assert pair in find_conflicts([a, b, *fillers], TOLERANCE)  # 6 claims hold "trial": not a stop word yet
    monkeypatch.setattr(word_index, "STOP_DF", 5)
    assert pair not in find_conflicts([a, b, *fillers], TOLERANCE)  # every word of both is a stop word now
    cache = ConflictCache()
    assert pair in find_conflicts([a, b, *fillers[:3]], TOLERANCE, cache)  # 5 hold them: compared
    assert pair not in find_conflicts([a, b, *fillers], TOLERANCE, cache)  # one more: the kept pair goes too
    assert pair in find_conflicts([a, b, *fillers[:3]], TOLERANCE, cache)  # and comes back


def test_claims_passed_in_parts_skip_unchanged_parts_and_still_match_a_fresh_search() -> None:
    """As the views pass them: one dict per agent, the same object while the agent's claims are unchanged."""
    rng = random.Random(5)
    parts: dict[str, dict[str, dict[str, Any]]] = {}
    cache = ConflictCache()
    for step in range(30):
        for agent in rng.sample("abcdefgh", rng.randint(1, 3)):
            if rng.random() < 0.2:
                parts.pop(agent, None)
                continue
            ids = [f"{agent}:C{i}" for i in range(rng.randint(0, 12))]
            parts[agent] = {cid: claim(cid, _statement(rng), f"{agent}:S{rng.randint(1, 3)}") for cid in ids}
        groups = [parts[a] for a in sorted(parts)]
        items = [c for g in groups for c in g.values()]
        by_id = {cid: c for g in groups for cid, c in g.items()}
        incremental = find_conflicts(items, TOLERANCE, cache, by_id=by_id, groups=groups)
        assert incremental == find_conflicts(items, TOLERANCE), f"step {step}"
        assert cache.index is not None and set(cache.index.keys) == set(by_id)


def test_a_new_process_reuses_the_saved_content_words_and_finds_what_a_fresh_search_finds(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The cache read back from JSON carries each claim's content words: only the edited or new
    statements are analysed again, and the pairs are those of a search from scratch."""
    import orjson

    rng = random.Random(5)
    claims = {f"a:C{i}": claim(f"a:C{i}", _statement(rng), "a:S1") for i in range(120)}
    first = ConflictCache()
    find_conflicts(list(claims.values()), TOLERANCE, first)
    saved = orjson.loads(orjson.dumps(first.to_json()))
    _, statement, opposite = CONFLICTS[0]
    claims["a:C3"] = claim("a:C3", statement, "a:S2")
    claims["b:C1"] = claim("b:C1", opposite, "b:S1")

    analysed: list[str] = []
    real = word_index.analyse
    monkeypatch.setattr(word_index, "analyse", lambda text: analysed.append(text) or real(text))
    reread = ConflictCache.from_json(saved)
    found = find_conflicts(list(claims.values()), TOLERANCE, reread)

    assert sorted(analysed) == sorted([claims["a:C3"]["statement"], claims["b:C1"]["statement"]])
    assert found == find_conflicts(list(claims.values()), TOLERANCE)
    assert ("a:C3", "b:C1") in found


def test_saved_words_are_not_used_for_a_claim_whose_signature_changed() -> None:
    """A damaged or stale word list under another signature is ignored, never trusted."""
    target = claim("a:C1", "Wind output grew by 12% in urban regions during 2019.", "a:S1")
    cache = ConflictCache.from_json({"rules": 3, "tolerance": TOLERANCE, "signatures": {"a:C1": "not-it"},
                                     "stop": [], "conflicts": [], "words": {"a:C1": "bogus words"}})
    find_conflicts([target], TOLERANCE, cache)
    assert cache.index is not None
    assert cache.index.words["a:C1"] == word_index.analyse(target["statement"]).content
