"""How long can evidence binding hold the merge mutex? The worst cases within the documented limits.

    python benchmarks/bench_evidence.py

The evidence checks of one submission share a work limit counted in characters compared
(graph/evidence_budget.py), not in seconds, so the verdict never depends on the machine's load;
what it costs in time does. Printed, wall and CPU time:

1. One 2,000-character snippet cited at the wrong page of a 40-page paper (18.7 s before the rewrite).
2. The worst artifact set within the limits: a 64 KiB claims.json of 30 altered 2,000-character
   snippets, each cited at the wrong page, against the largest accepted source text (8 MiB): how much
   of the limit it spends, how many searches were cut short, and the time.

Target: the worst set holds the mutex no more than a few seconds of one core (the limit is about
3 s of the project machine's core for approximate searches, 6 s for exact ones).
"""

from __future__ import annotations

import random
import time

from harness import machine, say
from synthetic import prose

from orchestrator.contract.sourcetexts import MAX_SOURCE_TEXT_BYTES
from orchestrator.graph.evidence import bind_evidence, verify_snippet
from orchestrator.graph.evidence_budget import DEFAULT_BUDGET, Budget


def snippet_at_wrong_page() -> tuple[float, float]:
    rng = random.Random(7)
    pages = [prose(rng, 4000) for _ in range(40)]
    snippet = pages[10][500:2500].split(" ", 1)[1].rsplit(" ", 1)[0]
    wall, cpu = time.perf_counter(), time.process_time()
    result = verify_snippet(snippet, "\f".join(pages), 30)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    assert not result.verified and "found on page 11" in result.reason, result.reason
    return wall, cpu


def worst_artifact_set() -> None:
    rng = random.Random(7)
    text = "\f".join(prose(rng, MAX_SOURCE_TEXT_BYTES // 50) for _ in range(50))
    claims = []
    for i in range(30):  # 30 x ~2,100 bytes: a claims.json just under 64 KiB
        altered = prose(rng, 2000).replace(" ", " z ", 1)
        claims.append({"id": f"C{i}", "evidence": [{"source_id": "S1", "snippet": altered, "locator": {"page": 3}}]})
    contribution = {"items": {"sources": [{"id": "S1", "content_sha256": "x"}], "claims": claims}}
    budget = Budget()
    wall, cpu = time.perf_counter(), time.process_time()
    bind_evidence(contribution, lambda _: None, lambda _: text, budget=budget)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    cut = sum(bool(c["evidence"][0]["verification"].get("cut_short")) for c in claims)
    say(f"2. worst artifact set (30 altered 2,000-character snippets at wrong pages, {len(text) / 1e6:.1f} MB text): "
        f"{wall:.2f} s wall, {cpu:.2f} s CPU holding the mutex; spent {budget.spent / DEFAULT_BUDGET:.2f} of the "
        f"limit, {cut} of 30 searches cut short")


def main() -> None:
    say(f"evidence work limit per submission: {DEFAULT_BUDGET:,} units ({machine()})")
    wall, cpu = snippet_at_wrong_page()
    say(f"1. one 2,000-character snippet at the wrong page of a 40-page paper: {wall * 1000:.0f} ms wall, "
        f"{cpu * 1000:.0f} ms CPU")
    worst_artifact_set()


if __name__ == "__main__":
    main()
