"""Contribution → RDF conversion and serialisation (orchestrator/rdf.py)."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from rdflib import Dataset, Graph, Literal, URIRef
from rdflib.namespace import DCTERMS, PROV, RDF, XSD

from orchestrator.rdf.convert import AgentGraph, contribution_to_graph
from orchestrator.rdf.vocabulary import BIBO, CC, CITO, agent_iri, field_path, node_iri, parse_node_iri, session_iri
from orchestrator.rdf.write import serialize, serialize_graphs, to_dataset

# rdflib's own parsers warn about their internal use of ConjunctiveGraph / default_context.
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning:rdflib")

ACA, WEB = "academic-researcher", "web-researcher"
MERGED = "2026-11-22T09:30:00Z"


def _prov(agent: str, file: str, pointer: str) -> dict[str, Any]:
    return {"agent": agent, "file": f"artifacts/{agent}/{file}", "pointer": pointer,
            "artifact_sha256": "a" * 64, "attempt": 1, "merged_at": MERGED}


def academic() -> dict[str, Any]:
    return {
        "agent": ACA, "attempt": 1, "merged_at": MERGED, "artifact_sha256": "c" * 64,
        "files": {"sources.json": "1" * 64, "claims.json": "2" * 64, "entities.json": "3" * 64},
        "items": {
            "sources": [{
                "id": f"{ACA}:S3", "local_id": "S3", "type": "journal-article",
                "title": "Attention Is All You Need", "authors": ["A. Vaswani", "N. Shazeer"], "year": 2017,
                "doi": "10.5555/3295222.3295349", "url": "https://arxiv.org/abs/1706.03762",
                "content_sha256": "e" * 64, "peer_reviewed": True, "published": "2017-06-12",
                "extra": {"venue_rank": "A*"}, "provenance": _prov(ACA, "sources.json", "/sources/0")}],
            "entities": [{"id": f"{ACA}:E1", "local_id": "E1", "name": "Transformer", "type": "method",
                          "aliases": ["transformer model"],
                          "provenance": _prov(ACA, "entities.json", "/entities/0")}],
            "claims": [{
                "id": f"{ACA}:C1", "local_id": "C1",
                "statement": "The Transformer relies entirely on attention.", "confidence": 0.9,
                "priority": "high", "entity_ids": [f"{ACA}:E1"], "tags": ["architecture"],
                "evidence": [{"source_id": f"{ACA}:S3", "source_ref": "S3",
                              "snippet": "based solely on attention mechanisms", "locator": {"page": 1},
                              "verification": {"verified": True, "score": 100.0, "page": 1,
                                               "matched_text": "based solely on attention mechanisms"}}],
                "provenance": _prov(ACA, "claims.json", "/claims/0")}],
        },
    }


def web() -> dict[str, Any]:
    return {
        "agent": WEB, "attempt": 2, "merged_at": MERGED, "artifact_sha256": "d" * 64,
        "files": {"claims.json": "4" * 64, "relationships.json": "5" * 64, "gaps.json": "6" * 64},
        "items": {
            "claims": [{
                "id": f"{WEB}:C1", "local_id": "C1",
                "statement": 'Transformers "replaced" RNNs\nfor translation \\ MT.', "confidence": 0.7,
                "priority": "medium", "sub_question_id": "Q1",
                "evidence": [{"source_id": f"{ACA}:S3", "source_ref": f"{ACA}:S3",
                              "snippet": "dispensing with recurrence",
                              "locator": {"page": 2, "char_start": 10, "char_end": 36},
                              "verification": {
                                  "verified": False, "score": 62.5, "page": 2,
                                  "matched_text": "dispensing with recurrence and convolutions"}}],
                "provenance": _prov(WEB, "claims.json", "/claims/0")}],
            "relationships": [{
                "id": f"{WEB}:relationship-0123456789", "subject": f"{WEB}:C1", "predicate": "elaborates",
                "object": f"{ACA}:C1", "claim_ids": [f"{ACA}:C1"],
                "provenance": _prov(WEB, "relationships.json", "/relationships/0")}],
            "gaps": [{"description": "No data on low-resource languages", "priority": "low",
                      "provenance": _prov(WEB, "gaps.json", "/gaps/0")}],
        },
    }


def known_claims(gid: str) -> str | None:
    return "claim" if gid in {f"{ACA}:C1", f"{WEB}:C1"} else None


@pytest.fixture
def graphs() -> tuple[AgentGraph, AgentGraph]:
    return (contribution_to_graph("s-1", academic(), known_claims),
            contribution_to_graph("s-1", web(), known_claims))


def iri(kind: str, gid: str) -> URIRef:
    return URIRef(f"urn:cconductor:{kind}:{gid}")


def test_items_become_typed_nodes_with_provenance(graphs: tuple[AgentGraph, AgentGraph]) -> None:
    aca, _ = graphs
    t = set(aca.triples)
    source, claim = iri("source", f"{ACA}:S3"), iri("claim", f"{ACA}:C1")
    evidence = URIRef(f"urn:cconductor:evidence:{ACA}:C1/0")
    agent = URIRef(f"urn:cconductor:agent:{ACA}")
    assert aca.graph_iri == agent == agent_iri(ACA)
    assert {(source, RDF.type, CC.Source), (source, RDF.type, BIBO.AcademicArticle),
            (source, DCTERMS.title, Literal("Attention Is All You Need")),
            (source, DCTERMS.creator, Literal("A. Vaswani")), (source, CC.year, Literal(2017)),
            (source, BIBO.doi, Literal("10.5555/3295222.3295349")),
            (source, BIBO.uri, Literal("https://arxiv.org/abs/1706.03762", datatype=XSD.anyURI)),
            (source, DCTERMS.issued, Literal("2017-06-12", datatype=XSD.date)),
            (source, CC.peerReviewed, Literal(True)),
            (source, CC.extra, Literal('{"venue_rank":"A*"}', datatype=RDF.JSON)),
            (claim, RDF.type, CC.Claim), (claim, RDF.type, CC.HighPriorityClaim),
            (claim, CC.confidence, Literal("0.9", datatype=XSD.decimal)),
            (claim, DCTERMS.subject, iri("entity", f"{ACA}:E1")),
            (claim, CC.hasEvidence, evidence), (evidence, RDF.type, CC.Evidence),
            (evidence, CITO.citesAsEvidence, source), (evidence, CC.page, Literal(1)),
            (evidence, CC.verified, Literal(True)),
            (evidence, CC.matchScore, Literal("100.0", datatype=XSD.decimal)),
            (claim, DCTERMS.identifier, Literal(f"{ACA}:C1")),
            (agent, RDF.type, CC.Agent), (agent, RDF.type, PROV.SoftwareAgent),
            (session_iri("s-1"), PROV.wasAssociatedWith, agent),
            } <= t
    for node in aca.focus_nodes:  # every item and evidence node is attributed to the agent
        assert (node, PROV.wasAttributedTo, agent) in t
    contribution = URIRef(f"urn:cconductor:contribution:{ACA}/1")
    claims_file = URIRef(f"urn:cconductor:artifact:{ACA}/claims.json")
    assert {(contribution, CC.attempt, Literal(1)), (contribution, CC.sha256, Literal("c" * 64)),
            (contribution, PROV.generatedAtTime, Literal(MERGED, datatype=XSD.dateTime)),
            (contribution, PROV.wasGeneratedBy, session_iri("s-1")),
            (contribution, PROV.hadMember, claims_file), (claims_file, CC.sha256, Literal("2" * 64)),
            (claim, PROV.wasDerivedFrom, claims_file)} <= t
    assert set(aca.focus_nodes) == {source, claim, evidence, iri("entity", f"{ACA}:E1")}


def test_references_are_iris_of_the_referenced_kind(graphs: tuple[AgentGraph, AgentGraph]) -> None:
    _, w = graphs
    t = set(w.triples)
    claim, evidence = iri("claim", f"{WEB}:C1"), URIRef(f"urn:cconductor:evidence:{WEB}:C1/0")
    rel = iri("relationship", f"{WEB}:relationship-0123456789")
    assert (evidence, CITO.citesAsEvidence, iri("source", f"{ACA}:S3")) in t  # the other agent's source
    assert (evidence, CC.verified, Literal(False)) in t
    assert (rel, CC.subject, claim) in t  # own claim, known from the contribution itself
    assert (rel, CC.object, iri("claim", f"{ACA}:C1")) in t  # another agent's claim, via kind_of
    assert (rel, CC.supportedBy, iri("claim", f"{ACA}:C1")) in t
    assert (claim, CC.subQuestion, iri("sub-question", f"{WEB}:Q1")) in t  # bare id: own namespace
    assert (claim, RDF.type, CC.HighPriorityClaim) not in t


def test_relationship_ends_default_to_entities_without_kind_of() -> None:
    w = contribution_to_graph("s-1", web())
    rel = iri("relationship", f"{WEB}:relationship-0123456789")
    assert (rel, CC.object, iri("entity", f"{ACA}:C1")) in set(w.triples)
    assert (rel, CC.subject, iri("claim", f"{WEB}:C1")) in set(w.triples)


def test_sub_question_resolver() -> None:
    w = contribution_to_graph("s-1", web(), resolve_sub_question=lambda ref: f"planner:{ref}")
    assert (iri("claim", f"{WEB}:C1"), CC.subQuestion, iri("sub-question", "planner:Q1")) in set(w.triples)


def test_no_id_or_curie_is_stored_as_a_literal(graphs: tuple[AgentGraph, AgentGraph]) -> None:
    ids: set[str] = set()
    for contribution in (academic(), web()):
        for items in contribution["items"].values():
            for item in items:
                for key in ("id", "local_id", "subject", "object", "sub_question_id"):
                    if key in item:
                        ids.add(item[key])
                ids.update(item.get("claim_ids", []) + item.get("entity_ids", []))
                for ev in item.get("evidence", []):
                    ids.update({ev["source_id"], ev["source_ref"]})
    for g in graphs:
        for _, p, o in g.triples:
            if isinstance(o, Literal) and p != DCTERMS.identifier:
                assert str(o) not in ids, (p, o)


def test_origins_locate_items_and_evidence(graphs: tuple[AgentGraph, AgentGraph]) -> None:
    _, w = graphs
    ev = w.origins[URIRef(f"urn:cconductor:evidence:{WEB}:C1/0")]
    assert (ev.file, ev.pointer, ev.kind, ev.agent) == (
        f"artifacts/{WEB}/claims.json", "/claims/0/evidence/0", "evidence", WEB)
    assert ev.item["snippet"] == "dispensing with recurrence" and ev.preview == "dispensing with recurrence"
    claim = w.origins[iri("claim", f"{WEB}:C1")]
    assert claim.id == f"{WEB}:C1" and claim.preview == 'Transformers "replaced" RNNs for translation \\ MT.'
    assert field_path("evidence", CC.page) == ("locator", "page")
    assert field_path("coverage", CC.note) == ("notes",) and field_path("evidence", CC.note) == ("note",)


def test_id_less_items_get_stable_ids_and_fallback_origins() -> None:
    contribution = web()
    del contribution["items"]["gaps"][0]["provenance"]
    first = contribution_to_graph("s-1", contribution)
    second = contribution_to_graph("s-1", copy.deepcopy(contribution))
    gaps = [n for n, o in first.origins.items() if o.kind == "gap"]
    assert len(gaps) == 1 and gaps == [n for n, o in second.origins.items() if o.kind == "gap"]
    assert str(gaps[0]).startswith(f"urn:cconductor:gap:{WEB}:gap-")
    origin = first.origins[gaps[0]]
    assert (origin.file, origin.pointer) == (f"artifacts/{WEB}/gaps.json", "/gaps/0")


def test_bad_values_become_literals_the_shapes_reject() -> None:
    contribution = academic()
    claim = contribution["items"]["claims"][0]
    claim.update(confidence="high", priority=3)
    claim["evidence"][0].pop("source_id")
    contribution["items"]["sources"][0].update(year=True, published="2017-13-45")
    g = contribution_to_graph("s-1", contribution)
    t = set(g.triples)
    c, s = iri("claim", f"{ACA}:C1"), iri("source", f"{ACA}:S3")
    assert (c, CC.confidence, Literal("high")) in t and (c, CC.priority, Literal(3)) in t
    assert (s, CC.year, Literal(True)) in t and (s, DCTERMS.issued, Literal("2017-13-45")) in t
    assert not [tr for tr in t if tr[1] == CITO.citesAsEvidence]
    assert (c, RDF.type, CC.HighPriorityClaim) not in t  # only the exact string "high" counts


@given(st.text(min_size=1, max_size=40))
def test_node_iris_round_trip(local: str) -> None:
    gid = f"some-agent:{local}"
    node = node_iri("claim", gid)
    assert parse_node_iri(str(node)) == ("claim", gid)
    assert not any(ch in str(node) for ch in ' <>"{}|^`\\')


def _dataset(text: str, fmt: str) -> Dataset:
    ds = Dataset()
    ds.parse(data=text, format=fmt)
    return ds


def _named(ds: Dataset) -> dict[str, set[Any]]:
    return {str(g.identifier): set(g) for g in ds.graphs() if len(g)}


@pytest.mark.parametrize("fmt, parse_as", [("trig", "trig"), ("nquads", "nquads"), ("json-ld", "json-ld")])
def test_serialisation_keeps_one_named_graph_per_agent(graphs: tuple[AgentGraph, AgentGraph], fmt: str,
                                                      parse_as: str) -> None:
    text = serialize_graphs(graphs, "s-1", fmt, {"query": "How do transformers work?"})
    named = _named(_dataset(text, parse_as))
    assert named[f"urn:cconductor:agent:{ACA}"] == set(graphs[0].triples)
    assert named[f"urn:cconductor:agent:{WEB}"] == set(graphs[1].triples)
    session = session_iri("s-1")
    default = next(v for k, v in named.items() if not k.startswith("urn:cconductor:agent:"))
    assert (session, RDF.type, CC.Session) in default
    assert (session, DCTERMS.description, Literal("How do transformers work?")) in default


def test_trig_is_readable_and_json_ld_context_is_inline(graphs: tuple[AgentGraph, AgentGraph]) -> None:
    trig = serialize_graphs(graphs, "s-1", "trig")
    assert f"<urn:cconductor:agent:{WEB}> {{" in trig and "a cc:Claim , cc:HighPriorityClaim" in trig
    doc = json.loads(serialize_graphs(graphs, "s-1", "json-ld"))
    assert isinstance(doc["@context"], dict) and doc["@context"]["cc"] == str(CC)


def test_turtle_is_the_union(graphs: tuple[AgentGraph, AgentGraph]) -> None:
    g = Graph().parse(data=serialize_graphs(graphs, "s-1", "turtle"), format="turtle")
    assert set(g) >= set(graphs[0].triples) | set(graphs[1].triples)


def test_dataset_and_fast_path_agree(graphs: tuple[AgentGraph, AgentGraph]) -> None:
    ds = to_dataset(graphs, "s-1", {"started_at": MERGED})
    assert set(ds.graph(agent_iri(WEB))) == set(graphs[1].triples)
    for fmt in ("trig", "nquads", "json-ld"):
        assert serialize(ds, fmt) == serialize_graphs(graphs, "s-1", fmt, {"started_at": MERGED})
    union = Graph().parse(data=serialize(ds, "turtle"), format="turtle")
    assert set(union) == {(s, p, o) for s, p, o, _ in ds.quads()}
    with pytest.raises(ValueError, match="unknown RDF format"):
        serialize(ds, "rdfxml")
