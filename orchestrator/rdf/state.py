"""The session's RDF union graph, refcounted per agent, with incremental SHACL validation.

pyshacl is linear in the data graph (about 6-8 s at 100k triples), so each merge validates only
the focus nodes it can have changed: the agent's nodes, the nodes it removed, and the nodes of any
agent that point at them. The union is refcounted so that a triple two agents assert survives
when one of them is replaced; every change returns an Undo, so a rejected merge leaves no trace.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import pyshacl
from rdflib import Graph, URIRef
from rdflib.namespace import RDF

from orchestrator.model.problems import Problem
from orchestrator.rdf.convert import AgentGraph, Origin
from orchestrator.rdf.shacl import FAST, SH, SHACLExecutor, Validator, shapes, wrap
from orchestrator.rdf.shacl_report import problems_from_report
from orchestrator.rdf.union_store import UnionStore
from orchestrator.rdf.vocabulary import CC, Triple


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
        self._store = UnionStore()
        self.graph = Graph(store=self._store)  # the union; mutate only through replace_agent/remove_agent
        self._count: dict[Triple, int] = {}
        self._agents: dict[str, AgentGraph] = {}
        self._sets: dict[str, frozenset[Triple]] = {}
        self._origins: dict[URIRef, Origin] = {}
        self._touched: dict[str, frozenset[URIRef]] = {}
        self._data = wrap(self.graph) if FAST else self.graph

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

    def forget(self, agent: str) -> None:
        """Take the agent's graph out as if it had never been installed (no nodes left to revalidate)."""
        self._set(agent, None)
        self._touched.pop(agent, None)

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
        count, store = self._count, self._store  # the store itself: Graph.add's checks hold for converted triples
        for t in old_set - new_set if old_set else ():
            c = count[t] - 1
            if c:
                count[t] = c
            else:
                del count[t]
                store.remove(t)
        for t in new_set - old_set if old_set else new_set:  # a first graph: no set difference to build
            c = count.get(t, 0)
            count[t] = c + 1
            if not c:
                store.add(t)
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
        groups = self._by_shape(nodes)
        if not groups:
            return []
        if not FAST:  # public API only: each shape scans all its targets (slow), then filters
            focus_nodes = sorted({n for focus in groups.values() for n in focus})
            _, report, _ = pyshacl.validate(self.graph, shacl_graph=sh.graph, inference="none",
                                            focus_nodes=list[str | URIRef](focus_nodes))
            return problems_from_report(report, self._origins)
        results = list(self._results(groups))
        if not results:
            return []
        report, _ = Validator.create_validation_report(sh.shapes_graph, False, results)
        return problems_from_report(report, self._origins)

    def _by_shape(self, nodes: Iterable[URIRef]) -> dict[URIRef, list[URIRef]]:
        """The nodes grouped by each shape that targets one of their classes."""
        by_class = shapes().by_class
        groups: dict[URIRef, list[URIRef]] = {}
        for node in nodes:
            for cls in self.graph.objects(node, RDF.type):
                for shape in by_class.get(cls, ()):
                    groups.setdefault(shape, []).append(node)
        return groups

    def _results(self, groups: Mapping[URIRef, list[URIRef]]) -> Iterator[Any]:
        """pyshacl's results for each shape's focus nodes (the fast path: shapes parsed once)."""
        sh = shapes()
        executor = SHACLExecutor(allow_warnings=True, allow_infos=True)
        for shape_iri, focus in sorted(groups.items()):
            focus_list = sh.needs_check(shape_iri, sorted(set(focus)), self.graph)
            for shape in sh.plan[shape_iri] if focus_list else ():
                yield from shape.validate(executor, self._data, focus=focus_list)[1]

    def validate_many(self, focus: Mapping[str, Iterable[URIRef]]) -> dict[str, list[Problem]]:
        """Each agent's problems for its own focus nodes, all of them validated in one pyshacl pass.

        SHACL judges each focus node on its own, so a node's results do not depend on which other
        nodes are validated with it; splitting the results by focus node gives each agent what
        :meth:`validate_nodes` gives for its nodes alone (problems are sorted, so order is moot).
        """
        if not FAST:
            return {agent: self.validate_nodes(nodes) for agent, nodes in focus.items()}
        owners: dict[URIRef, list[str]] = {}
        for agent, nodes in focus.items():
            for node in nodes:
                owners.setdefault(node, []).append(agent)
        results: dict[str, list[Any]] = {}
        for result in self._results(self._by_shape(owners)):
            for agent in owners[_focus_of(result)]:
                results.setdefault(agent, []).append(result)
        found: dict[str, list[Problem]] = {agent: [] for agent in focus}
        for agent, agent_results in results.items():
            report, _ = Validator.create_validation_report(shapes().shapes_graph, False, agent_results)
            found[agent] = problems_from_report(report, self._origins)
        return found

    def validate_full(self) -> list[Problem]:
        """Validate the whole union graph with the public pyshacl API (seconds at 100k triples)."""
        _, report, _ = pyshacl.validate(self.graph, shacl_graph=shapes().graph, inference="none",
                                        allow_warnings=True, allow_infos=True)
        return problems_from_report(report, self._origins)


# --- Report → Problems --------------------------------------------------------------------


def _focus_of(result: Any) -> URIRef:
    """The focus node of one pyshacl result (description, result node, triples with (graph, node) objects)."""
    for _, pred, obj in result[2]:
        if pred == SH.focusNode:
            return obj[1] if isinstance(obj, tuple) else obj
    raise ValueError("a SHACL result without sh:focusNode")
