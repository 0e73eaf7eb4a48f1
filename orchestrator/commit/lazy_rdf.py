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

from collections import defaultdict
from collections.abc import Iterable, Mapping
from typing import Any

from rdflib import URIRef

from orchestrator.graph.dependents import cited_agents
from orchestrator.graph.state import GraphState
from orchestrator.model.records import Record
from orchestrator.rdf.convert import AgentGraph, contribution_to_graph
from orchestrator.rdf.state import RdfState
from orchestrator.rdf.vocabulary import FIELDS, ITEM_KINDS, parse_node_iri
from orchestrator.session.ledger import Ledger

__all__ = ["REFERENCE_KEY", "LazyRdf", "node_owners", "referenced_agents", "target_owners"]

#: The store's key kind indexing each record under every agent it references.
REFERENCE_KEY = "ref"


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


def referenced_agents(record: Record) -> frozenset[str]:
    """The agents whose nodes the agent's RDF can point at (the prefix of each ``agent:id`` reference).

    Reads the same fields the RDF conversion turns into references (rdf.FIELDS), claims' evidence
    included, and those the merge resolves (a retry dropping an item asks who cites it). A bare
    reference names the agent's own item.
    """
    contribution = record.get("contribution") or {}
    items = contribution.get("items") or {}
    found: set[str] = cited_agents(contribution)
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


def target_owners(graph: AgentGraph) -> set[str]:
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


#: What ``_installed`` holds for an agent whose graph is not installed.
_NOT_INSTALLED = -1


class LazyRdf:
    """The SHACL union over the installed subset of agents, kept equal to their current records.

    Which record each installed graph comes from is its seq (None: a record accepted in this sweep,
    not committed yet), so a record read again from the ledger is recognised as the same one.
    Who references whom: in memory for the records put since the start (:meth:`note`), from the
    ledger's key index (``ref`` keys, commit/index_keys.py) for the committed records the state
    started from, so start-up reads no record. Not thread-safe: the processor serialises calls.
    """

    def __init__(self, session_id: str, state: GraphState, ledger: Ledger | None = None) -> None:
        self.session_id = session_id
        self.state = state
        self.ledger = ledger
        self.rdf = RdfState()
        #: agent -> the seq of the record whose graph is installed (None: not committed yet)
        self._installed: dict[str, int | None] = {}
        #: agents noted (records put since the start) -> the agents they reference, and the reverse
        self._refs: dict[str, frozenset[str]] = {}
        self._referrers: dict[str, set[str]] = defaultdict(set)

    def references_of(self, agent: str) -> frozenset[str]:
        """The agents whose items the agent's current record references."""
        if agent in self._refs:
            return self._refs[agent]
        if self.state.base_seq(agent) is None:
            return frozenset()
        return referenced_agents(self.state.records[agent])

    def referrers_of(self, agent: str) -> set[str]:
        """The agents whose current records reference items of ``agent``."""
        found = set(self._referrers.get(agent, ()))
        if self.ledger is not None:
            found.update(other for other, seq, _ in self.ledger.holders(REFERENCE_KEY, agent)
                         if self.state.base_seq(other) == seq)
        return found

    # -- bookkeeping of committed records --------------------------------------------------
    def note(self, agent: str, record: Record | None, *, staged: bool = False) -> None:
        """The state now holds ``record`` for ``agent``: index its references, refresh it if installed.

        ``staged``: the union already holds the graph of ``record`` (the merge just validated it).
        """
        for target in self._refs.pop(agent, ()):
            self._referrers[target].discard(agent)
        if record is not None:
            refs = referenced_agents(record)
            self._refs[agent] = refs
            for target in refs:
                self._referrers[target].add(agent)
        if staged and record is not None:
            self._installed[agent] = record.get("seq")
        elif agent in self._installed:
            if record is None:
                self.rdf.remove_agent(agent)
                del self._installed[agent]
            else:
                self._put(agent, record)

    def _put(self, agent: str, record: Record) -> AgentGraph:
        graph = contribution_to_graph(self.session_id, record["contribution"], kind_of=self.state.kind_of)
        self.rdf.replace_agent(graph)
        self._installed[agent] = record.get("seq")
        return graph

    def committed(self, agent: str, seq: int) -> None:
        """The agent's current record, installed as not committed yet, was committed as ``seq``."""
        if agent in self._installed and self._installed[agent] is None:
            self._installed[agent] = seq

    def _holds(self, agent: str, record: Record) -> bool:
        """The installed graph of ``agent`` is the graph of ``record`` (the same seq; both None: this sweep's)."""
        return self._installed.get(agent, _NOT_INSTALLED) == record.get("seq")

    def ensure(self, agents: Iterable[str]) -> None:
        """Install the committed graph of each of these agents that is not installed yet."""
        for agent in sorted(set(agents)):
            record = self.state.records.get(agent)
            if record is not None and not self._holds(agent, record):
                self._put(agent, record)

    def ensure_all(self) -> RdfState:
        self.ensure(self.state.records.load_all())
        return self.rdf

    # -- one merge -----------------------------------------------------------------------
    def prepare(self, agent: str, graph: AgentGraph) -> None:
        """Install everything the validation of ``graph`` replacing ``agent``'s graph can look at."""
        self.ensure(self.neighbourhood(agent, graph))

    def neighbourhood(self, agent: str, graph: AgentGraph) -> set[str]:
        """The agents whose graphs the validation of ``graph`` replacing ``agent``'s can read."""
        referrers = self.referrers_of(agent)
        needed = {agent} | target_owners(graph) | referrers
        for other in referrers:
            needed |= self.references_of(other)
        return needed

    def unstage(self, agent: str, record: Record | None) -> None:
        """Undo :meth:`note` (staged) of a merge whose graph was already put back (its Undo ran).

        :meth:`prepare` had installed the committed ``record``, which the Undo restored.
        """
        for target in self._refs.pop(agent, ()):
            self._referrers[target].discard(agent)
        if record is None:
            self._installed.pop(agent, None)
            return
        refs = referenced_agents(record)
        self._refs[agent] = refs
        for target in refs:
            self._referrers[target].add(agent)
        self._installed[agent] = record.get("seq")

    def restore(self, agent: str, record: Record | None) -> None:
        """After a failed judging: the union holds exactly the committed graph of ``agent``, if any."""
        self.rdf.remove_agent(agent)
        self._installed.pop(agent, None)
        self.note(agent, record)
        if record is not None:
            self._put(agent, record)

    def installed(self) -> frozenset[str]:
        return frozenset(self._installed)

    def graph_of(self, agent: str, record: Record) -> AgentGraph | None:
        """The installed graph of ``agent`` if it was built from this record, else None."""
        if not self._holds(agent, record):
            return None
        return self.rdf.agent_graph(agent)
