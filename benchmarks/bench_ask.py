"""`cconductor ask` at ~100,000 triples: one citation's validation, and SPARQL with rdflib vs pyoxigraph.

    python benchmarks/bench_ask.py [--triples 100000] [--repeat 50]

Builds a synthetic session graph the way the views are built (agents' contributions ->
``build_views`` -> knowledge-graph.json, ``contribution_to_graph`` -> knowledge-graph.trig):
agents with sources, claims whose evidence is verified with a 1-3 sentence passage, entities
shared between agents under the same names (so the merge folds them and their ids become
aliases) and relationship chains between entities, each backed by a claim. Prints medians.
Target: validating one citation takes under 500 ms at 100,000 triples.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from harness import median_ms
from synthetic import prose_contribution

from orchestrator.answers import sparql
from orchestrator.answers.graph import NodeIndex
from orchestrator.answers.retrieve import GraphRetriever
from orchestrator.answers.validate import CheckedSentence, Validator
from orchestrator.graph.unified import build_views
from orchestrator.model.layout import SessionPaths
from orchestrator.rdf.convert import contribution_to_graph
from orchestrator.rdf.write import serialize_graphs

SESSION = "bench-ask"


def build(folder: Path, target: int) -> tuple[SessionPaths, int]:
    rng = random.Random(5)
    records: dict[str, dict[str, Any]] = {}
    graphs = []
    triples = 0
    while triples < target:
        agent = f"agent-{len(records)}"
        contrib = prose_contribution(agent, 40, rng)
        records[agent] = {"contribution": contrib, "namespace": {}, "attempt": 1, "merged_at": contrib["merged_at"],
                          "artifact_sha256": "0" * 64, "files": []}
        graph = contribution_to_graph(SESSION, contrib)
        graphs.append(graph)
        triples += len(graph.triples)
    paths = SessionPaths(folder)
    paths.kg_json.write_text(json.dumps(build_views(records, SESSION, 1, "2026-11-25T09:30:00Z")))
    paths.kg_trig.write_text(serialize_graphs(graphs, SESSION, "trig"))
    return paths, triples


def once_ms(fn: Callable[[], object]) -> tuple[float, Any]:
    started = time.perf_counter()
    value = fn()
    return (time.perf_counter() - started) * 1000, value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--triples", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=50)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        paths, triples = build(Path(tmp), args.triples)
        size = paths.kg_trig.stat().st_size / 1e6
        print(f"graph: {triples:,} triples ({size:.1f} MB TriG, {paths.kg_json.stat().st_size / 1e6:.1f} MB JSON)")
        load, index = once_ms(lambda: NodeIndex.build(json.loads(paths.kg_json.read_text())))
        validator = Validator(index)
        relations, _ = once_ms(lambda: validator.relations)
        print(f"once per question: load + index the JSON graph {load:.0f} ms; relation graph {relations:.0f} ms "
              f"({len(index.claims):,} claims, {len(index.entities):,} entities, {len(index.relationships):,} "
              "relationships)")
        claims = list(index.claims)[:: max(1, len(index.claims) // args.repeat)][: args.repeat]
        rels = list(index.relationships.values())
        entities = sorted({index.canonical[r["subject"]] for r in rels})

        def exact(k: int) -> object:  # a different claim each run: no cache helps (texts are normalised once)
            passage = index.passages(claims[k])[0].text
            return validator.citation(passage.split(". ")[0].rstrip(".") + ".", claims[k])

        def paraphrase(k: int) -> object:
            words = index.passages(claims[k])[0].text.split(". ")[0].split()
            return validator.citation(" ".join(reversed(words[2:])) + ".", claims[k])

        def chain(k: int) -> list[CheckedSentence]:
            a, b = entities[k % len(entities)], entities[(k * 7 + 3) % len(entities)]
            return validator.check(f"The {index.name(a)} relates to the {index.name(b)} [@{a}; @{b}].")

        def relationship(k: int) -> object:
            rel = rels[k % len(rels)]
            text = f"{index.name(rel['subject'])} affects {index.name(rel['object'])}"
            return validator.citation(text, rel["id"])

        rows: list[tuple[str, Callable[[int], object]]] = [
            ("exact claim citation", exact),
            ("approximate claim citation", paraphrase),
            ("fabricated sentence (not found)",
             lambda k: validator.citation(f"The moon is made of {k} cheeses.", claims[k])),
            ("unknown node", lambda k: validator.citation("The moon.", f"agent-0:C{999999 + k}")),
            ("entity pair, relation by BFS", chain),
            ("direct relationship citation", relationship),
        ]
        print(f"validating one citation ({len(claims)} different citations each; target < 500 ms):")
        for label, fn in rows:
            times = [once_ms(partial(fn, k))[0] for k in range(len(claims))]
            print(f"  {label:<34} median {statistics.median(times):7.2f} ms   max {max(times):7.2f} ms")
        depths = [len(chain(k)[0].citations[-1].trace) for k in range(len(claims))]
        linked = [d for d in depths if d]
        print(f"  (entity pairs: {len(linked)} linked by chains of {min(linked, default=0)} to "
              f"{max(linked, default=0)} step(s), {len(depths) - len(linked)} with no chain within 5)")
        first = rels[0]
        a, b = index.canonical[first["subject"]], index.canonical[first["object"]]
        question = f"How does the {index.name(a)} affect the {index.name(b)}?"
        print("SPARQL over knowledge-graph.trig:")
        seeds = [a, b]
        engines: tuple[sparql.Engine, ...] = ("pyoxigraph", "rdflib")
        for engine in engines:
            started = time.perf_counter()
            store = sparql.SparqlStore(paths.kg_trig, engine)
            loaded = (time.perf_counter() - started) * 1000
            queries = (sparql.entities_named(["reactor", "salt"]), sparql.claims_about(seeds),
                       sparql.relationships_of(seeds))
            timings = [median_ms(partial(store.select, query), 5) for query in queries]
            print(f"  {engine:<10} load {loaded:8.0f} ms | entities by name {timings[0]:7.1f} ms | claims about 2 "
                  f"entities {timings[1]:7.1f} ms | relationships of 2 entities {timings[2]:7.1f} ms")
        retriever = GraphRetriever(paths, index)
        built, _ = once_ms(lambda: retriever.retrieve(question))
        again = median_ms(lambda: retriever.retrieve(question), 5)
        print(f"retrieval (BM25 + SPARQL, pyoxigraph): first question {built:.0f} ms (builds the BM25 index and loads "
              f"the store), next questions {again:.0f} ms")


if __name__ == "__main__":
    main()
