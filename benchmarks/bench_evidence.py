"""How long can evidence binding hold the merge mutex? Prints the worst cases within the documented limits.

    python benchmarks/bench_evidence.py

1. One 2,000-character snippet cited at the wrong page of a 40-page paper (18.7 s before the rewrite).
2. The worst artifact set within the limits: a 64 KiB claims.json full of 2,000-character snippets, each
   altered (so no exact match) and cited at the wrong page, against the largest accepted source text.
"""

from __future__ import annotations

import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from orchestrator.contract.sourcetexts import MAX_SOURCE_TEXT_BYTES
from orchestrator.graph.evidence import DEFAULT_TIME_BUDGET_S, bind_evidence, verify_snippet

random.seed(7)
VOCABULARY = [
    "".join(random.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(random.randint(2, 10))) for _ in range(3000)
]


def prose(chars: int) -> str:
    words: list[str] = []
    total = 0
    while total < chars:
        word = random.choice(VOCABULARY)
        words.append(word)
        total += len(word) + 1
    return " ".join(words)


def snippet_at_wrong_page() -> float:
    pages = [prose(4000) for _ in range(40)]
    text = "\f".join(pages)
    snippet = pages[10][500:2500].split(" ", 1)[1].rsplit(" ", 1)[0]
    started = time.perf_counter()
    result = verify_snippet(snippet, text, 30)
    elapsed = time.perf_counter() - started
    assert not result.verified and "found on page 11" in result.reason, result.reason
    return elapsed


def worst_artifact_set() -> tuple[float, int]:
    text = "\f".join(prose(MAX_SOURCE_TEXT_BYTES // 50) for _ in range(50))
    claims = []
    for i in range(30):  # 30 x ~2,100 bytes: a claims.json just under 64 KiB
        passage = prose(2000)
        altered = passage.replace(" ", " z ", 1)
        claims.append({"id": f"C{i}", "evidence": [{"source_id": "S1", "snippet": altered, "locator": {"page": 3}}]})
    contribution = {"items": {"sources": [{"id": "S1", "content_sha256": "x"}], "claims": claims}}
    started = time.perf_counter()
    bind_evidence(contribution, lambda _: None, lambda _: text)
    return time.perf_counter() - started, len(text)


def main() -> None:
    print(f"time budget per artifact set: {DEFAULT_TIME_BUDGET_S:.1f} s (exact matches only past it, "
          f"nothing past {2 * DEFAULT_TIME_BUDGET_S:.1f} s)")
    print(f"1. one 2,000-char snippet at the wrong page of a 40-page paper: {snippet_at_wrong_page() * 1000:.0f} ms")
    elapsed, size = worst_artifact_set()
    print(f"2. worst artifact set (30 altered 2,000-char snippets, wrong pages, {size / 1e6:.1f} MB text): "
          f"{elapsed:.2f} s holding the mutex")


if __name__ == "__main__":
    main()
