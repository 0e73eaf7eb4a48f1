"""QuietMemory holds exactly what rdflib's Memory holds, and still dispatches events to subscribers."""

from __future__ import annotations

from rdflib import Graph, Literal, URIRef
from rdflib.events import Event
from rdflib.namespace import RDF, XSD
from rdflib.store import TripleAddedEvent

from orchestrator.rdf.memory_store import QuietMemory

N = "urn:test:"


def _triples() -> list[tuple[URIRef, URIRef, URIRef | Literal]]:
    out: list[tuple[URIRef, URIRef, URIRef | Literal]] = []
    for i in range(60):
        s = URIRef(f"{N}s{i % 7}")
        out.append((s, URIRef(f"{N}p{i % 3}"), Literal(f"v{i % 11}")))
        out.append((s, RDF.type, URIRef(f"{N}C{i % 2}")))
        out.append((s, URIRef(f"{N}n"), Literal(i % 5, datatype=XSD.integer)))
    return out  # with many duplicates, as agents share nodes


def test_same_content_and_lookups_as_memory() -> None:
    plain, quiet = Graph(), Graph(store=QuietMemory())
    for t in _triples():
        plain.add(t)
        quiet.add(t)
    assert set(quiet) == set(plain) and len(quiet) == len(plain)
    for pattern in [(URIRef(f"{N}s3"), None, None), (None, RDF.type, None), (None, None, Literal("v4")),
                    (None, URIRef(f"{N}p1"), Literal("v1"))]:
        assert sorted(quiet.triples(pattern)) == sorted(plain.triples(pattern))
    for t in _triples()[:40]:
        plain.remove(t)
        quiet.remove(t)
    assert set(quiet) == set(plain) and len(quiet) == len(plain)
    assert set(quiet.subjects(RDF.type, URIRef(f"{N}C1"))) == set(plain.subjects(RDF.type, URIRef(f"{N}C1")))


def test_subscribers_still_get_every_added_triple() -> None:
    store = QuietMemory()
    seen: list[Event] = []
    store.dispatcher.subscribe(TripleAddedEvent, seen.append)
    graph = Graph(store=store)
    triples = _triples()[:10]
    for t in triples:
        graph.add(t)
    assert [e.triple for e in seen] == triples  # type: ignore[attr-defined]
    assert set(graph) == set(triples)
