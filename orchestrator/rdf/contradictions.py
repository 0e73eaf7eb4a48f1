"""Detected contradictions as RDF: one named graph beside the agents' graphs (pure).

The graph is derived like the JSON view (from the current claims), so it is rebuilt with every
view and never stored in the ledger. Nodes are typed both ``cc:Contradiction`` (so the
contradiction shape and queries for agents' contradictions see them) and
``cc:DetectedContradiction``, and are attributed to the orchestrator.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from rdflib import Literal, URIRef
from rdflib.namespace import DCTERMS, PROV, RDF, RDFS, XSD

from orchestrator.rdf.convert import AgentGraph
from orchestrator.rdf.vocabulary import CC, Triple, node_iri

GRAPH_IRI = URIRef("urn:cconductor:graph:contradictions")
ORCHESTRATOR = URIRef("urn:cconductor:orchestrator")
#: Key of the graph among the agents' graphs; not a valid agent name, so it never collides with one.
GRAPH_KEY = "#contradictions"


@dataclass(frozen=True)
class DerivedGraph(AgentGraph):
    """A named graph the orchestrator derives; serialised like an agent's graph."""

    iri: URIRef = field(default=GRAPH_IRI)

    @property
    def graph_iri(self) -> URIRef:
        return self.iri


def _decimal(value: Any) -> Literal:
    return Literal(format(Decimal(repr(float(value))), "f"), datatype=XSD.decimal)


def _triples(item: Mapping[str, Any]) -> list[Triple]:
    node = node_iri("contradiction", str(item["id"]))
    found: list[Triple] = [
        (node, RDF.type, CC.Contradiction), (node, RDF.type, CC.DetectedContradiction),
        (node, DCTERMS.identifier, Literal(str(item["id"]))),
        (node, DCTERMS.description, Literal(str(item.get("description", "")))),
        (node, CC.status, Literal(str(item.get("status", "open")))),
        (node, CC.resolved, Literal(bool(item.get("resolved")))),
        (node, PROV.wasAttributedTo, ORCHESTRATOR),
    ]
    found += [(node, CC.involvesClaim, node_iri("claim", str(c))) for c in item.get("claim_ids") or ()]
    found += [(node, CC.conflictKind, Literal(str(k))) for k in item.get("kinds") or ()]
    found += [(node, CC.recordedBy, node_iri("contradiction", str(r))) for r in item.get("recorded_by") or ()]
    found += [(node, PROV.wasDerivedFrom, node_iri("relationship", str(r["id"])))
              for r in item.get("relationships") or () if isinstance(r, Mapping) and r.get("id")]
    if item.get("resolved_by"):
        found.append((node, CC.resolvedBy, node_iri("contradiction", str(item["resolved_by"]))))
    if item.get("resolution"):
        found.append((node, CC.resolution, Literal(str(item["resolution"]))))
    compared = item.get("compared")
    if isinstance(compared, Mapping):
        found.append((node, CC.comparedUnit, Literal(str(compared.get("unit", "")))))
        found += [(node, CC.comparedValue, _decimal(v)) for v in compared.get("values") or ()]
        found.append((node, CC.relativeDifference, _decimal(compared.get("relative_difference", 0))))
        found.append((node, CC.tolerance, _decimal(compared.get("tolerance", 0))))
    return found


def contradiction_graph(contradictions: Iterable[Mapping[str, Any]]) -> DerivedGraph:
    """The named graph of the detected contradictions among ``contradictions`` (the unified list)."""
    triples: list[Triple] = []
    for item in contradictions:
        if isinstance(item, Mapping) and item.get("detected"):
            triples += _triples(item)
    if triples:
        triples += [(ORCHESTRATOR, RDF.type, CC.Orchestrator), (ORCHESTRATOR, RDF.type, PROV.SoftwareAgent),
                    (ORCHESTRATOR, RDFS.label, Literal("cconductor"))]
    return DerivedGraph(GRAPH_KEY, triples, {}, ())
