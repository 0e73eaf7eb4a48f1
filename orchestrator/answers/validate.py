"""Check every citation of a drafted answer against the graph, after generation.

For each ``[@node]``: the node exists (directly or as a merged duplicate's id); its evidence is
verified; the sentence is supported by the node's passage (claims), names the node (entities),
or names both ends of it (relationships). Entities cited together in one sentence are taken to be
related: the shortest chain of verified relationships between consecutive ones is a part of both
citations, and its steps are the trace of the later one. Confidence arithmetic is in
:mod:`orchestrator.answers.confidence`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from itertools import pairwise

from rapidfuzz import fuzz

from orchestrator.answers import confidence as conf
from orchestrator.answers.graph import NodeIndex
from orchestrator.answers.infer import RelationGraph
from orchestrator.answers.model import NodeKind, Part, Passage, Step
from orchestrator.answers.sentences import Sentence, parse
from orchestrator.model.textnorm import normalize, words


@dataclass
class Citation:
    ref: str
    node_id: str | None
    kind: NodeKind | None
    parts: list[Part]
    trace: list[Step] = field(default_factory=list)
    passage: Passage | None = None

    @property
    def confidence(self) -> float:
        return min((p.confidence for p in self.parts), default=0.0)

    @property
    def status(self) -> str:
        return conf.verdict(self.confidence)

    @property
    def match(self) -> str:
        if self.node_id is None:
            return "unknown-node"
        if self.confidence == 0.0:
            return "not-found"
        if any(s.relation == "same-as" for s in self.trace) or any(
                p.check == "relation" and p.confidence < conf.EXACT for p in self.parts):
            return "inferred"
        return "exact" if self.confidence == conf.EXACT else "approximate"


@dataclass
class CheckedSentence:
    text: str
    citations: list[Citation]

    @property
    def confidence(self) -> float:
        return max((c.confidence for c in self.citations), default=0.0)

    @property
    def status(self) -> str:
        return conf.verdict(self.confidence)

    @property
    def weight(self) -> float:
        return float(max(len(words(normalize(self.text))), 1))


class Validator:
    """Validates answers against one session's graph (indexes built once, reused per citation)."""

    def __init__(self, index: NodeIndex):
        self.index = index

    @cached_property
    def relations(self) -> RelationGraph:
        return RelationGraph.build(self.index)

    def check(self, text: str) -> list[CheckedSentence]:
        return [self.sentence(s) for s in parse(text)]

    def sentence(self, sentence: Sentence) -> CheckedSentence:
        citations = [self.citation(sentence.text, ref) for ref in sentence.refs]
        citations += [Citation(bad, None, None, [Part("exists", 0.0, f"{bad} is not a node marker ([@node-id])")])
                      for bad in sentence.malformed]
        entities = [c for c in citations if c.kind == "entity" and c.node_id]
        for before, after in pairwise(entities):
            self._relate(before, after)
        return CheckedSentence(sentence.text, citations)

    def citation(self, sentence: str, ref: str) -> Citation:
        """One citation of ``ref`` by ``sentence``: every part checked, the trace of any inference."""
        resolved = self.index.resolve(ref)
        if resolved is None:
            return Citation(ref, None, None, [Part("exists", 0.0, f"no node {ref} in this session's graph")])
        kind, node_id = resolved
        citation = Citation(ref, node_id, kind, [])
        if ref != node_id:
            citation.trace.append(Step(ref, "same-as", node_id, node_id))
            citation.parts.append(Part("alias", conf.inferred(2), f"{ref} was merged into {node_id}"))
        if kind == "claim":
            self._claim(sentence, citation)
        elif kind == "entity":
            self._entity(sentence, citation)
        else:
            self._relationship(sentence, citation)
        return citation

    # -- per kind -----------------------------------------------------------------------------
    def _claim(self, sentence: str, citation: Citation) -> None:
        assert citation.node_id
        passages = self.index.passages(citation.node_id)
        citation.parts.append(_evidence(len(passages), "verified passage(s)"))
        part, passage = conf.support(sentence, passages)
        citation.parts.append(part)
        citation.passage = passage

    def _entity(self, sentence: str, citation: Citation) -> None:
        assert citation.node_id
        claims = self.index.verified_claims(self.index.claims_of_entity.get(citation.node_id, ()))
        citation.parts.append(_evidence(len(claims), "verified claim(s) about it"))
        citation.passage = self._closest(sentence, claims)
        self._mention(sentence, citation.node_id, citation)

    def _relationship(self, sentence: str, citation: Citation) -> None:
        assert citation.node_id
        rel = self.index.relationships[citation.node_id]
        claims = self.index.verified_claims(rel.get("claim_ids"))
        citation.parts.append(_evidence(len(claims), "verified supporting claim(s)"))
        citation.passage = self._closest(sentence, claims)
        ends = []
        for end in (rel.get("subject"), rel.get("object")):
            resolved = self.index.resolve(str(end))
            ends.append(resolved[1] if resolved else str(end))
            if resolved and resolved[0] == "entity":
                self._mention(sentence, resolved[1], citation)
        citation.trace.append(Step(ends[0], str(rel.get("predicate") or "related-to"), ends[1], citation.node_id))

    def _closest(self, sentence: str, claim_ids: list[str]) -> Passage | None:
        """The verified passage (of these claims) closest to the sentence, to quote with the citation."""
        passages = [p for claim_id in claim_ids for p in self.index.passages(claim_id)]
        return conf.support(sentence, passages)[1] or (passages[0] if passages else None)

    def _mention(self, sentence: str, entity_id: str, citation: Citation) -> None:
        names = self.index.names(entity_id)
        label = names[0] if names else entity_id
        position = conf.mentions(sentence, names)
        if position == 0:
            citation.parts.append(Part("mention", conf.EXACT, f"names {label!r}"))
        elif position is not None:
            citation.trace.append(Step(names[position], "same-as", label, entity_id))
            alias = names[position]
            citation.parts.append(Part("mention", conf.inferred(2), f"names {label!r} by its alias {alias!r}"))
        else:
            similarity = max((fuzz.partial_ratio(normalize(n), normalize(sentence)) for n in names), default=0.0)
            if similarity >= conf.MIN_SIMILARITY and names:
                citation.parts.append(Part("mention", conf.approximate(similarity),
                                           f"approximately names {label!r} (similarity {similarity:.0f}/100)"))
            else:
                citation.parts.append(Part("mention", 0.0, f"the sentence does not name {label!r}"))

    def _relate(self, before: Citation, after: Citation) -> None:
        assert before.node_id and after.node_id
        steps = self.relations.path(before.node_id, after.node_id)
        a, b = self.index.name(before.node_id), self.index.name(after.node_id)
        if steps is None:
            part = Part("relation", 0.0, f"no chain of at most {conf.MAX_STEPS} verified relationships links {a!r} "
                                         f"and {b!r}")
        else:
            how = "stated directly" if len(steps) == 1 else f"inferred over {len(steps)} steps"
            part = Part("relation", conf.inferred(len(steps)), f"{a!r} to {b!r}: {how}")
            after.trace.extend(steps)
        before.parts.append(part)  # the sentence asserts the relation: both ends rest on it
        after.parts.append(part)


def _evidence(count: int, what: str) -> Part:
    if count:
        return Part("evidence", conf.EXACT, f"{count} {what}")
    return Part("evidence", 0.0, f"no {what.replace('(s)', '')}: the node's evidence is not verified")
