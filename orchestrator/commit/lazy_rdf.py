"""Install agents' RDF into the SHACL union only when a merge's validation needs them.

Why: converting and installing every agent's contribution at start-up cost a processor
seconds on a large graph (12 s at 50 MB) before it read the one new agent. Incremental SHACL
looks only at the focus nodes of one merge (the agent's nodes, the nodes it removed, the nodes
pointing at them) and at what the shapes reach from them: the ``rdf:type`` of the nodes they
reference (``sh:class``), through the agent's own evidence nodes. So a merge needs the graphs of
the agent, of the agents owning the nodes it references, of the agents referencing it, and of
the agents those referrers reference. Loading more never changes a verdict, only the cost; the
tests compare with validation of the whole graph.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections import defaultdict
from collections.abc import Iterable, Mapping
from typing import Any

from rdflib import URIRef

from orchestrator.graph.state import GraphState
from orchestrator.rdf.convert import AgentGraph, contribution_to_graph
from orchestrator.rdf.state import RdfState
from orchestrator.rdf.vocabulary import FIELDS, ITEM_KINDS, parse_node_iri
from orchestrator.session.ledger import Store

__all__ = ["INDEX_KIND", "LazyRdf", "node_owners", "referenced_agents"]

#: The store's ``derived`` rows holding each record's referenced agents (one per line).
INDEX_KIND = "references"


#: item kind -> JSON paths (inside the item) whose values become IRI references in its RDF.
_REF_PATHS: dict[str, tuple[tuple[str, ...], ...]] = {
    kind: tuple(path for path, _, conv in fields if conv.startswith(("ref:", "refs:")))
    for kind, fields in FIELDS.items()
}


def _get(item: Mapping[str, Any], path: tuple[str, ...]) -> Any:
    value: Any = item
    for key in path:
        value = value.get(key) if isinstance(value, Mapping) else None
    return value


def _prefixes(kind: str, item: Mapping[str, Any], found: set[str]) -> None:
    for path in _REF_PATHS.get(kind, ()):
        value = _get(item, path)
        for ref in value if isinstance(value, list) else (value,):
            if isinstance(ref, str) and ":" in ref:
                found.add(ref.partition(":")[0])


def referenced_agents(record: Mapping[str, Any]) -> frozenset[str]:
    """The agents whose nodes the agent's RDF can point at (the prefix of each ``agent:id`` reference).

    Reads the same fields the RDF conversion turns into references (rdf.FIELDS), claims' evidence
    included. A bare reference names the agent's own item.
    """
    items = (record.get("contribution") or {}).get("items") or {}
    found: set[str] = set()
    for key, kind in ITEM_KINDS.items():
        for item in items.get(key) or ():
            if not isinstance(item, Mapping):
                continue
            _prefixes(kind, item, found)
            evidence = item.get("evidence") if kind == "claim" else None
            for ev in evidence if isinstance(evidence, list) else ():
                if isinstance(ev, Mapping):
                    _prefixes("evidence", ev, found)
    found.discard(str(record.get("agent")))
    return frozenset(found)


def _owners(graph: AgentGraph) -> set[str]:
    """Agents owning the nodes this graph's triples point at (its ``sh:class`` targets)."""
    found = set()
    for _, _, o in graph.triples:
        if isinstance(o, URIRef) and o.startswith("urn:cconductor:"):
            parsed = parse_node_iri(str(o))
            if parsed is not None and ":" in parsed[1]:
                found.add(parsed[1].partition(":")[0])
    found.discard(graph.agent)
    return found


def node_owners(graph: AgentGraph) -> set[str]:
    """Agents owning the subjects of this graph's triples (its own name only, unless it writes about others)."""
    found = set()
    for s, _, _ in graph.triples:
        parsed = parse_node_iri(str(s)) if isinstance(s, URIRef) else None
        if parsed is not None and parsed[0] != "session":
            found.add(parsed[1].partition(":")[0] if ":" in parsed[1] else parsed[1].partition("/")[0])
    return found


class LazyRdf:
    """The SHACL union over the installed subset of agents, kept equal to their committed records.

    Not thread-safe: the processor serialises calls under its lock.
    """

    def __init__(self, session_id: str, state: GraphState) -> None:
        self.session_id = session_id
        self.state = state
        self.rdf = RdfState()
        #: agent -> the record object whose graph is installed
        self._installed: dict[str, Mapping[str, Any]] = {}
        self._refs: dict[str, frozenset[str]] = {}
        self._referrers: dict[str, set[str]] = defaultdict(set)
        #: agent -> (record seq, referenced agents) as persisted in the store, and what to add to it
        self._index: dict[str, tuple[int, frozenset[str]]] | None = None
        self._unsaved: list[tuple[str, int, str]] = []

    # -- the persisted reference index ---------------------------------------------------------
    def load_index(self, store: Store) -> None:
        """Read each agent's referenced agents from the store once, instead of from every record."""
        if self._index is None:
            self._index = {agent: (seq, frozenset(body.split("\n")) - {""})
                           for agent, (seq, body) in store.derived(INDEX_KIND).items()}

    def save_index(self, store: Store) -> None:
        """Persist what :meth:`note` had to compute; a busy store is skipped (it is a cache)."""
        rows, self._unsaved = self._unsaved, []
        if rows:
            with contextlib.suppress(sqlite3.OperationalError):
                store.put_derived(INDEX_KIND, rows)

    def index_entry(self, agent: str) -> dict[str, str]:
        """The persisted index row of the agent's staged record, committed with it (Store.commit)."""
        return {INDEX_KIND: "\n".join(sorted(self._refs.get(agent, ())))}

    def committed(self, agent: str, seq: int) -> None:
        """The staged record of ``agent`` is now ledger entry ``seq`` (its index row went with it)."""
        if self._index is not None and agent in self._refs:
            self._index[agent] = (seq, self._refs[agent])

    def _referenced(self, agent: str, record: Mapping[str, Any]) -> frozenset[str]:
        seq = record.get("seq")
        known = self._index.get(agent) if self._index is not None else None
        if known is not None and known[0] == seq:
            return known[1]
        refs = referenced_agents(record)
        if isinstance(seq, int) and self._index is not None:
            self._index[agent] = (seq, refs)
            self._unsaved.append((agent, seq, "\n".join(sorted(refs))))
        return refs

    # -- bookkeeping of committed records --------------------------------------------------
    def note(self, agent: str, record: Mapping[str, Any] | None, *, staged: bool = False) -> None:
        """The state now holds ``record`` for ``agent``: index its references, refresh it if installed.

        ``staged``: the union already holds the graph of ``record`` (the merge just validated it).
        """
        for target in self._refs.pop(agent, ()):
            self._referrers[target].discard(agent)
        if record is not None:
            refs = self._referenced(agent, record)
            self._refs[agent] = refs
            for target in refs:
                self._referrers[target].add(agent)
        if staged and record is not None:
            self._installed[agent] = record
        elif agent in self._installed:
            if record is None:
                self.rdf.remove_agent(agent)
                del self._installed[agent]
            else:
                self._put(agent, record)

    def _put(self, agent: str, record: Mapping[str, Any]) -> AgentGraph:
        graph = contribution_to_graph(self.session_id, record["contribution"], kind_of=self.state.kind_of)
        self.rdf.replace_agent(graph)
        self._installed[agent] = record
        return graph

    def ensure(self, agents: Iterable[str]) -> None:
        """Install the committed graph of each of these agents that is not installed yet."""
        for agent in sorted(set(agents)):
            record = self.state.records.get(agent)
            if record is not None and self._installed.get(agent) is not record:
                self._put(agent, record)

    def ensure_all(self) -> RdfState:
        self.ensure(self.state.records)
        return self.rdf

    # -- one merge -----------------------------------------------------------------------
    def prepare(self, agent: str, graph: AgentGraph) -> None:
        """Install everything the validation of ``graph`` replacing ``agent``'s graph can look at."""
        self.ensure(self.neighbourhood(agent, graph))

    def neighbourhood(self, agent: str, graph: AgentGraph) -> set[str]:
        """The agents whose graphs the validation of ``graph`` replacing ``agent``'s can read."""
        referrers = set(self._referrers.get(agent, ()))
        needed = {agent} | _owners(graph) | referrers
        for other in referrers:
            needed |= self._refs.get(other, frozenset())
        return needed

    def unstage(self, agent: str, record: Mapping[str, Any] | None) -> None:
        """Undo :meth:`note` (staged) of a merge whose graph was already put back (its Undo ran).

        :meth:`prepare` had installed the committed ``record``, which the Undo restored.
        """
        for target in self._refs.pop(agent, ()):
            self._referrers[target].discard(agent)
        if record is None:
            self._installed.pop(agent, None)
            return
        refs = self._referenced(agent, record)
        self._refs[agent] = refs
        for target in refs:
            self._referrers[target].add(agent)
        self._installed[agent] = record

    def restore(self, agent: str, record: Mapping[str, Any] | None) -> None:
        """After a failed evaluation: the union holds exactly the committed graph of ``agent``, if any."""
        self.rdf.remove_agent(agent)
        self._installed.pop(agent, None)
        self.note(agent, record)
        if record is not None:
            self._put(agent, record)

    def installed(self) -> frozenset[str]:
        return frozenset(self._installed)

    def graph_of(self, agent: str, record: Mapping[str, Any]) -> AgentGraph | None:
        """The installed graph of ``agent`` if it was built from this very record, else None."""
        if self._installed.get(agent) is not record:
            return None
        return self.rdf.agent_graph(agent)
