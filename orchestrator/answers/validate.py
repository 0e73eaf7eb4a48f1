"""Check every citation of a drafted answer against the graph, after generation.

For each ``[@node]``: the node exists (directly or as a merged duplicate's id); its evidence is
verified; the sentence is supported by the node's passage (claims), names the node (entities),
or names both ends of it (relationships), whose cited passage must itself state the relationship
(:mod:`orchestrator.graph.relation_support`); and the passage answers the question
(:mod:`orchestrator.answers.relevance`). Entities cited together in one sentence are taken to be
related: the shortest chain of stated relationships between consecutive ones is a part of both
citations, and its steps are the trace of the later one. Confidence arithmetic is in
:mod:`orchestrator.answers.confidence`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from itertools import pairwise

from rapidfuzz import fuzz

from orchestrator.answers import confidence as conf
from orchestrator.answers.data import NodeKind, Part, Step, VerifiedPassage
from orchestrator.answers.graph import NodeIndex
from orchestrator.answers.infer import RelationGraph
from orchestrator.answers.relevance import focus_of
from orchestrator.answers.sentences import MarkedSentence, parse
from orchestrator.graph.relation_support import support
from orchestrator.model.terms import words
from orchestrator.model.textnorm import normalize


@dataclass
class Citation:
    ref: str
    node_id: str | None
    kind: NodeKind | None
    parts: list[Part]
    trace: list[Step] = field(default_factory=list)
    passage: VerifiedPassage | None = None

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
    """Validates answers against one session's graph (indexes built once, reused per citation).

    With a ``question``, every citation also gets a relevance part: does its passage answer it.
    """

    def __init__(self, index: NodeIndex, question: str = ""):
        self.index = index
        self.focus = focus_of(question, index) if question.strip() else None

    @cached_property
    def relations(self) -> RelationGraph:
        return RelationGraph.build(self.index)

    def check(self, text: str) -> list[CheckedSentence]:
        return [self.sentence(s) for s in parse(text)]

    def sentence(self, sentence: MarkedSentence) -> CheckedSentence:
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
        if self.focus is not None:
            citation.parts.append(self.focus.part(citation.passage.text if citation.passage else None))
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
        ends: list[str] = []
        names: list[list[str]] = []
        for end in (rel.get("subject"), rel.get("object")):
            resolved = self.index.resolve(str(end))
            ends.append(resolved[1] if resolved else str(end))
            names.append(self.index.names(resolved[1]) if resolved and resolved[0] == "entity" else [])
            if resolved and resolved[0] == "entity":
                self._mention(sentence, resolved[1], citation)
        predicate = str(rel.get("predicate") or "related-to")
        passages = [p for claim_id in claims for p in self.index.passages(claim_id)]
        stating = [p for p in passages if support(p.text, predicate, names[0], names[1]).states]
        citation.passage = conf.support(sentence, stating or passages)[1] or (passages[0] if passages else None)
        citation.parts.append(_stated(citation.passage, predicate, names))
        citation.trace.append(Step(ends[0], predicate, ends[1], citation.node_id))

    def _closest(self, sentence: str, claim_ids: list[str]) -> VerifiedPassage | None:
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


#: A relationship's passage that names both ends without saying the relation: flagged, never above 0.5.
ENDS_ONLY = 0.4


def _stated(passage: VerifiedPassage | None, predicate: str, names: list[list[str]]) -> Part:
    """Whether the cited passage states the relationship: both ends named and the relation said."""
    if passage is None:
        return Part("stated", 0.0, "no verified passage of a supporting claim to state the relationship")
    found = support(passage.text, predicate, names[0], names[1])
    if found.states:
        return Part("stated", conf.EXACT, "the passage names both ends and says the relation")
    if found.ends and found.relation and found.unasserted:
        return Part("stated", 0.0, f"the passage does not assert {predicate!r}: it {found.unasserted}")
    if found.ends and not found.forward:
        return Part("stated", ENDS_ONLY, f"the passage says {predicate!r} the other way round")
    if found.ends:
        return Part("stated", ENDS_ONLY, f"the passage names both ends but does not say {predicate!r}")
    lacks = " and ".join(found.missing())
    return Part("stated", 0.0, f"the passage does not state the relationship (it lacks {lacks})")


def _evidence(count: int, what: str) -> Part:
    if count:
        return Part("evidence", conf.EXACT, f"{count} {what}")
    return Part("evidence", 0.0, f"no {what.replace('(s)', '')}: the node's evidence is not verified")
