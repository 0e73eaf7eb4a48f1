"""UnionStore holds and finds exactly what rdflib's Memory store does, through random changes."""

from __future__ import annotations

import random
from itertools import product

import pyshacl
from rdflib import Graph, Literal, URIRef
from rdflib.namespace import RDF, XSD

from orchestrator.rdf.shacl import shapes, wrap
from orchestrator.rdf.union_store import UnionStore

N = "urn:test:"
Term = URIRef | Literal


def _pool(rng: random.Random) -> list[tuple[URIRef, URIRef, Term]]:
    subjects = [URIRef(f"{N}s{i}") for i in range(6)]
    predicates = [URIRef(f"{N}p{i}") for i in range(3)] + [RDF.type]
    objects: list[Term] = [*subjects[:3], URIRef(f"{N}C0"), Literal("v"), Literal(1, datatype=XSD.integer),
                           Literal("1"), Literal("v", lang="en")]
    return [(rng.choice(subjects), rng.choice(predicates), rng.choice(objects)) for _ in range(80)]


def _patterns(triples: list[tuple[URIRef, URIRef, Term]]) -> list[tuple[Term | None, ...]]:
    s, p, o = triples[0]
    other = URIRef(f"{N}nowhere")
    return [tuple(pattern) for pattern in product((s, other, None), (p, other, None), (o, other, None))]


def test_same_triples_and_lookups_as_memory_through_random_adds_and_removes() -> None:
    rng = random.Random(7)
    for _ in range(30):
        memory, union = Graph(), Graph(store=UnionStore())
        pool = _pool(rng)
        for _ in range(200):
            triple = rng.choice(pool)
            if rng.random() < 0.65:
                memory.add(triple)
                union.add(triple)
            else:
                pattern = tuple(t if rng.random() < 0.7 else None for t in triple)
                memory.remove(pattern)
                union.remove(pattern)
            assert len(union) == len(memory)
        assert set(union) == set(memory)
        for pattern in _patterns(pool):
            assert sorted(union.triples(pattern)) == sorted(memory.triples(pattern)), pattern
        assert (pool[0] in union) == (pool[0] in memory)


def test_pyshacl_validates_a_graph_on_it_as_on_memory() -> None:
    data = """@prefix cc: <https://cconductor.dev/ontology#> .
    <urn:cconductor:claim:a:C1> a cc:Claim ; cc:confidence "high" .
    <urn:cconductor:source:a:S1> a cc:Source ."""
    memory = Graph().parse(data=data, format="turtle")
    union = Graph(store=UnionStore())
    for triple in memory:
        union.add(triple)
    wrap(union)  # pyshacl's own wrapper accepts it
    results = [pyshacl.validate(g, shacl_graph=shapes().graph, inference="none")[2] for g in (memory, union)]
    assert results[0] == results[1] and "Violation" in results[0]
