"""Time the quality score and gate on a synthetic graph of 500 claims and 100 sources.

Upstream's bash gate took 46.6 s for 50 claims and crashed at 200; the target here is well
under a second. Run from the repository root: ``python benchmarks/bench_quality.py``.
"""

from __future__ import annotations

import random
import statistics
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from orchestrator.graph.quality import score_graph
from orchestrator.graph.quality_gate import gate
from orchestrator.report.html import render_html
from orchestrator.report.markdown import render_markdown
from orchestrator.run.missions import load_mission

TYPES = ["journal-article", "conference-paper", "preprint", "web-page", "report", "book"]


def synthetic_graph(claims: int = 500, sources: int = 100, seed: int = 7) -> dict[str, Any]:
    rng = random.Random(seed)
    source_items = [
        {"id": f"a:S{i}", "type": rng.choice(TYPES), "title": f"Source {i}", "authors": ["Ada Lovelace"],
         "year": 2000 + i % 25, "peer_reviewed": rng.random() < 0.5, "doi": f"10.1000/{i}" if i % 3 else None,
         "url": f"https://example.org/{i}", "aliases": [f"a:S{i}", f"b:S{i}"]}
        for i in range(sources)
    ]
    claim_items = []
    for i in range(claims):
        evidence = [
            {"source_id": f"{rng.choice('ab')}:S{rng.randrange(sources)}", "snippet": "quoted text",
             "locator": {"page": rng.randint(1, 30)},
             "verification": {"verified": rng.random() < 0.9, "score": 95.0, "matched_text": "quoted text",
                              "page": 3, "reason": "r"}}
            for _ in range(rng.randint(1, 3))
        ]
        claim = {"id": f"a:C{i}", "statement": f"Claim {i}.", "confidence": rng.random(),
                 "priority": rng.choice(["high", "medium", "low"]), "evidence": evidence,
                 "sub_question_id": f"planner:Q{i % 12}"}
        if i % 4 == 0:
            claim["assessments"] = [{"confidence": rng.random(), "status": "corroborated",
                                     "by": "fact-checker"}]
        claim_items.append(claim)
    return {
        "planner": {"sub_questions": [{"id": f"Q{i}", "question": f"Q {i}?", "priority": "high"}
                                      for i in range(15)]},
        "sources": source_items, "claims": claim_items,
        "gaps": [{"id": f"a:G{i}", "description": "gap", "priority": "high"} for i in range(20)],
        "contradictions": [{"id": f"a:X{i}", "claim_ids": [f"a:C{i}", f"a:C{i + 1}"], "description": "d",
                            "status": "open" if i % 2 else "resolved"} for i in range(30)],
    }


def main() -> None:
    graph = synthetic_graph()
    criteria = load_mission("academic-research").to_dict()["success_criteria"]
    now = datetime(2026, 1, 1, tzinfo=UTC)
    timings = []
    for _ in range(20):
        start = time.perf_counter()
        report = score_graph(graph, now=now)
        result = gate(report, graph, criteria)
        report.to_json(result)
        timings.append(time.perf_counter() - start)
    print(f"score + gate, {len(graph['claims'])} claims / {len(graph['sources'])} sources: "
          f"median {statistics.median(timings) * 1000:.1f} ms, max {max(timings) * 1000:.1f} ms "
          f"(score {report.score}, gate {'passed' if result.passed else 'failed'}, "
          f"{len(result.recommendations)} recommendations)")
    quality = report.to_json(result)
    start = time.perf_counter()
    for render in (render_markdown, render_html):
        render(graph, session={"query": "q"}, quality=quality, mission=None, outline=None, ledger=None)
    print(f"render Markdown + HTML of the same graph: {(time.perf_counter() - start) * 1000:.1f} ms")


if __name__ == "__main__":
    main()
