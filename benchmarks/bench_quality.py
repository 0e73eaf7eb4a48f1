"""Time the quality score and gate on a synthetic graph of 500 claims and 100 sources.

Upstream's bash gate took 46.6 s for 50 claims and crashed at 200; the target here is well
under a second. Run from the repository root: ``python benchmarks/bench_quality.py``.
"""

from __future__ import annotations

import statistics
import time
from datetime import UTC, datetime

from synthetic import unified_graph

from orchestrator.graph.quality import score_graph
from orchestrator.graph.quality_gate import gate
from orchestrator.report.html import render_html
from orchestrator.report.markdown import render_markdown
from orchestrator.run.missions import load_mission


def main() -> None:
    graph = unified_graph()
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
