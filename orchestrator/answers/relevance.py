"""Does a cited passage answer the question? The answer-relevance part of a citation's confidence.

A question has a *topic*, the entities of the graph it names ("Lisbon" in "What is Lisbon the
capital of?"), and a *focus*, its other content words ("capital"). A passage answers it when it
names a topic entity (by any of its names) and says the focus: a passage about Lisbon's population
quotes the source exactly but does not answer what Lisbon is the capital of. Words are compared as
the contradiction search compares them (:func:`orchestrator.contradictions.words.term`: Snowball
stems, stop and generic words left out, "residents" for "inhabitants").

| the passage | relevance |
|---|---|
| names no entity the question names | 0.0 |
| says every focus word | 1.0 |
| says half of them or more | 0.8 |
| says some | 0.4 (flagged) |
| says none | 0.0 |
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from orchestrator.answers.data import Part
from orchestrator.answers.graph import NodeIndex
from orchestrator.contradictions.words import term
from orchestrator.graph.relation_support import Stemmed
from orchestrator.model.terms import QUESTION_WORDS, words
from orchestrator.model.textnorm import normalize

FULL, MOST, SOME = 1.0, 0.8, 0.4


def terms(text: str) -> frozenset[str]:
    """The content words of ``text`` as the comparison reads them."""
    found = set()
    for word in words(normalize(text)):
        if word in QUESTION_WORDS:
            continue
        meaning = term(word.removesuffix("'s"))
        if meaning and meaning[0]:
            found.add(meaning[0])
    return frozenset(found)


@dataclass(frozen=True)
class Focus:
    """What a question is about (the names of each entity it names) and what it asks (its other words)."""

    question: str
    topics: tuple[tuple[str, ...], ...]
    terms: frozenset[str]

    def part(self, passage: str | None) -> Part:
        """The relevance of ``passage`` to the question (see the module docstring)."""
        if passage is None:
            return Part("relevance", 0.0, "no passage to answer the question with")
        stemmed = Stemmed(passage)
        unnamed = [names[0] for names in self.topics if not stemmed.names(names)]
        if self.topics and len(unnamed) == len(self.topics):
            return Part("relevance", 0.0, f"the passage is not about {' or '.join(repr(n) for n in unnamed)}, "
                                          "which the question asks about")
        if not self.terms:
            return Part("relevance", FULL, "the passage is about what the question names")
        said = self.terms & terms(passage)
        share = len(said) / len(self.terms)
        missing = ", ".join(sorted(self.terms - said))
        if share == 1.0:
            return Part("relevance", FULL, "the passage says what the question asks")
        if share >= 0.5:
            return Part("relevance", MOST, f"the passage says most of what the question asks (not: {missing})")
        if said:
            return Part("relevance", SOME, f"the passage says little of what the question asks (not: {missing})")
        return Part("relevance", 0.0, f"the passage does not say what the question asks ({missing})")


def focus_of(question: str, index: NodeIndex) -> Focus:
    """The question's topic entities (those of the graph it names) and its focus words."""
    topics: list[tuple[str, ...]] = []
    topic_terms: set[str] = set()
    asked = Stemmed(question)
    for entity_id in index.entities:
        names = index.names(entity_id)
        named = [n for n in names if asked.names([n])]
        if named:
            topics.append(tuple(names))
            for name in named:
                topic_terms |= terms(name)
    return Focus(question, _unique(topics), terms(question) - topic_terms)


def _unique(topics: Iterable[Sequence[str]]) -> tuple[tuple[str, ...], ...]:
    return tuple(dict.fromkeys(tuple(t) for t in topics))
