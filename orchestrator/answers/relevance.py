"""Does a cited passage answer the question? The answer-relevance part of a citation's confidence.

A question has a *topic*, the entities of the graph it names ("Lisbon" in "What is Lisbon the
capital of?"), and a *focus*, its other content words ("capital"). A passage answers it when it
names a topic entity (by any of its names) and says the focus: a passage about Lisbon's population
quotes the source exactly but does not answer what Lisbon is the capital of. Some focus words are
*required*: a name the graph has no entity for, typed in any case ("France" in "What is the capital of
France?", "france" in "what is france the capital of?", "bm25", "graphene": a word no common English
word, see :func:`_required`), said by the passage by any form of it ("perovskites" for "perovskite"), and a
qualifier that tells one answer from its opposite ("west" in "What does Portugal border to the west?",
"inlet", "before", "maximum"). A passage without one of them answers another question, however many
other words it shares ("Portugal borders Spain to the east"). Words are compared as
the contradiction search compares them (:func:`orchestrator.contradictions.words.term`: Snowball
stems, stop and generic words left out, "residents" for "inhabitants").

| the passage | relevance |
|---|---|
| names no entity the question names | 0.0 |
| names them only to set them apart ("Madrid, not Lisbon, ..."), for a question not answered yes or no | 0.0 |
| speaks only of another population than the one asked about ("in adults" for "in children", mice for humans) | 0.0 |
| lacks a required word | 0.0 |
| says every focus word | 1.0 |
| says half of them or more | 0.8 |
| says some | 0.4 (flagged) |
| says none | 0.0 |
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import cache

from orchestrator.answers.data import Part
from orchestrator.answers.direction import turned_round
from orchestrator.answers.graph import NodeIndex
from orchestrator.answers.populations import other_population
from orchestrator.contradictions.units import UNITS
from orchestrator.contradictions.words import term
from orchestrator.graph.relation_scope import speaks_of
from orchestrator.graph.relation_words import Stemmed
from orchestrator.model.terms import QUESTION_WORDS, stem, words
from orchestrator.model.textnorm import normalize

FULL, MOST, SOME = 1.0, 0.8, 0.4
#: Qualifiers a passage must say when the question does: each group is one side of an opposition
#: (words of a group mean the same side), so "east" never answers "west" and "outlet" never "inlet".
QUALIFIERS = tuple(frozenset(group.split()) for group in (
    "north northern northward northwards", "south southern southward southwards",
    "east eastern eastward eastwards", "west western westward westwards",
    "northeast northeastern", "northwest northwestern", "southeast southeastern", "southwest southwestern",
    "inlet intake", "outlet exhaust", "before prior", "after following subsequently",
    "minimum min lowest", "maximum max highest", "first earliest", "last latest", "inner interior",
    "outer exterior",
))
#: Punctuation around a word of the question (typographic quotes included).
_AROUND = ".,;:!?()[]{}\"'\u201c\u201d\u2018\u2019"


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
    #: words the passage must say, each as the group of words that say it (see the module docstring)
    required: tuple[tuple[str, ...], ...] = ()
    #: a question answered yes or no ("Is Lisbon the capital of Spain?"): a passage that denies it answers it
    yes_no: bool = False

    def part(self, passage: str | None) -> Part:
        """The relevance of ``passage`` to the question (see the module docstring)."""
        if passage is None:
            return Part("relevance", 0.0, "no passage to answer the question with")
        stemmed = Stemmed(passage)
        unnamed = [names[0] for names in self.topics if not stemmed.names(names)]
        if self.topics and len(unnamed) == len(self.topics):
            return Part("relevance", 0.0, f"the passage is not about {' or '.join(repr(n) for n in unnamed)}, "
                                          "which the question asks about")
        apart = [names[0] for names in self.topics if names[0] not in unnamed and not speaks_of(passage, names)]
        if self.yes_no:  # a passage that denies it answers "Is Lisbon the capital of Spain?"
            apart = []
        elif self.topics and len(apart) + len(unnamed) == len(self.topics):
            return _set_apart(apart)
        if self.yes_no and unnamed and len(self.topics) > 1:  # "Is Madrid the capital of Portugal?"
            return Part("relevance", 0.0, f"the passage does not name {' or '.join(repr(n) for n in unnamed)}, "
                                          "so it cannot say whether what the question asks holds")
        turned = turned_round(self.question, passage, self.topics)
        if turned is not None:
            return Part("relevance", 0.0, turned)
        other = other_population(self.question, stemmed)
        if other is not None:
            return Part("relevance", 0.0, f"the passage speaks of {other[1]!r}, the question asks about {other[0]!r}:"
                                          " a finding in one population does not answer for another")
        lacking = [group[0] for group in self.required if not stemmed.names(group)]
        apart = [group[0] for group in self.required if not self.yes_no and group[0] not in lacking
                 and not speaks_of(passage, group)]
        if apart:
            return _set_apart(apart)
        if lacking:
            return Part("relevance", 0.0, f"the passage does not say {', '.join(repr(w) for w in lacking)}, which "
                                          "the question asks about: it answers another question")
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


def _set_apart(names: Sequence[str]) -> Part:
    return Part("relevance", 0.0, f"the passage names {' or '.join(repr(n) for n in names)} only to set it apart "
                                  "(\"not ...\", \"rather than ...\"): it answers another question")


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
    first = question.split()[0].lower() if question.split() else ""
    return Focus(question, _unique(topics), terms(question) - topic_terms,
                 _required(question, asked, topics, lambda: index.lowercase_stems), first in _AUXILIARIES)


#: Words that open a question answered yes or no.
_AUXILIARY_WORDS = ("is are was were am does do did can could has have had will would shall should may might must "
                    "isn't aren't wasn't doesn't don't didn't")
_AUXILIARIES = frozenset(_AUXILIARY_WORDS.split())


def _required(question: str, asked: Stemmed, topics: Sequence[Sequence[str]],
              session_words: Callable[[], frozenset[str]] = frozenset) -> tuple[tuple[str, ...], ...]:
    """The question's qualifiers and the names in it that are no entity of the graph (see the module docstring).

    A name is a word with a digit ("bm25", "a320", "covid-19") or inner capitals ("pH"), a capitalised
    word after the first (unless most of the question is capitalised: a title), or, typed in any case,
    a word that is no common English word (:func:`_common`) and that the session's passages never write
    in lower case (``session_words``: stems; "datasets" is this session's vocabulary): "what is france
    the capital of?" names France as surely as "France" does, and "graphene" is what a question about
    graphene asks about.
    """
    found: list[tuple[str, ...]] = []
    for group in QUALIFIERS:
        said = [w for w in sorted(group) if asked.names([w])]
        if said:
            found.append((said[0], *sorted(group - {said[0]})))
    tokens = question.split()
    capitalised = [t for t in tokens[1:] if t[:1].isupper()]
    title = len(capitalised) * 2 > max(len(tokens) - 1, 1)
    known = Stemmed(" ".join(name for names in topics for name in names))
    for position, token in enumerate(tokens):
        word = token.strip(_AROUND)
        if word.lower() in QUESTION_WORDS or word == "I" or not terms(word) or known.names([word]):
            continue
        cased = not title and (_INNER.fullmatch(word) or (position and word[:1].isupper()))
        if (_DIGIT.search(word) and _LETTER.search(word)) or cased or not (
                _common(word) or _said_lowercase(word, session_words())):
            found.append((word,))
    return tuple(dict.fromkeys(found))


_DIGIT, _LETTER = re.compile(r"\d"), re.compile(r"[^\W\d_]")
_INNER = re.compile(r"\w*[a-z]\w*[A-Z]\w*|[A-Z]\w*[A-Z]\w*")
_PARTS = re.compile(r"[-'\u2019/]")
#: Common words a dictionary of nouns, verbs, adjectives and adverbs leaves out: prepositions and
#: conjunctions that are no stop words, and Latin abbreviations.
_FUNCTION_WORDS = "versus vs during despite toward towards amongst whereas onto unto until till ie eg etc ok okay"
_FUNCTION = frozenset(_FUNCTION_WORDS.split())


def _said_lowercase(word: str, session_words: frozenset[str]) -> bool:
    """Whether the session's passages write every part of ``word`` in lower case (by stem)."""
    parts = [p for p in _PARTS.split(_bare(word)) if p]
    return bool(parts) and all(stem(p) in session_words for p in parts)


def _bare(word: str) -> str:
    return word.lower().removesuffix("'s").removesuffix("\u2019s")


@cache
def _common(word: str) -> bool:
    """Whether every part of ``word`` is a common English word: one LemmInflect's lexicon (English nouns,
    verbs, adjectives and adverbs with their inflections, "cities" and "largest" included, proper nouns
    left out) knows in lower case, a unit ("km"), or a function word; possessives aside."""
    from lemminflect import getAllLemmas

    parts = [p for p in _PARTS.split(_bare(word)) if p]
    return bool(parts) and all(p in _FUNCTION or p in UNITS or getAllLemmas(p) for p in parts)


def _unique(topics: Iterable[Sequence[str]]) -> tuple[tuple[str, ...], ...]:
    return tuple(dict.fromkeys(tuple(t) for t in topics))
