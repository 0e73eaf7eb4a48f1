"""Relations the graph only implies: shortest chains of relationships between two nodes (BFS).

An edge is a relationship that a verified passage of one of its supporting claims states (both
ends named, the relation said: :mod:`orchestrator.graph.relation_support`); an unsupported
relationship is an agent's say-so and carries nothing. An edge is walked in either direction.
Duplicate entities were folded into one node by the merge, so an alias costs a step only when
the answer cites the duplicate's id (see :mod:`orchestrator.answers.validate`).
"""

from __future__ import annotations

from collections import defaultdict, deque
from dataclasses import dataclass, field

from orchestrator.answers.confidence import MAX_STEPS
from orchestrator.answers.data import Step
from orchestrator.answers.graph import NodeIndex
from orchestrator.graph.relation_support import support


@dataclass
class RelationGraph:
    """Adjacency over entity and claim ids, built once per graph."""

    index: NodeIndex
    edges: dict[str, list[tuple[str, str, str, bool]]] = field(default_factory=lambda: defaultdict(list))

    @classmethod
    def build(cls, index: NodeIndex) -> RelationGraph:
        graph = cls(index)
        for rel_id, rel in index.relationships.items():
            subject = index.canonical.get(str(rel.get("subject")))
            target = index.canonical.get(str(rel.get("object")))
            if not subject or not target or subject == target:
                continue
            predicate = str(rel.get("predicate") or "related-to")
            names = index.names(subject), index.names(target)
            passages = (p for c in index.verified_claims(rel.get("claim_ids")) for p in index.passages(c))
            if not any(support(p.text, predicate, *names).states for p in passages):
                continue
            graph.edges[subject].append((target, predicate, rel_id, True))
            graph.edges[target].append((subject, predicate, rel_id, False))
        return graph

    def path(self, start: str, goal: str, max_steps: int = MAX_STEPS) -> list[Step] | None:
        """The shortest chain from ``start`` to ``goal`` of at most ``max_steps`` relationships, or None."""
        if start == goal:
            return []
        previous: dict[str, tuple[str, str, str, bool]] = {}
        depth = {start: 0}
        queue = deque([start])
        while queue:
            node = queue.popleft()
            if depth[node] >= max_steps:
                continue
            for neighbour, predicate, rel_id, forward in sorted(self.edges.get(node, ())):
                if neighbour in depth:
                    continue
                depth[neighbour] = depth[node] + 1
                previous[neighbour] = (node, predicate, rel_id, forward)
                if neighbour == goal:
                    return self._steps(previous, start, goal)
                queue.append(neighbour)
        return None

    def _steps(self, previous: dict[str, tuple[str, str, str, bool]], start: str, goal: str) -> list[Step]:
        steps = []
        node = goal
        while node != start:
            before, predicate, rel_id, forward = previous[node]
            relation = predicate if forward else f"{predicate} (inverse)"
            steps.append(Step(before, relation, node, rel_id))
            node = before
        return steps[::-1]
