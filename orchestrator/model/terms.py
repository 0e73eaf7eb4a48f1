"""Words: the one tokenizer, stopword list and stemmer of the whole code base (pure).

Everything that compares words (the evidence check, ``ask`` retrieval and its answer checks,
the contradiction search, relationship support, the offline researchers' search and sentence
matching, citation keys) reads them here, so "circulating" in an answer meets "circulates" in a
passage everywhere, and a word dropped by one comparison is dropped by all of them for one reason.

Two splits, because two kinds of text are compared:

* :func:`words` reads *reader-normal* text (:mod:`orchestrator.model.textnorm`, where quotes,
  dashes, ligatures and line-break hyphens are already folded): a number keeps its separators
  ("4,000" is "4000", "1.5" one number) and a contraction stays one word ("didn't"), so a
  quoted snippet's negations and numbers are seen as the reader sees them.
* :func:`search_words` reads raw text for a search index: runs of letters and digits, so
  "p53" and "covid19" are one term; ``sqlite=True`` splits as SQLite's ``unicode61`` tokenizer
  does ("1.5" is "1" and "5"), which an FTS5 query must.

What each comparison may drop is named, never copied: :data:`STOPWORDS` (function words, dropped
by all), :data:`QUESTION_WORDS` (words that ask rather than say), :data:`NEGATIONS` and
:data:`SEARCH_STOPWORDS` (what a keyword search also drops: negations, quantities and words of
order, which the evidence check (:func:`critical_tokens`) and the contradiction search keep,
because "before" and "after" or "not" tell two claims apart).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import cache
from typing import Any

from orchestrator.model.textnorm import normalize


def _set(text: str) -> frozenset[str]:
    return frozenset(text.split())


#: Function words: they never say what a text is about. Words that qualify a value ("before",
#: "after", "first", "during", "more") are not here: they tell two measurements apart.
STOPWORDS = _set("""
a an and any are as at be been being both but by can could did do does doing done each either et al etc for
from further had has have having he her here hers him his how i if in into is it its itself may me might must
my of off on once or other our ours out own same she should so such that the their theirs them then there
these they this those through thus to too us was we were what when where which while who whom whose why will
with would yet you your also although among via upon it's shall than per
""")

#: Words that ask rather than say what is asked about ("Explain how ...", "What does the session know ...").
QUESTION_WORDS = _set("""
how much many what which who whom whose when where why does do did is are was were tell describe explain list
give name show me us please any there know session according about
""")

#: Words whose presence or absence flips what a sentence says.
NEGATIONS = _set("no not never none nor neither without cannot nothing nobody nowhere non")

#: What a keyword search drops besides function words: negations (a passage that says "not" is
#: as relevant), quantities, words of order and hedges. The evidence check and the contradiction
#: search keep them.
SEARCH_STOPWORDS = STOPWORDS | NEGATIONS | _set("""
above after again against all almost always am aren't around because before below between can't couldn't
didn't doesn't don't down during else even ever every few hadn't hasn't haven't herself himself however isn't
just least less let many more most much myself now often only others otherwise ourselves over perhaps rather
s several shouldn't since some t themselves therefore though under until up very wasn't weren't whether
within won't wouldn't yours yourself yourselves about
""")

_NUMBER = re.compile(r"[-+]?\d+(?:[.,]\d+)*")
_WORD = re.compile(r"\d+(?:[.,]\d+)*|[^\W\d_]+(?:'[^\W\d_]+)?")
_SEARCH_WORD = re.compile(r"[^\W_]*[^\W\d_][^\W_]*|\d+(?:\.\d+)?")
_SQLITE_WORD = re.compile(r"[^\W_]+")
_UNIT_WORDS = _set("percent per cent percentage fold times million billion thousand")
_BRITISH = re.compile(r"(?<=[a-z]{3})(is|ys)(e|ed|es|ing|ation|ations|er|ers)$")


def words(normal_text: str) -> list[str]:
    """Word and number tokens of reader-normal text; a number's thousands separators do not matter."""
    return [w.replace(",", "") if w[0].isdigit() else w for w in _WORD.findall(normal_text)]


def search_words(text: str, *, sqlite: bool = False) -> list[str]:
    """Lower-case words and numbers of raw text as a search index reads them ("p53" is one term).

    ``sqlite``: alphanumeric runs exactly as SQLite's ``unicode61`` tokenizer splits them ("1.5"
    is "1" and "5"), for an FTS5 query; otherwise a decimal number stays one term.
    """
    return (_SQLITE_WORD if sqlite else _SEARCH_WORD).findall(text.casefold())


@cache
def _stemmer() -> Any:
    import Stemmer

    return Stemmer.Stemmer("english")


def stem_words(found: Iterable[str]) -> list[str]:
    """Snowball stems, British -ise/-yse spellings first made -ize/-yze ("realised" meets "realized")."""
    return list(_stemmer().stemWords([_BRITISH.sub(lambda m: m.group(1)[0] + "z" + m.group(2), w) for w in found]))


@cache
def stem(word: str) -> str:
    """:func:`stem_words` of one word (cached: the same words recur)."""
    return stem_words([word])[0]


def content_terms(text: str) -> list[str]:
    """Stemmed words and numbers of ``text`` without stop or question words, in order (repeats kept)."""
    return stem_words(w for w in words(normalize(text)) if w not in STOPWORDS and w not in QUESTION_WORDS
                      and (len(w) > 1 or w.isdigit()))


def search_terms(text: str, *, keep_qualifiers: bool = False, numbers: bool = True, shortest: int = 2) -> list[str]:
    """Index terms of raw text: stemmed :func:`search_words` without :data:`SEARCH_STOPWORDS`, in order.

    ``keep_qualifiers``: drop only :data:`STOPWORDS`, so negations, quantities and words of order
    ("not", "more", "after") stay: what tells two near-identical statements apart. ``numbers``:
    keep terms that start with a digit. ``shortest``: a word of fewer characters is left out before
    it is stemmed ("ids" stays "id"), unless it is a number.
    """
    drop = STOPWORDS if keep_qualifiers else SEARCH_STOPWORDS
    return stem_words(w for w in search_words(text)
                      if (numbers if w[0].isdigit() else len(w) >= shortest and w not in drop))


def coverage(sentence: str, passage: str) -> float:
    """Share of the sentence's content terms that the passage uses (1.0 for a sentence with none)."""
    wanted = set(content_terms(sentence))
    return len(wanted & set(content_terms(passage))) / len(wanted) if wanted else 1.0


def critical_tokens(normal_text: str) -> tuple[list[str], list[str], list[str]]:
    """Numbers, units and negations: the tokens an approximate match may never change."""
    numbers = sorted(n.replace(",", "").lstrip("+") for n in _NUMBER.findall(normal_text))
    tokens = words(normal_text)
    units = sorted([t for t in tokens if t in _UNIT_WORDS] + ["%"] * normal_text.count("%"))
    negations = sorted(
        [t for t in tokens if t in NEGATIONS] + ["not"] * sum(1 for t in tokens if t.endswith("n't"))
    )
    return numbers, units, negations
