"""Cost of one merge's RDF work (replace_agent + validate_agent) as the session graph grows.

Run: ``python benchmarks/bench_shacl.py [--sizes 10000 100000] [--repeat 15]``.
Prints medians; the target is an incremental merge of a 20-claim agent in <= 50 ms at 100k
triples. Also prints full validation at the smallest size and serialisation costs.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from orchestrator.rdf.convert import AgentGraph, contribution_to_graph
from orchestrator.rdf.shacl import shapes
from orchestrator.rdf.state import RdfState
from orchestrator.rdf.write import serialize, serialize_graphs, to_dataset

SESSION = "bench"


def synthetic_contribution(agent: str, claims: int = 20, cite: str | None = None,
                           variant: int = 0) -> dict[str, Any]:
    """A realistic agent: sources, entities, claims with two evidence items, links between them.

    ``cite`` names another agent whose S0 every claim's second evidence item cites, so that
    cross-agent references (and their neighbours in incremental validation) are exercised.
    ``variant`` changes one claim, as a retry would. Every sixth claim is high priority with no
    verified evidence, so each agent has a few violations to report.
    """
    def prov(file: str, pointer: str) -> dict[str, Any]:
        return {"agent": agent, "file": f"artifacts/{agent}/{file}", "pointer": pointer,
                "artifact_sha256": "0" * 64, "attempt": 1, "merged_at": "2026-11-22T09:30:00Z"}

    n_sources = max(1, claims // 2)
    sources = [{"id": f"{agent}:S{i}", "local_id": f"S{i}", "type": "journal-article",
                "title": f"Paper {i} of {agent}", "authors": ["A. Author", "B. Author"], "year": 2020,
                "doi": f"10.1234/{agent}.{i}", "content_sha256": f"{i:064x}",
                "provenance": prov("sources.json", f"/sources/{i}")} for i in range(n_sources)]
    entities = [{"id": f"{agent}:E{i}", "local_id": f"E{i}", "name": f"Entity {i}", "type": "method",
                 "provenance": prov("entities.json", f"/entities/{i}")} for i in range(5)]
    claim_items = []
    for i in range(claims):
        first = {"verified": i % 6 != 0, "score": 100.0, "matched_text": "x", "page": 1}
        second = {"verified": i % 3 != 0, "score": 71.0, "matched_text": "y"}
        evidence = [{"source_id": f"{agent}:S{i % n_sources}", "snippet": f"snippet {i} of {agent}",
                     "locator": {"page": 1 + i % 9}, "verification": first},
                    {"source_id": f"{cite or agent}:S0", "snippet": f"second snippet {i}",
                     "verification": second}]
        statement = f"Claim {i} of {agent}" + (f" (v{variant})" if i == 0 and variant else "")
        claim_items.append({"id": f"{agent}:C{i}", "local_id": f"C{i}", "statement": statement,
                            "confidence": 0.5 + (i % 5) / 10, "priority": ("high", "medium", "low")[i % 3],
                            "entity_ids": [f"{agent}:E{i % 5}"], "evidence": evidence,
                            "provenance": prov("claims.json", f"/claims/{i}")})
    relationships = [{"id": f"{agent}:R{i}", "subject": f"{agent}:E{i}", "predicate": "related-to",
                      "object": f"{agent}:C{i}",
                      "provenance": prov("relationships.json", f"/relationships/{i}")}
                     for i in range(min(3, claims))]
    finding = {"id": f"{agent}:K0", "statement": "finding", "claim_ids": [f"{agent}:C0"],
               "provenance": prov("key-findings.json", "/key_findings/0")}
    return {"agent": agent, "attempt": 1, "merged_at": "2026-11-22T09:30:00Z", "artifact_sha256": "0" * 64,
            "files": {"sources.json": "1" * 64, "claims.json": "2" * 64},
            "items": {"sources": sources, "entities": entities, "claims": claim_items,
                      "relationships": relationships, "key_findings": [finding]}}


def build_state(target_triples: int, claims_per_agent: int = 40) -> RdfState:
    """Many agents, each citing the previous agent's first source."""
    state = RdfState()
    i = 0
    while state.triple_count < target_triples:
        cite = f"agent-{i - 1}" if i else None
        contribution = synthetic_contribution(f"agent-{i}", claims_per_agent, cite)
        state.replace_agent(contribution_to_graph(SESSION, contribution))
        i += 1
    return state


def median_ms(fn: Callable[[], object], repeat: int, teardown: Callable[[], object] | None = None) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1000)
        if teardown is not None:
            teardown()
    return statistics.median(times)


def merge_ms(state: RdfState, graph: AgentGraph, repeat: int) -> tuple[float, int]:
    """Median of replace_agent + validate_agent; the undo between runs is not timed."""
    undos = []
    found = []

    def merge() -> None:
        undos.append(state.replace_agent(graph))
        found.append(len(state.validate_agent(graph.agent)))

    return median_ms(merge, repeat, lambda: undos.pop()()), found[-1]


def bench_size(size: int, repeat: int, full: bool) -> None:
    t0 = time.perf_counter()
    state = build_state(size)
    print(f"\n== {state.triple_count:,} triples, {len(state.agent_graphs())} agents "
          f"(built in {time.perf_counter() - t0:.1f} s)")
    newcomer = contribution_to_graph(SESSION, synthetic_contribution("newcomer", 20, cite="agent-0"))
    print(f"small agent: 20 claims, {len(newcomer.triples)} triples, {len(newcomer.focus_nodes)} nodes")
    conv = synthetic_contribution("conv", 20)
    print(f"  contribution_to_graph:                          "
          f"{median_ms(lambda: contribution_to_graph(SESSION, conv), repeat):7.1f} ms")
    ms, found = merge_ms(state, newcomer, repeat)
    print(f"  replace_agent + validate_agent, new agent:      {ms:7.1f} ms ({found} problems)")
    retry = contribution_to_graph(SESSION, synthetic_contribution("agent-1", 40, "agent-0", variant=1))
    ms, found = merge_ms(state, retry, repeat)
    print(f"  same, retry of a 40-claim agent others cite:    {ms:7.1f} ms ({found} problems)")
    print(f"  validate_agent alone (that agent + neighbours): "
          f"{median_ms(lambda: state.validate_agent('agent-1'), repeat):7.1f} ms")
    graphs = list(state.agent_graphs().values())
    for fmt in ("trig", "nquads", "json-ld"):
        ms = median_ms(lambda f=fmt: serialize_graphs(graphs, SESSION, f), 3)  # type: ignore[misc]
        print(f"serialize_graphs {fmt:8s}                          {ms:7.0f} ms")
    ms = median_ms(lambda: serialize(to_dataset(graphs, SESSION), "trig"), 3)
    print(f"serialize(to_dataset(...), 'trig')                {ms:7.0f} ms")
    if full:
        ms = median_ms(state.validate_full, 3)
        print(f"validate_full                                     {ms:7.0f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args()
    t0 = time.perf_counter()
    shapes()
    print(f"shapes parsed once per process: {(time.perf_counter() - t0) * 1000:.0f} ms")
    for n, size in enumerate(sorted(args.sizes)):
        bench_size(size, args.repeat, full=n == 0)


if __name__ == "__main__":
    main()
