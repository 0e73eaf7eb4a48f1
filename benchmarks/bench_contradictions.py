"""Time contradiction detection as the graph grows (CPU seconds), and print what it found.

Detection runs at every build of the views (it is derived, never stored), so it must stay a small
part of a views flush. Claims are synthetic sentences over made-up words drawn with Zipf-like
frequencies (``--vocabulary`` words: the default 8,000, or a small one such as 300, where every
word is in hundreds of claims); every 200th claim is a planted disagreement with the one before.
Per size, in CPU milliseconds (``time.process_time``; the machine's load does not inflate them):

* *full cold*: a search from scratch in a fresh process (every statement analysed);
* *+20 claims*: the search a views flush does after one agent's 20-claim merge, with the
  previous flush's cache in memory (``watch``), and the rows to write back to the ledger;
* *new process, saved*: the same flush in a new process (one-shot ``process``) seeded with what the
  views keep beside each record in the ledger: reading the rows back from JSON, the search, and the
  rows to write back for the agents whose claims or conflicts changed; *(search)*: the search alone;
* *new process, none*: the same without them (a ledger of an older version): every statement analysed,
  and every agent's row to write.

Run from the repository root: ``python benchmarks/bench_contradictions.py [--sizes 1000 5000 20000]
[--vocabulary 300]``.
"""

from __future__ import annotations

import argparse
import gc
import os
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import orjson

from orchestrator.contradictions import detect
from orchestrator.contradictions.search import ConflictCache
from orchestrator.contradictions.statements import analyse

SYLLABLES = ["al", "bra", "del", "om", "sig", "the", "kap", "gam", "ron", "lix", "tor", "mund", "vas", "quil",
             "dan", "pex", "sol", "bry", "cen", "dur"]
UNITS = ["%", " ms", " patients", " kg", " million dollars", ""]


def synthetic_claims(n: int, vocabulary: int, seed: int = 11) -> list[dict[str, Any]]:
    """``n`` claims of 5 words each drawn from ``vocabulary`` words, word r with probability ~ 1/r."""
    nouns = [f"{a}{b}{c}" for a in SYLLABLES for b in SYLLABLES for c in SYLLABLES][:vocabulary]
    rng = random.Random(seed)

    def draw(k: int) -> list[str]:
        found: list[str] = []
        while len(found) < k:
            word = nouns[min(len(nouns) - 1, int(len(nouns) ** rng.random()) - 1)]
            if word not in found:
                found.append(word)
        return found

    claims: list[dict[str, Any]] = []
    previous: tuple[list[str], float, str] | None = None
    for i in range(n):
        words, value, unit = draw(5), float(rng.choice([10, 12.5, 40, 250, 1200])), rng.choice(UNITS)
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


def cpu_ms(work: Callable[[], Any]) -> tuple[float, Any]:
    """CPU milliseconds of ``work``, the cyclic collector paused as a views flush pauses it."""
    gc.disable()
    try:
        started = time.process_time()
        result = work()
        return (time.process_time() - started) * 1000, result
    finally:
        gc.enable()


def calibration_ms() -> float:
    """CPU ms of a fixed pure-Python loop, printed with the figures: CPU time too grows on a loaded
    machine (cores shared by hyper-threads, caches), and this says by how much."""
    started = time.process_time()
    total = 0
    for i in range(10_000_000):
        total += i
    return (time.process_time() - started) * 1000


def saved_rows(cache: ConflictCache) -> list[bytes]:
    """What the views keep in the ledger after a flush: one JSON body per agent."""
    return [orjson.dumps(row) for row in cache.take_saved().values()]


def flush(cache: ConflictCache, claims: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The search of a views flush, then the rows of the agents whose claims or conflicts changed, as the
    JSON the views write to the ledger (orchestrator/commit/views.py)."""
    found = detect(claims, [], cache=cache)
    saved_rows(cache)
    return found


def seeded(rows: list[bytes]) -> ConflictCache:
    """A new process's search, seeded with the saved rows read back from JSON (orchestrator/commit/views.py)."""
    cache = ConflictCache()
    for body in rows:
        cache.seed_from(orjson.loads(body))
    return cache


def new_process_flush(rows: list[bytes], claims: list[dict[str, Any]]) -> tuple[float, float]:
    """CPU ms of a new process's flush: reading the rows back, then :func:`flush`; and of its search alone."""
    reading, cache = cpu_ms(lambda: seeded(rows))
    searching, _ = cpu_ms(lambda: detect(claims, [], cache=cache))
    writing, _ = cpu_ms(lambda: saved_rows(cache))
    return reading + searching + writing, searching


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 5000, 20000])
    parser.add_argument("--vocabulary", type=int, default=8000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print(f"cpus {os.cpu_count()}, load average {os.getloadavg()[0]:.2f}, vocabulary {args.vocabulary} words; "
          f"CPU ms; calibration loop {calibration_ms():.0f} ms")
    print(f"{'claims':>8} {'full cold':>10} {'+20 claims':>11} {'new, saved':>11} {'(search)':>9} {'new, none':>10} "
          f"{'found':>6}")
    found: list[dict[str, Any]] = []
    for n in args.sizes:
        claims = synthetic_claims(n + 20, args.vocabulary)
        before, added = claims[:n], claims[n:]
        analyse.cache_clear()
        cold, _ = cpu_ms(lambda: detect(before, []))  # noqa: B023
        step: list[float] = []
        fresh_saved: list[tuple[float, float]] = []
        fresh_none: list[tuple[float, float]] = []
        for _ in range(args.repeat):
            cache = ConflictCache()
            detect(before, [], cache=cache)  # the previous flush
            cache.take_saved()  # written by the previous flush
            elapsed, found = cpu_ms(lambda: flush(cache, before + added))  # noqa: B023
            step.append(elapsed)
            cache = ConflictCache()
            detect(before, [], cache=cache)  # the previous process's last flush
            rows = saved_rows(cache)
            analyse.cache_clear()  # a new process: no statement analysed yet
            fresh_saved.append(new_process_flush(rows, before + added))
            analyse.cache_clear()
            fresh_none.append(new_process_flush([], before + added))
        saved_ms = statistics.median(whole for whole, _ in fresh_saved)
        search_ms = statistics.median(search for _, search in fresh_saved)
        print(f"{n:>8} {cold:>10.0f} {statistics.median(step):>11.1f} {saved_ms:>11.0f} {search_ms:>9.0f} "
              f"{statistics.median(whole for whole, _ in fresh_none):>10.0f} {len(found):>6}")
    kinds: dict[str, int] = {}
    for item in found:
        kinds[item["kind"]] = kinds.get(item["kind"], 0) + 1
    print("kinds at the largest size:", ", ".join(f"{k} {v}" for k, v in sorted(kinds.items())) or "none")


if __name__ == "__main__":
    main()
