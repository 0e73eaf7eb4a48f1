"""Sources grouped per agent where no identifier is shared equal one de-duplication of all of them."""

from __future__ import annotations

import random
from typing import Any

from orchestrator.graph.source_groups import SourceGroups
from orchestrator.graph.unified import dedupe_sources


def _sources(rng: random.Random, agent: str) -> list[dict[str, Any]]:
    found = []
    for i in range(rng.randint(0, 4)):
        source: dict[str, Any] = {"id": f"{agent}:S{i}", "title": f"{agent} {i} {rng.random()}",
                                  "provenance": {"agent": agent}}
        roll = rng.random()
        if roll < 0.15:
            source["doi"] = f"10.1000/shared.{rng.randint(1, 4)}"  # may join other agents' sources
        elif roll < 0.3:
            source["url"] = f"https://example.org/{agent}/{rng.randint(1, 2)}"  # may join its own sources
        elif roll < 0.8:
            source["doi"] = f"10.1000/{agent}.{i}"
        found.append(source)
    return found


def test_kept_groups_equal_a_full_dedupe_through_changes() -> None:
    rng = random.Random(4)
    agents = [f"a{i:02d}" for i in range(12)]
    state: dict[str, tuple[int, list[dict[str, Any]]]] = {}
    groups = SourceGroups()
    seq = 0
    linked_and_alone = [False, False]
    for step in range(80):
        for agent in rng.sample(agents, rng.randint(1, 3)):
            seq += 1
            if agent in state and rng.random() < 0.2:
                del state[agent]  # a rollback removes the agent
            else:
                state[agent] = (seq, _sources(rng, agent))
        ordered = sorted(state)
        expected = dedupe_sources([s for a in ordered for s in state[a][1]])
        got = groups.dedupe({a: state[a][1] for a in state}, {a: state[a][0] for a in state})
        assert got == expected, f"step {step}"
        linked_and_alone[0] |= bool(groups._shared)
        linked_and_alone[1] |= bool(groups._alone)
    assert linked_and_alone == [True, True]  # both paths were exercised
