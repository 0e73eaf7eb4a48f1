"""Time contradiction detection as the graph grows, and print what it found.

Detection runs at every build of the views (it is derived, never stored), so it must stay
a small part of a views flush. Claims are synthetic sentences over 8,000 made-up words drawn
with Zipf-like frequencies: many share words (candidate pairs), a planted few disagree. Per
size: a full search cold (fresh statement cache, as after a process start) and warm, and the
search a flush really does after a merge: with the previous flush's cache, one agent's 20 new
claims compared against all; and the same in a new process (empty statement cache, the search
read back from the JSON that .cconductor/conflicts.json holds). Run from the repository root:
``python benchmarks/bench_contradictions.py [--sizes 1000 5000 20000]``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from orchestrator.graph.contradictions import ConflictCache, detect
from orchestrator.graph.statements import analyse

SYLLABLES = ["al", "bra", "del", "om", "sig", "the", "kap", "gam", "ron", "lix", "tor", "mund", "vas", "quil",
             "dan", "pex", "sol", "bry", "cen", "dur"]
#: 8,000 made-up content words, drawn with Zipf-like frequencies as in real text (--vocabulary to change).
NOUNS = [f"{a}{b}{c}" for a in SYLLABLES for b in SYLLABLES for c in SYLLABLES][:8000]
VOCABULARY = len(NOUNS)
UNITS = ["%", " ms", " patients", " kg", " million dollars", ""]


def _draw(rng: random.Random, k: int) -> list[str]:
    """``k`` distinct words, word r drawn with probability ~ 1/r (a few words are very common)."""
    found: list[str] = []
    while len(found) < k:
        word = NOUNS[min(len(NOUNS) - 1, int(VOCABULARY ** rng.random()) - 1)]
        if word not in found:
            found.append(word)
    return found


def synthetic_claims(n: int, seed: int = 11) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    claims: list[dict[str, Any]] = []
    previous: tuple[list[str], float, str] | None = None
    for i in range(n):
        words, value, unit = _draw(rng, 5), float(rng.choice([10, 12.5, 40, 250, 1200])), rng.choice(UNITS)
        if i % 200 == 1 and previous is not None:  # a planted conflict: the previous words, another number
            words, value, unit = previous[0], previous[1] * 3, previous[2]
        statement = f"The {words[0]} of {words[1]} {words[2]} reached {value:g}{unit} in {words[3]} {words[4]}."
        if i % 97 == 0:
            statement = statement.replace("reached", "did not reach")
        agent = f"agent-{i % 25}"
        claims.append({"id": f"{agent}:C{i}", "statement": statement, "provenance": {"agent": agent},
                       "evidence": [{"source_id": f"{agent}:S{i % 40}", "snippet": "s"}]})
        previous = (words, value, unit)
    return claims


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 5000, 20000])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print(f"cpus {os.cpu_count()}, load average {os.getloadavg()[0]:.2f}")
    print(f"{'claims':>8} {'full cold ms':>13} {'full warm ms':>13} {'+20 claims ms':>14} "
          f"{'new process ms':>15} {'found':>6}")
    found: list[dict[str, Any]] = []
    for n in args.sizes:
        claims = synthetic_claims(n + 20)
        before, added = claims[:n], claims[n:]
        analyse.cache_clear()
        started = time.perf_counter()
        found = detect(before, [])
        cold = (time.perf_counter() - started) * 1000
        warm, step = [], []
        for _ in range(args.repeat):
            started = time.perf_counter()
            detect(before, [])
            warm.append((time.perf_counter() - started) * 1000)
            cache = ConflictCache()
            detect(before, [], cache=cache)  # the previous flush
            started = time.perf_counter()
            found = detect(before + added, [], cache=cache)  # the flush after one agent's 20-claim merge
            step.append((time.perf_counter() - started) * 1000)
        saved = json.dumps(cache.to_json())  # what .cconductor/conflicts.json holds after that flush
        analyse.cache_clear()
        started = time.perf_counter()
        detect(before + added, [], cache=ConflictCache.from_json(json.loads(saved)))
        fresh = (time.perf_counter() - started) * 1000
        print(f"{n:>8} {cold:>13.0f} {statistics.median(warm):>13.0f} {statistics.median(step):>14.0f} "
              f"{fresh:>15.0f} {len(found):>6}")
    kinds: dict[str, int] = {}
    for item in found:
        kinds[item["kind"]] = kinds.get(item["kind"], 0) + 1
    print("kinds at the largest size:", ", ".join(f"{k} {v}" for k, v in sorted(kinds.items())) or "none")


if __name__ == "__main__":
    main()
