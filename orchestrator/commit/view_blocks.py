"""``knowledge-graph.trig`` from cached per-agent blocks, so a flush costs what changed.

Each agent's named graph is rendered once per committed record and kept in memory and in
the store (table ``derived``, keyed by the record's ledger seq): a fresh ``cconductor
process`` writes the TriG of a 50 MB graph by joining stored blocks, without converting a
single other agent to RDF. The blocks are derived data; a missing or stale one is rendered again.
Blocks are kept as UTF-8 bytes, in memory and in the store: the file is written from them as they
are, and a 50 MB graph's blocks are not held twice (as text and as bytes).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from orchestrator.graph.current_evidence import Overrides, current_contribution
from orchestrator.model.records import Record
from orchestrator.rdf.convert import contribution_to_graph
from orchestrator.rdf.vocabulary import agent_iri
from orchestrator.rdf.write import trig_block, trig_document

if TYPE_CHECKING:
    from orchestrator.commit.context import JudgingContext

__all__ = ["TrigBlocks"]

KIND = "trig"


class TrigBlocks:
    """One per processor, keyed by each agent's record seq. Call :meth:`keyed_blocks` under the processor's
    lock (it reads the graph state)."""

    def __init__(self, context: JudgingContext) -> None:
        self.context = context
        self._memory: dict[str, tuple[int | None, bytes]] = {}
        #: blocks of agents whose evidence the view counts otherwise than their record (a stored text deleted
        #: or altered since): by agent, (record seq, the verifications shown, the block); never stored
        self._recounted: dict[str, tuple[int | None, bytes, bytes]] = {}
        self._loaded = False

    def keyed_blocks(self, records: Mapping[str, Record],
                     overrides: Mapping[str, Overrides] | None = None) -> list[tuple[str, bytes]]:
        """(graph IRI, UTF-8 TriG block) of each agent of ``records``; the view writes them sorted by IRI.

        ``overrides``: the evidence whose verification the JSON view counts otherwise than the record
        (:func:`orchestrator.graph.current_evidence.verification_overrides`): the TriG says the same."""
        context = self.context
        overrides = overrides or {}
        missing = self._missing(records)
        if missing and not self._loaded:
            self._loaded = True
            for agent, (stored_seq, body) in context.ledger.derived(KIND).items():
                if agent in missing:  # text in stores written before blocks were kept as bytes
                    self._memory[agent] = (stored_seq, body.encode() if isinstance(body, str) else body)
            missing = self._missing(records)
        fresh = []
        for agent in missing:
            record = records[agent]
            body = trig_block(context.graph.lazy.graph_of(agent, record) or contribution_to_graph(
                context.session_id, record["contribution"], kind_of=context.graph.state.kind_of)).encode()
            seq = record.get("seq")
            self._memory[agent] = (seq, body)
            if isinstance(seq, int):
                fresh.append((agent, seq, body))
        if fresh:
            context.ledger.put_derived(KIND, fresh)
        for agent in [a for a in self._memory if a not in records]:
            del self._memory[agent]
        for agent in [a for a in self._recounted if a not in overrides]:
            del self._recounted[agent]
        return [(str(agent_iri(a)), self._recounted_block(a, records[a], overrides[a]) if a in overrides
                 else self._memory[a][1]) for a in records]

    def _recounted_block(self, agent: str, record: Record, overrides: Overrides) -> bytes:
        shown = repr(sorted(overrides.items(), key=lambda kv: kv[0])).encode()
        kept = self._recounted.get(agent)
        if kept is not None and kept[0] == record.get("seq") and kept[1] == shown:
            return kept[2]
        contribution = current_contribution(record["contribution"], overrides)
        body = trig_block(contribution_to_graph(self.context.session_id, contribution,
                                                kind_of=self.context.graph.state.kind_of)).encode()
        self._recounted[agent] = (record.get("seq"), shown, body)
        return body

    def _missing(self, records: Mapping[str, Record]) -> list[str]:
        memory = self._memory
        return [a for a, r in records.items()
                if a not in memory or memory[a][0] is None or memory[a][0] != r.get("seq")]

    def render(self, records: Mapping[str, Record]) -> str:
        return trig_document(self.context.session_id, [b.decode() for _, b in sorted(self.keyed_blocks(records))])
