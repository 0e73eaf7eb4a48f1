"""Precision and recall of contradiction detection on the labelled pairs of tests/data/contradictions/.

``dev.json``: the pairs the rules were designed and tuned on; ``heldout.json``: pairs written before the
rules and never used to tune them, reported apart. Each pair is two agents' claims (own sources, the
entities they wrote) run through ``detect`` as the views run it. Prints the figures per set and per
category, and the pairs it gets wrong. Run from the repository root:
``python benchmarks/bench_contradiction_quality.py``.
"""

from __future__ import annotations

import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from orchestrator.contradictions import detect
from tests.helpers.contradiction_pairs import DEV, HELDOUT, load, score


def main() -> None:
    for path in (DEV, HELDOUT):
        pairs = load(path)
        verdicts = {p.id: bool(detect(p.claims, [], entities=p.entities)) for p in pairs}
        found = score(pairs, verdicts)
        real = sum(p.real for p in pairs)
        print(f"{path.name}: {len(pairs)} pairs ({real} disagreements, {len(pairs) - real} look-alikes): "
              f"precision {found.precision:.2f}, recall {found.recall:.2f} "
              f"(TP {found.true_positives}, FP {found.false_positives}, FN {found.false_negatives}, "
              f"TN {found.true_negatives})")
        by_category: dict[str, list[bool]] = defaultdict(list)
        for pair in pairs:
            by_category[f"{pair.label}: {pair.category}"].append(verdicts[pair.id] == pair.real)
        for category, right in sorted(by_category.items()):
            print(f"    {sum(right)}/{len(right)}  {category}")
        for pair in pairs:
            if verdicts[pair.id] != pair.real:
                what = "missed" if pair.real else "flagged"
                print(f"  {what} {pair.id}: {' | '.join(c['statement'] for c in pair.claims)}")


if __name__ == "__main__":
    main()
