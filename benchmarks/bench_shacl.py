"""Cost of one merge's RDF work (replace_agent + validate_agent) as the session graph grows.

Run: ``python benchmarks/bench_shacl.py [--sizes 10000 100000] [--repeat 15]``.
Prints medians; the target is an incremental merge of a 20-claim agent in <= 50 ms at 100k
triples. Also prints full validation at the smallest size and serialisation costs.
"""

from __future__ import annotations

import argparse
import time

from harness import median_ms
from synthetic import rdf_contribution

from orchestrator.rdf.convert import AgentGraph, contribution_to_graph
from orchestrator.rdf.shacl import shapes
from orchestrator.rdf.state import RdfState
from orchestrator.rdf.write import serialize, serialize_graphs, to_dataset

SESSION = "bench"


def build_state(target_triples: int, claims_per_agent: int = 40) -> RdfState:
    """Many agents, each citing the previous agent's first source."""
    state = RdfState()
    i = 0
    while state.triple_count < target_triples:
        cite = f"agent-{i - 1}" if i else None
        contribution = rdf_contribution(f"agent-{i}", claims_per_agent, cite)
        state.replace_agent(contribution_to_graph(SESSION, contribution))
        i += 1
    return state


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
    newcomer = contribution_to_graph(SESSION, rdf_contribution("newcomer", 20, cite="agent-0"))
    print(f"small agent: 20 claims, {len(newcomer.triples)} triples, {len(newcomer.focus_nodes)} nodes")
    conv = rdf_contribution("conv", 20)
    print(f"  contribution_to_graph:                          "
          f"{median_ms(lambda: contribution_to_graph(SESSION, conv), repeat):7.1f} ms")
    ms, found = merge_ms(state, newcomer, repeat)
    print(f"  replace_agent + validate_agent, new agent:      {ms:7.1f} ms ({found} problems)")
    retry = contribution_to_graph(SESSION, rdf_contribution("agent-1", 40, "agent-0", variant=1))
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
