"""The session's RDF union graph, and SHACL validation of it turned into Problems.

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
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

import pyshacl
from rdflib import Graph, Literal, Namespace, URIRef
from rdflib.namespace import RDF
from rdflib.term import Node

from orchestrator.model.layout import resource_dir
from orchestrator.model.problems import Problem, Severity, pointer_join
from orchestrator.rdf.convert import CC, AgentGraph, Origin, Triple, field_path, parse_node_iri

try:  # pyshacl internals: let us validate pre-grouped focus nodes with shapes parsed once.
    from pyshacl.pytypes import SHACLExecutor
    from pyshacl.validator import Validator

    try:
        from pyshacl.graph_abstraction import DataGraph as _DataGraph

        def _wrap(graph: Graph) -> Any:
            return _DataGraph.from_rdflib(graph)
    except ImportError:  # pyshacl < 0.40 validates rdflib graphs directly
        def _wrap(graph: Graph) -> Any:
            return graph
    _FAST = True
except ImportError:  # pragma: no cover - fall back to the public API (slower, same results)
    _FAST = False

__all__ = ["CCSH", "SH", "RdfState", "Shapes", "Undo", "problems_from_report", "shapes"]

SH = Namespace("http://www.w3.org/ns/shacl#")
CCSH = Namespace("https://cconductor.dev/shapes#")
EVIDENCE_BINDING_SHAPE = CCSH["HighPriorityClaimShape-verifiedEvidence"]
_SEVERITY: dict[Node, Severity] = {SH.Violation: "error", SH.Warning: "warning", SH.Info: "info"}
_log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Shapes:
    """The shapes graph, parsed once per process, with what incremental validation needs."""

    graph: Graph
    shapes_graph: Any  # pyshacl.ShapesGraph
    by_class: Mapping[Node, tuple[URIRef, ...]]  # target class → node shapes
    plan: Mapping[URIRef, tuple[Any, ...]]  # node shape → pyshacl Shapes to run on its focus nodes
    templates: Mapping[Node, tuple[str, str]]  # shape → (what is wrong, how to fix) templates


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


@cache
def shapes() -> Shapes:
    """Parse ontology/shapes.ttl once per process (about 20 ms) and index it for validation."""
    graph = Graph().parse(resource_dir("ontology") / "shapes.ttl", format="turtle")
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
    plan = {s: _plan(graph, sg, s) for ss in by_class.values() for s in ss} if _FAST else {}
    return Shapes(graph, sg, {c: tuple(sorted(s)) for c, s in by_class.items()}, plan, templates)


class Undo:
    """Puts back the agent's previous graph (or its absence) exactly; calling it twice is a no-op.

    Only that agent's part is restored, so undoing after other agents changed is still safe.
    """

    def __init__(self, state: RdfState, agent: str, previous: AgentGraph | None,
                 touched: frozenset[URIRef] | None) -> None:
        self._state, self._agent, self._previous, self._touched = state, agent, previous, touched
        self._done = False

    def __call__(self) -> None:
        if self._done:
            return
        self._done = True
        self._state._set(self._agent, self._previous)
        if self._touched is None:
            self._state._touched.pop(self._agent, None)
        else:
            self._state._touched[self._agent] = self._touched


class RdfState:
    """All agents' triples as one rdflib Graph (what pyshacl validates) plus each AgentGraph.

    Not thread-safe: the caller serialises merges (the pipeline holds its lock).
    """

    def __init__(self) -> None:
        self.graph = Graph()  # the union; mutate only through replace_agent/remove_agent
        self._count: dict[Triple, int] = {}
        self._agents: dict[str, AgentGraph] = {}
        self._sets: dict[str, frozenset[Triple]] = {}
        self._origins: dict[URIRef, Origin] = {}
        self._touched: dict[str, frozenset[URIRef]] = {}
        self._data = _wrap(self.graph) if _FAST else self.graph

    @property
    def triple_count(self) -> int:
        return len(self._count)

    def agent_graphs(self) -> dict[str, AgentGraph]:
        return dict(self._agents)

    def agent_graph(self, agent: str) -> AgentGraph | None:
        return self._agents.get(agent)

    def origin(self, node: URIRef) -> Origin | None:
        return self._origins.get(node)

    def replace_agent(self, agent_graph: AgentGraph) -> Undo:
        """Stage ``agent_graph`` in place of the agent's previous triples; return how to undo it."""
        return self._stage(agent_graph.agent, agent_graph)

    def remove_agent(self, agent: str) -> Undo:
        return self._stage(agent, None)

    def _stage(self, agent: str, new: AgentGraph | None) -> Undo:
        old = self._agents.get(agent)
        undo = Undo(self, agent, old, self._touched.get(agent))
        self._set(agent, new)
        self._touched[agent] = frozenset(old.focus_nodes if old else ()) | frozenset(
            new.focus_nodes if new else ())
        return undo

    def _set(self, agent: str, new: AgentGraph | None) -> None:
        """Swap the agent's triples, touching only the difference (a retry changes little)."""
        old_set = self._sets.get(agent, frozenset())
        new_set = frozenset(new.triples) if new else frozenset()
        count, graph = self._count, self.graph
        for t in old_set - new_set:
            c = count[t] - 1
            if c:
                count[t] = c
            else:
                del count[t]
                graph.remove(t)
        for t in new_set - old_set:
            c = count.get(t, 0)
            count[t] = c + 1
            if not c:
                graph.add(t)
        old = self._agents.get(agent)
        if old is not None:
            for node, origin in old.origins.items():
                if self._origins.get(node) is origin:
                    del self._origins[node]
        if new is None:
            self._agents.pop(agent, None)
            self._sets.pop(agent, None)
        else:
            self._agents[agent], self._sets[agent] = new, new_set
            for node, origin in new.origins.items():
                self._origins.setdefault(node, origin)

    def focus_for(self, agent: str) -> set[URIRef]:
        """The agent's nodes, those its last change removed, and every node pointing at them."""
        agent_graph = self._agents.get(agent)
        base = set(agent_graph.focus_nodes if agent_graph else ()) | self._touched.get(agent, frozenset())
        focus = set(base)
        graph = self.graph
        for node in base:
            for s in graph.subjects(None, node):
                if isinstance(s, URIRef) and s not in focus:
                    focus.add(s)
                    if (s, RDF.type, CC.Evidence) in graph:  # the claim holding that evidence
                        focus.update(c for c in graph.subjects(CC.hasEvidence, s) if isinstance(c, URIRef))
        return focus

    def validate_agent(self, agent: str) -> list[Problem]:
        """Validate what the agent's last change can have affected (other agents' nodes included)."""
        return self.validate_nodes(self.focus_for(agent))

    def validate_nodes(self, nodes: Iterable[URIRef]) -> list[Problem]:
        """Validate these nodes against the shapes targeting their classes, nothing else."""
        sh = shapes()
        groups: dict[URIRef, list[URIRef]] = {}
        graph = self.graph
        for node in nodes:
            for cls in graph.objects(node, RDF.type):
                for shape in sh.by_class.get(cls, ()):
                    groups.setdefault(shape, []).append(node)
        if not groups:
            return []
        if not _FAST:  # public API only: each shape scans all its targets (slow), then filters
            focus_nodes = sorted({n for focus in groups.values() for n in focus})
            _, report, _ = pyshacl.validate(graph, shacl_graph=sh.graph, inference="none",
                                            focus_nodes=list[str | URIRef](focus_nodes))
            return problems_from_report(report, self._origins)
        executor = SHACLExecutor(allow_warnings=True, allow_infos=True)
        results: list[Any] = []
        for shape_iri, focus in sorted(groups.items()):
            focus_list = sorted(set(focus))
            for shape in sh.plan[shape_iri]:
                _, reports = shape.validate(executor, self._data, focus=focus_list)
                results.extend(reports)
        if not results:
            return []
        report, _ = Validator.create_validation_report(sh.shapes_graph, False, results)
        return problems_from_report(report, self._origins)

    def validate_full(self) -> list[Problem]:
        """Validate the whole union graph with the public pyshacl API (seconds at 100k triples)."""
        _, report, _ = pyshacl.validate(self.graph, shacl_graph=shapes().graph, inference="none",
                                        allow_warnings=True, allow_infos=True)
        return problems_from_report(report, self._origins)


# --- Report → Problems --------------------------------------------------------------------

def _clip(text: Any, limit: int = 160) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _show(value: Node | None) -> str:
    if value is None:
        return "(none)"
    if isinstance(value, Literal):
        if value.datatype is None and value.language is None:
            return f"'{_clip(value, 80)}'"
        return _clip(value, 80)
    parsed = parse_node_iri(str(value))
    return f"'{parsed[1]}'" if parsed else f"<{value}>"


def _local(iri: Node | None) -> str:
    text = str(iri or "")
    return text.rsplit("#", 1)[-1].rsplit("/", 1)[-1]


def _pointer(origin: Origin, path: Node | None, value: Node | None) -> str:
    """The origin's pointer, narrowed to the field (and list element) the result is about."""
    fpath = field_path(origin.kind, path) if isinstance(path, URIRef) else None
    if fpath is None:
        return origin.pointer
    current: Any = origin.item
    for key in fpath:
        current = current.get(key) if isinstance(current, Mapping) else None
    if current is None:
        return origin.pointer
    pointer = origin.pointer + pointer_join(*fpath)
    if isinstance(current, list) and value is not None:
        parsed = parse_node_iri(str(value)) if isinstance(value, URIRef) else None
        for i, element in enumerate(current):
            if (parsed and element in (parsed[1], parsed[1].partition(":")[2])) or (
                    not parsed and str(element) == str(value)):
                return pointer + pointer_join(i)
    return pointer


def _evidence_binding(origin: Origin) -> tuple[str, str]:
    """Say why a high-priority claim is unbound, quoting its snippets and the closest passages."""
    evidence = origin.item.get("evidence")
    parts = []
    for n, ev in enumerate(evidence if isinstance(evidence, list) else []):
        if not isinstance(ev, Mapping):
            continue
        head = f"evidence {n} quotes \"{_clip(ev.get('snippet', ''))}\" from source '{ev.get('source_id')}'"
        ver = ev.get("verification")
        if not isinstance(ver, Mapping):
            parts.append(head + ", which could not be checked because that source has no stored text")
        elif ver.get("verified") is True:
            parts.append(head + ", which was verified")
        else:
            page = f", page {ver['page']}" if ver.get("page") is not None else ""
            closest = ver.get("matched_text")
            parts.append(head + (f", but the closest passage in that source is \"{_clip(closest)}\" "
                                 f"(match score {ver.get('score')}{page})" if closest else
                                 ", but no similar passage was found in that source"))
    found = "; ".join(parts) if parts else "it has no evidence at all"
    message = (f"High-priority claim '{origin.id}' has no evidence verified against a stored source text: "
               f"{found}")
    hint = ("quote the source verbatim: copy the exact passage from the source text into 'snippet' of at "
            "least one evidence item of this claim in claims.json, citing in 'source_id' a source whose "
            "text is stored (it has 'content_sha256'); or lower the claim's 'priority' to medium")
    return message, hint


def problems_from_report(report: Graph, origins: Mapping[URIRef, Origin]) -> list[Problem]:
    """Turn a pyshacl report graph into Problems located in the agents' artifact files."""
    templates = shapes().templates
    merged: dict[tuple[str, str, str, str], tuple[list[str], dict[str, Any]]] = {}
    for result in report.subjects(RDF.type, SH.ValidationResult):
        focus = report.value(result, SH.focusNode)
        path = report.value(result, SH.resultPath)
        value = report.value(result, SH.value)
        shape = report.value(result, SH.sourceShape) or SH.Shape
        component = _local(report.value(result, SH.sourceConstraintComponent))
        severity = _SEVERITY.get(report.value(result, SH.resultSeverity) or SH.Violation, "error")
        origin = origins.get(focus) if isinstance(focus, URIRef) else None
        parsed = parse_node_iri(str(focus))
        this = origin.id if origin else (parsed[1] if parsed else str(focus))
        if shape == EVIDENCE_BINDING_SHAPE and origin is not None:
            message, hint = _evidence_binding(origin)
        else:
            what, how = templates.get(shape, ("{$this} violates " + _local(shape), ""))
            fpath = field_path(origin.kind, path) if origin and isinstance(path, URIRef) else None
            fill = {"{$this}": f"'{this}'", "{?value}": _show(value),
                    "{$path}": ".".join(fpath) if fpath else _local(path)}
            for key, text in fill.items():
                what, how = what.replace(key, text), how.replace(key, text)
            message, hint = what, how or "see the rule " + _local(shape)
        dedup = (str(focus), str(shape), str(value), severity)
        if dedup in merged:
            merged[dedup][0].append(component)
            continue
        merged[dedup] = ([component], {
            "file": origin.file if origin else None,
            "pointer": _pointer(origin, path, value) if origin else "",
            "message": message, "hint": hint, "severity": severity,
            "details": {"focus_node": str(focus), "path": str(path) if path is not None else None,
                        "value": str(value) if value is not None else None, "shape": str(shape),
                        "preview": origin.preview if origin else "",
                        "agent": origin.agent if origin else None},
        })
    problems = []
    for components, fields in merged.values():
        components.sort()
        details = dict(fields.pop("details"))
        details["components"] = components
        problems.append(Problem(rule=f"shacl.{components[0]}", details=details, **fields))
    problems.sort(key=lambda p: (p.file or "", p.pointer, p.rule, p.message))
    return problems
