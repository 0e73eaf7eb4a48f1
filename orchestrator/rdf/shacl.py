"""The SHACL shapes, parsed once, and pyshacl's fast path for validating chosen focus nodes.

The union graph they validate is rdf/state.py; turning a validation report into Problems that
name the artifact file and JSON pointer is rdf/shacl_report.py.

Why it looks like this (measurements in the library study, §7): pyshacl is linear in the
data graph (about 6-8 s at 100k triples), so each merge validates only the focus nodes it can
have changed: the agent's nodes, the nodes it removed, and the nodes of any agent that point
at them (a claim citing this agent's source). The union graph is kept whole so that
``sh:class`` and cross-agent references resolve, and it is refcounted so that a triple two
agents assert survives when one of them is replaced. Full validation (the public
``pyshacl.validate``) stays available for checkpoints and as the reference the incremental path
is tested against.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import pyoxigraph
import pyshacl
from rdflib import BNode, Graph, Literal, Namespace, URIRef
from rdflib.namespace import XSD
from rdflib.term import Node

from orchestrator.contract.patterns import end_of_string
from orchestrator.model.layout import resource_dir
from orchestrator.model.problems import Severity

try:  # pyshacl internals: let us validate pre-grouped focus nodes with shapes parsed once.
    from pyshacl.pytypes import SHACLExecutor
    from pyshacl.validator import Validator

    try:
        from pyshacl.graph_abstraction import DataGraph as _DataGraph

        def wrap(graph: Graph) -> Any:
            return _DataGraph.from_rdflib(graph)
    except ImportError:  # pyshacl < 0.40 validates rdflib graphs directly
        def wrap(graph: Graph) -> Any:
            return graph
    FAST = True
except ImportError:  # pragma: no cover - fall back to the public API (slower, same results)
    FAST = False

__all__ = ["CCSH", "FAST", "SEVERITY", "SH", "SHACLExecutor", "Shapes", "Validator", "shapes", "wrap"]

SH = Namespace("http://www.w3.org/ns/shacl#")
CCSH = Namespace("https://cconductor.dev/shapes#")
EVIDENCE_BINDING_SHAPE = CCSH["HighPriorityClaimShape-verifiedEvidence"]
SEVERITY: dict[Node, Severity] = {SH.Violation: "error", SH.Warning: "warning", SH.Info: "info"}
_log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Shapes:
    """The shapes graph, parsed once per process, with what incremental validation needs."""

    graph: Graph
    shapes_graph: Any  # pyshacl.ShapesGraph
    by_class: Mapping[Node, tuple[URIRef, ...]]  # target class → node shapes
    plan: Mapping[URIRef, tuple[Any, ...]]  # node shape → pyshacl Shapes to run on its focus nodes
    templates: Mapping[Node, tuple[str, str]]  # shape → (what is wrong, how to fix) templates
    #: node shape → (predicate, n): a focus node with n or more values of predicate conforms to it
    passes_with: Mapping[URIRef, tuple[URIRef, int]] = field(default_factory=dict)

    def needs_check(self, shape: URIRef, nodes: list[URIRef], graph: Graph) -> list[URIRef]:
        """The nodes the shape can find fault with: those :attr:`passes_with` cannot vouch for."""
        rule = self.passes_with.get(shape)
        if rule is None:
            return nodes
        predicate, count = rule
        return [n for n in nodes if len(set(graph.objects(n, predicate))) < count]


def _plan(graph: Graph, sg: Any, node_shape: URIRef) -> tuple[Any, ...]:
    """Run a node shape made only of sh:property as its property shapes, each on all focus nodes.

    pyshacl evaluates a node shape's property shapes once per focus node and rebuilds their
    constraint objects every time; calling each property shape with the whole focus list gives
    the same results (the tests compare with full validation) at a third of the cost.
    """
    try:
        from pyshacl.constraints import ALL_CONSTRAINT_PARAMETERS
    except ImportError:  # pragma: no cover
        return (sg.lookup_shape_from_node(node_shape),)
    params = {p for p in graph.predicates(node_shape) if p in ALL_CONSTRAINT_PARAMETERS}
    if params != {SH.property}:
        return (sg.lookup_shape_from_node(node_shape),)
    properties = sorted(graph.objects(node_shape, SH.property), key=str)
    return tuple(sg.lookup_shape_from_node(ps) for ps in properties)


def _passes_with(graph: Graph, node_shape: URIRef) -> tuple[URIRef, int] | None:
    """For a node shape made only of ``sh:or``: a member that is just ``sh:path <p>; sh:minCount n``.

    A focus node with n values of p conforms to that member, so to the sh:or, so to the shape, and
    the shape reports nothing for it (pyshacl drops the members' own results). pyshacl still runs
    every member on every node and builds each failing member's result (~0.9 ms per agent of five
    claims); :meth:`Shapes.needs_check` leaves such nodes out. Tests compare with the public API.
    """
    try:
        from pyshacl.constraints import ALL_CONSTRAINT_PARAMETERS
    except ImportError:  # pragma: no cover
        return None
    if {p for p in graph.predicates(node_shape) if p in ALL_CONSTRAINT_PARAMETERS} != {SH["or"]} or \
            (node_shape, SH.deactivated, None) in graph:
        return None
    for members in graph.objects(node_shape, SH["or"]):
        for member in graph.items(members):
            params = {p for p in graph.predicates(member) if p in ALL_CONSTRAINT_PARAMETERS}
            path = graph.value(member, SH.path)
            count = graph.value(member, SH.minCount)
            if params == {SH.minCount} and isinstance(path, URIRef) and isinstance(count, Literal) and \
                    isinstance(count.toPython(), int) and (member, SH.deactivated, None) not in graph:
                return path, int(count.toPython())
    return None


def _term(term: Any, blanks: dict[str, BNode]) -> Node:
    if isinstance(term, pyoxigraph.NamedNode):
        return URIRef(term.value)
    if isinstance(term, pyoxigraph.BlankNode):
        found = blanks.get(term.value)
        if found is None:  # numbered in the order the file writes them: every process names them alike
            found = blanks[term.value] = BNode(f"b{len(blanks)}")
        return found
    if term.language:
        return Literal(term.value, lang=term.language)
    datatype = term.datatype.value
    # rdflib's Turtle parser leaves a plain string untyped; pyoxigraph says xsd:string
    return Literal(term.value) if datatype == str(XSD.string) else Literal(term.value, datatype=URIRef(datatype))


def parse_turtle(path: Path) -> Graph:
    """The rdflib graph of a Turtle file, parsed by pyoxigraph.

    Why: the same triples as ``Graph().parse(path, format="turtle")`` (a test compares them,
    literals' lexical forms, datatypes and languages included) in about 7 ms instead of 17-20,
    a cost every one-shot ``process`` pays; pyshacl imports pyoxigraph anyway. Blank nodes are
    numbered in the order the file writes them, not named at random: a problem that names a
    shape's blank-node path reads the same in every process (a helper judging an agent, the
    processor, the next run).
    """
    graph = Graph()
    blanks: dict[str, BNode] = {}
    with path.open("rb") as handle:
        for triple in pyoxigraph.parse(handle, format=pyoxigraph.RdfFormat.TURTLE):
            graph.add((_term(triple.subject, blanks), _term(triple.predicate, blanks),
                       _term(triple.object, blanks)))
    return graph


def _python_patterns(graph: Graph) -> Graph:
    """The shapes with each ``sh:pattern`` meaning for pyshacl (which runs it with :mod:`re`) what it means in
    SHACL: ``$`` is the end of the value, so ``"10.1234/abc\\n"`` fails ``^10\\.[0-9]{4,9}/\\S+$``
    (:func:`orchestrator.contract.patterns.end_of_string`). shapes.ttl keeps the standard patterns."""
    for shape, pattern in list(graph.subject_objects(SH.pattern)):
        flags = graph.value(shape, SH.flags)
        if isinstance(pattern, Literal) and "m" not in str(flags or ""):
            rewritten = end_of_string(str(pattern))
            if rewritten != str(pattern):
                graph.remove((shape, SH.pattern, pattern))
                graph.add((shape, SH.pattern, Literal(rewritten)))
    return graph


@cache
def shapes() -> Shapes:
    """Parse ontology/shapes.ttl once per process and index it for validation."""
    graph = _python_patterns(parse_turtle(resource_dir("ontology") / "shapes.ttl"))
    by_class: dict[URIRef, list[URIRef]] = {}
    for shape, cls in graph.subject_objects(SH.targetClass):
        if isinstance(shape, URIRef) and isinstance(cls, URIRef):
            by_class.setdefault(cls, []).append(shape)
    templates = {}
    for shape, msg in graph.subject_objects(SH.message):
        what, sep, how = str(msg).partition(": ")
        templates[shape] = (what, how) if sep else (what, "")
    sg = pyshacl.ShapesGraph(graph, logger=_log)
    sg.shapes  # noqa: B018 - harvest the shapes now, not during the first merge
    plan = {s: _plan(graph, sg, s) for ss in by_class.values() for s in ss} if FAST else {}
    passes = {s: rule for ss in by_class.values() for s in ss if (rule := _passes_with(graph, s)) is not None}
    return Shapes(graph, sg, {c: tuple(sorted(s)) for c, s in by_class.items()}, plan, templates, passes)
