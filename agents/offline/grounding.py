"""Is the thing a question asks about in the cited passage or its paper? The grounding part of an answer's confidence.

A near-topic question borrows its key term from elsewhere: "How much did heat cut the *protein* content
of the wheat grain?" is about the wheat paper's topic, but protein is what the ACE and VESPA papers
are about, and the wheat paper never measures it. Retrieval finds the wheat paper's yield losses (most
of the question's words, close in meaning), so coverage and cosine cannot tell; what tells is that the
term the question turns on is in neither the passage nor its paper.

A *key term* is a question word that names a specific thing and that this collection can vouch for:

* **another document's subject**: a word LemmInflect knows only as a noun, that the collection uses,
  most documents do not (under :data:`SHARED_SHARE` of them: shared vocabulary such as "treatment" or
  "quality" is never key), and some document uses itself at least :data:`SUBJECT_MIN` times ("protein"
  in the ACE paper);
* **a population no document names**: a word no document uses in any form that the English lexicon
  (LemmInflect) knows as the plural of a noun ("bats", "animals"). A singular is as likely the
  reader's way of asking as a thing ("feed", "missing", "ear" for the paper's "spike"; a PubMedQA
  title's "virus" or "trimester" that its abstract never writes), and indefinite pronouns
  ("everyone") name nothing.

A key term is *grounded* by a unit when the unit's window (the sentence and its neighbours) holds it
in any form (its stem, the abbreviations, lay terms and word family the query expansion gives it) or
a word at :data:`STRICT_SOFT` cosine or more (a synonym by the static model's word vectors, stricter than
the ranking's soft match), or when the unit's paper discusses it (:data:`PAPER_MENTIONS` mentions or a
strict soft match in its vocabulary). A noun that modifies the next word of the question is part of a
compound, and a window that says the compound's head in the papers' own words (an abbreviation or lay
term of the query expansion, not the head itself) says the compound: "GP" for "family doctor" ("family"
alone is VESPA's gene families), where "chlorophyll content" does not say "protein content". An ungrounded
key term makes the unit no answer: confidence 0.

Other words the collection does not know stay with the retriever's calibrated decision to answer
(:func:`agents.offline.candidates.answerable`): a word-level check cannot tell a reader's "overweight"
(not in the papers) from a reader's "ear" (the wheat paper's "spike").
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import NamedTuple

import numpy as np

from agents.offline.expansion import question_terms
from agents.offline.softmatch import Lexicon
from agents.offline.text import wordlist
from orchestrator.answers.data import Part
from orchestrator.model.terms import search_words, stem_words

__all__ = ["PAPER_MENTIONS", "SHARED_SHARE", "STRICT_SOFT", "SUBJECT_MIN", "Grounding", "KeyTerm", "Term", "noun_only",
           "plural_noun"]

SHARED_SHARE = 0.4  # a word at least this share of the documents use is the collection's common vocabulary
SUBJECT_MIN = 10  # a word a document uses this often is one of its subjects
PAPER_MENTIONS = 2  # a paper that mentions a word this often discusses it (once is in passing: a table cell)
STRICT_SOFT = 0.6  # cosine of two word vectors that makes them synonyms here (the ranking's soft match: 0.45)
GROUNDED, UNGROUNDED = 1.0, 0.0
#: Indefinite pronouns, which the lexicon lists as nouns.
_PRONOUNS = frozenset(wordlist("""
    everyone everybody anyone anybody someone somebody noone nobody everything anything something nothing
"""))


@dataclass(frozen=True)
class KeyTerm:
    """A question word the answer must be about, the stems that say it, and why it is key."""

    word: str
    forms: frozenset[str]
    why: str  # "the subject of <n> other document(s)" or "no document names it"
    head: frozenset[str] = frozenset()  # the papers' words for the word it modifies ("gp" for "family doctor")


class Term(NamedTuple):
    """A content word of the question as the query expansion reads it."""

    word: str  # as written
    stem: str
    alternatives: set[str]  # stems that may stand in for it
    head: frozenset[str] = frozenset()  # the papers' words for the next content word when it follows directly


@cache
def noun_only(word: str) -> bool:
    """Whether LemmInflect's English lexicon knows ``word`` and only as a noun ("protein", "animals")."""
    from lemminflect import getAllLemmas

    lemmas = getAllLemmas(word.lower())
    return bool(lemmas) and set(lemmas) == {"NOUN"} and word.lower() not in _PRONOUNS


@cache
def plural_noun(word: str) -> bool:
    """Whether ``word`` is the plural of an English noun ("bats", "mice"): a set of things or a population,
    even when the same spelling may be a verb."""
    from lemminflect import getAllLemmas

    lemma = getAllLemmas(word.lower()).get("NOUN", ())
    return bool(lemma) and word.lower() not in lemma


class Grounding:
    """The key terms of one question and, per unit, whether they are grounded (see the module docstring).

    ``groups``: the question's content words (:class:`Term`); ``counts``: per document, how often it
    uses each stem; ``units``: the document of each unit; ``windows``: each unit's window stems;
    ``lexicon``: the word vectors, or None.
    """

    def __init__(self, groups: Sequence[Term], counts: Mapping[str, Counter[str]],
                 units: Sequence[str], windows: Sequence[set[str]], lexicon: Lexicon | None) -> None:
        self.counts, self.units, self.windows, self.lexicon = counts, units, windows, lexicon
        used = {stem for c in counts.values() for stem in c}
        shared = SHARED_SHARE * max(1, len(counts))
        self.keys: list[KeyTerm] = []
        for word, stem, alternatives, head in groups:
            forms = frozenset({stem, *alternatives})
            if not forms & used:
                if plural_noun(word):
                    self.keys.append(KeyTerm(word, forms, "no document names it", head))
                continue
            if not noun_only(word):
                continue
            users = {sid: sum(c[f] for f in forms) for sid, c in counts.items()}
            users = {sid: n for sid, n in users.items() if n}
            # the word itself, not a lay term or relative of it ("drug" for "agent"), is some document's subject
            if len(users) < shared and (subject := [sid for sid, c in counts.items() if c[stem] >= SUBJECT_MIN]):
                self.keys.append(KeyTerm(word, forms, f"the subject of {len(subject)} document(s)", head))
        self._sims = (lexicon.similarities([k.word for k in self.keys])
                      if lexicon is not None and self.keys else None)
        self._paper: dict[tuple[str, int], bool] = {}

    @classmethod
    def of(cls, question: str, groups: Sequence[tuple[str, set[str]]], counts: Mapping[str, Counter[str]],
           units: Sequence[str], windows: Sequence[set[str]], lexicon: Lexicon | None) -> Grounding:
        """The grounding of ``question`` from its expanded term ``groups`` (stem, stems that may stand in)."""
        words = {stem_words([w])[0]: w for w in question_terms(question)}
        # the papers' words for a content word; an acronym's plural keeps its s when stemmed ("GPs": "gps")
        other_words = {s: frozenset(alts - {s}) | {f"{a}s" for a in alts - {s}} for s, alts in groups}
        said = search_words(question)  # a word directly followed by a content word modifies it ("family doctor")
        follows = {stem_words([a])[0]: stem_words([b])[0] for a, b in itertools.pairwise(said)}
        return cls([Term(words.get(s, s), s, alts, other_words.get(follows.get(s, ""), frozenset()))
                    for s, alts in groups], counts, units, windows, lexicon)

    def _soft(self, k: int, stems: Sequence[str] | set[str]) -> bool:
        if self._sims is None or self.lexicon is None:
            return False
        ids = self.lexicon.ids_of(stems)
        return bool(len(ids)) and float(np.max(self._sims[k, ids])) >= STRICT_SOFT

    def _in_paper(self, k: int, source: str) -> bool:
        if (source, k) not in self._paper:
            counts = self.counts.get(source, Counter())
            mentions = sum(counts[f] for f in self.keys[k].forms)
            synonyms = [s for s, n in counts.items() if n >= PAPER_MENTIONS and s not in self.keys[k].forms]
            self._paper[(source, k)] = mentions >= PAPER_MENTIONS or self._soft(k, synonyms)
        return self._paper[(source, k)]

    def part(self, unit: int) -> Part:
        """The grounding part of unit ``unit`` as an answer: 1.0, or 0.0 naming the key term it lacks."""
        window = self.windows[unit]
        for k, key in enumerate(self.keys):
            if (key.forms | key.head) & window or self._soft(k, window) or self._in_paper(k, self.units[unit]):
                continue
            return Part("grounding", UNGROUNDED, f"neither the passage nor its document speaks of {key.word!r}, "
                                                 f"which the question asks about ({key.why})")
        return Part("grounding", GROUNDED, "the passage or its document speaks of every key term of the question"
                    if self.keys else "the question has no key term to check")
