"""The conflict search's kept word index finds exactly what a search from scratch finds."""

from __future__ import annotations

import random
from typing import Any

from orchestrator.graph.conflict_search import ConflictCache, find_conflicts
from orchestrator.graph.conflicts import TOLERANCE
from tests.test_contradiction_detector import CONFLICTS, LOOK_ALIKES, claim

SUBJECTS = ["hospital admissions", "reading scores", "wind output", "ethanol yield", "ticket sales"]


def _statement(rng: random.Random) -> str:
    if rng.random() < 0.3:
        return rng.choice([s for _, a, b in CONFLICTS + LOOK_ALIKES for s in (a, b)])
    return (f"The {rng.choice(SUBJECTS)} grew by {rng.choice([12, 40, 41, 75])}% "
            f"in {rng.choice(['rural', 'urban'])} regions during {rng.choice([2019, 2020])}.")


def test_the_kept_index_matches_a_fresh_search_while_the_graph_grows_and_changes() -> None:
    """Hundreds of claims, so the index is re-ranked as it doubles; edits, removals, re-sourcing."""
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
