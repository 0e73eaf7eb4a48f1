"""Contribution → RDF (one named graph per agent). Pure: no I/O; writing RDF is in rdf/write.py.

The field table and IRIs are rdf/vocabulary.py. Conversion never raises on bad values: a wrongly
typed value becomes a literal that fails the shape's sh:datatype, so the agent hears about it in its own terms.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from rdflib import Literal, URIRef
from rdflib.namespace import DCTERMS, PROV, RDF, RDFS, XSD

from orchestrator.graph.merge import derived_id
from orchestrator.model.problems import pointer_join
from orchestrator.rdf.literals import literal
from orchestrator.rdf.vocabulary import (
    _PREVIEW_FIELD,
    CC,
    FIELDS,
    ITEM_KINDS,
    KIND_CLASS,
    KIND_FILE,
    SOURCE_TYPE_CLASS,
    STR,
    KindOf,
    Triple,
    agent_iri,
    node_iri,
    session_iri,
)


@dataclass(frozen=True)
class Origin:
    """Where a node came from, so a violation on it can name the file and JSON pointer to fix."""

    file: str | None
    pointer: str
    kind: str
    preview: str
    item: Mapping[str, Any]
    id: str
    agent: str


@dataclass(frozen=True)
class AgentGraph:
    """One agent's contribution as triples for its named graph ``agent_iri(agent)``."""

    agent: str
    triples: list[Triple]
    origins: dict[URIRef, Origin]
    focus_nodes: tuple[URIRef, ...]

    @property
    def graph_iri(self) -> URIRef:
        return agent_iri(self.agent)


def _preview(kind: str, item: Mapping[str, Any]) -> str:
    if kind == "relationship":
        text = f"{item.get('subject')} {item.get('predicate')} {item.get('object')}"
    else:
        text = str(item.get(_PREVIEW_FIELD.get(kind, "id"), ""))
    text = " ".join(text.split())
    return text if len(text) <= 100 else text[:99] + "…"


def _global_id(agent: str, kind: str, item: Mapping[str, Any]) -> str:
    raw = item.get("id")
    if isinstance(raw, str) and raw:
        return raw if ":" in raw else f"{agent}:{raw}"
    # The merge assigns ids to id-less items; the same rule keeps conversion total for anything else.
    body = {k: v for k, v in item.items() if k != "provenance"}
    return f"{agent}:{derived_id(kind, body)}"


def _get(item: Mapping[str, Any], path: tuple[str, ...]) -> Any:
    value: Any = item
    for key in path:
        if not isinstance(value, Mapping):
            return None
        value = value.get(key)
    return value


#: FIELDS with each path split into its first key and the rest, and each reference conversion parsed:
#: (first key, rest of the path, predicate, conversion, (many, target kind) or None).
_COMPILED_FIELDS: dict[str, tuple[tuple[str, tuple[str, ...], URIRef, str, tuple[bool, str] | None], ...]] = {
    kind: tuple(
        (path[0], path[1:], pred, conv,
         (conv.startswith("refs:"), conv.partition(":")[2]) if conv.startswith(("ref:", "refs:")) else None)
        for path, pred, conv in fields)
    for kind, fields in FIELDS.items()
}


class _Converter:
    """Holds the per-contribution lookups; one instance per call of contribution_to_graph."""

    def __init__(self, agent: str, kind_of: KindOf | None, resolve_sub_question: KindOf | None) -> None:
        self.agent = agent
        self.agent_node = agent_iri(agent)
        self.kind_of = kind_of
        self.resolve_sub_question = resolve_sub_question
        self.own_kinds: dict[str, str] = {}
        self.triples: list[Triple] = []
        self.origins: dict[URIRef, Origin] = {}
        self.files: dict[str, URIRef] = {}

    def ref(self, target: str, value: Any) -> URIRef | None:
        if not isinstance(value, str) or not value:
            return None  # not a reference at all: the missing link is reported by the shapes
        if target == "sub-question":
            gid = self.resolve_sub_question(value) if self.resolve_sub_question else None
            gid = gid or (value if ":" in value else f"{self.agent}:{value}")
            return node_iri("sub-question", gid)
        gid = value if ":" in value else f"{self.agent}:{value}"
        if target == "node":
            target = self.own_kinds.get(gid) or (self.kind_of(gid) if self.kind_of else None) or "entity"
        return node_iri(target, gid)

    def fields(self, node: URIRef, kind: str, item: Mapping[str, Any]) -> None:
        add = self.triples.append
        for head, rest, pred, conv, ref in _COMPILED_FIELDS[kind]:
            value = item.get(head)
            if value is None or (rest and (value := _get(value, rest)) is None):
                continue
            if ref is not None:
                many, target = ref
                values = value if many and isinstance(value, list) else [value]
                if target == "node" and item.get(f"{(rest or (head,))[-1]}_kind") in ("entity", "claim"):
                    target = str(item[f"{(rest or (head,))[-1]}_kind"])  # resolved by the merge: never re-guessed
                elif "|" in target:  # one of several kinds: the merge recorded which (else the first)
                    options = target.split("|")
                    resolved = item.get(f"{(rest or (head,))[-1]}_kind")
                    target = resolved if resolved in options else options[0]
                for v in values:
                    iri = self.ref(target, v)
                    if iri is not None:
                        add((node, pred, iri))
            elif conv == "strs" and isinstance(value, list):
                for v in value:
                    add((node, pred, literal(STR, v)))
            else:
                add((node, pred, literal(conv, value)))

    def file_node(self, file: str | None, kind: str) -> URIRef:
        name = (file or KIND_FILE[kind][0]).rsplit("/", 1)[-1]
        node = self.files.get(name)
        if node is None:
            node = self.files[name] = URIRef(f"urn:cconductor:artifact:{self.agent}/{quote(name, safe='')}")
        return node

    def item(self, kind: str, index: int, item: Mapping[str, Any]) -> None:
        gid = _global_id(self.agent, kind, item)
        node = node_iri(kind, gid)
        prov = item.get("provenance")
        prov = prov if isinstance(prov, Mapping) else {}
        file = prov.get("file") or f"artifacts/{self.agent}/{KIND_FILE[kind][0]}"
        pointer = prov.get("pointer") or pointer_join(KIND_FILE[kind][1], index)
        origin = Origin(file, pointer, kind, _preview(kind, item), item, gid, self.agent)
        self.origins.setdefault(node, origin)
        add = self.triples.append
        add((node, RDF.type, KIND_CLASS[kind]))
        add((node, DCTERMS.identifier, Literal(gid)))
        add((node, PROV.wasAttributedTo, self.agent_node))
        add((node, PROV.wasDerivedFrom, self.file_node(file, kind)))
        if kind == "source" and item.get("type") in SOURCE_TYPE_CLASS:
            add((node, RDF.type, SOURCE_TYPE_CLASS[item["type"]]))
        if kind == "claim" and item.get("priority") == "high":
            add((node, RDF.type, CC.HighPriorityClaim))
        self.fields(node, kind, item)
        evidence = item.get("evidence") if kind == "claim" else None
        for n, ev in enumerate(evidence if isinstance(evidence, list) else []):
            if not isinstance(ev, Mapping):
                continue
            ev_node = URIRef(f"urn:cconductor:evidence:{quote(gid, safe=':')}/{n}")
            self.origins.setdefault(ev_node, Origin(
                file, f"{pointer}/evidence/{n}", "evidence", _preview("evidence", ev), ev,
                f"{gid}/evidence/{n}", self.agent))
            add((node, CC.hasEvidence, ev_node))
            add((ev_node, RDF.type, CC.Evidence))
            add((ev_node, PROV.wasAttributedTo, self.agent_node))
            self.fields(ev_node, "evidence", ev)


def contribution_to_graph(
    session_id: str,
    contribution: Mapping[str, Any],
    kind_of: KindOf | None = None,
    *,
    resolve_sub_question: KindOf | None = None,
) -> AgentGraph:
    """Convert one agent's merge contribution (docs/data-model.md) to its named-graph triples.

    ``kind_of(global_id)`` tells whether a relationship subject/object is a "claim" or an
    "entity" (ids in this contribution are known already; unknown → entity).
    ``resolve_sub_question(ref)`` maps a ``sub_question_id`` (not resolved by the merge) to a
    global id; by default a bare id is looked up in the writing agent's own namespace.
    """
    agent = str(contribution["agent"])
    conv = _Converter(agent, kind_of, resolve_sub_question)
    items: Mapping[str, Any] = contribution.get("items") or {}
    for key, kind in ITEM_KINDS.items():
        for item in items.get(key) or ():
            if isinstance(item, Mapping) and isinstance(item.get("id"), str):
                conv.own_kinds.setdefault(_global_id(agent, kind, item), kind)
    for key, kind in ITEM_KINDS.items():
        for index, item in enumerate(items.get(key) or ()):
            if isinstance(item, Mapping):
                conv.item(kind, index, item)
    focus = tuple(conv.origins)

    add = conv.triples.append
    node = conv.agent_node
    add((node, RDF.type, CC.Agent))
    add((node, RDF.type, PROV.SoftwareAgent))
    add((node, RDFS.label, Literal(agent)))
    add((session_iri(session_id), PROV.wasAssociatedWith, node))
    attempt = contribution.get("attempt")
    contrib = URIRef(f"urn:cconductor:contribution:{agent}/{attempt if isinstance(attempt, int) else 0}")
    add((contrib, RDF.type, CC.Contribution))
    add((contrib, RDF.type, PROV.Entity))
    add((contrib, PROV.wasAttributedTo, node))
    add((contrib, PROV.wasGeneratedBy, session_iri(session_id)))
    if isinstance(attempt, int):
        add((contrib, CC.attempt, Literal(attempt)))
    if isinstance(contribution.get("merged_at"), str):
        add((contrib, PROV.generatedAtTime, Literal(contribution["merged_at"], datatype=XSD.dateTime)))
    if isinstance(contribution.get("artifact_sha256"), str):
        add((contrib, CC.sha256, Literal(contribution["artifact_sha256"])))
    files = contribution.get("files") or {}
    for name in files:
        conv.file_node(name, "claim")
    for name, file_node in conv.files.items():
        add((contrib, PROV.hadMember, file_node))
        add((file_node, RDF.type, CC.ArtifactFile))
        add((file_node, RDF.type, PROV.Entity))
        add((file_node, RDFS.label, Literal(name)))
        if isinstance(files.get(name), str):
            add((file_node, CC.sha256, Literal(files[name])))
    return AgentGraph(agent, conv.triples, conv.origins, focus)


def session_triples(session_id: str, provenance: Mapping[str, Any] | None = None) -> list[Triple]:
    """Triples about the session itself (default graph): type and optional query/times."""
    node = session_iri(session_id)
    triples: list[Triple] = [
        (node, RDF.type, CC.Session), (node, RDF.type, PROV.Activity),
        (node, DCTERMS.identifier, Literal(session_id)),
    ]
    prov = provenance or {}
    for key, pred, dt in (("query", DCTERMS.description, None), ("title", DCTERMS.title, None),
                          ("started_at", PROV.startedAtTime, XSD.dateTime),
                          ("ended_at", PROV.endedAtTime, XSD.dateTime)):
        if isinstance(prov.get(key), str):
            triples.append((node, pred, Literal(prov[key], datatype=dt)))
    return triples
