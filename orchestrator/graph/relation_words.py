"""The words of a relation in a text (pure): which words carry a predicate, whether a text names an
entity, and which way round it says the relation.

The vocabulary and reading rules behind :mod:`orchestrator.graph.relation_support`: Snowball stems,
a few groups of words that mean the same relation here ("lies in" for "located in"), negation right
before the relation word, and the clear clause forms whose word order shows the direction.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from functools import cache

from orchestrator.model.terms import NEGATIONS, STOPWORDS, stem_words, words
from orchestrator.model.textnorm import normalize


def _split(text: str) -> list[str]:
    return text.split()


#: Predicates that only say two things go together: naming both ends states them.
_GENERIC = frozenset(stem_words(_split(
    "related relates relation associated association linked link connected connection co occurs occur "
    "cooccurs mentions mentioned involves involved concerns regarding about relevant same similar "
    "instance type kind subclass see also")))
#: Words that say two things go together: a generic predicate is said by naming both ends, but not by a
#: sentence that names them with one of these negated ("was not associated with").
LINK_STEMS = frozenset(stem_words(_split(
    "related relates relation associated association associates linked link links connected connection connects "
    "correlated correlates correlation cooccurs occur occurs involves involved")))
#: Stems that carry the same relation ("lies in" carries "located in").
_SAME = [frozenset(stem_words(_split(group))) for group in (
    "located location lies lie situated sits based found home",
    "part component member belongs belong constituent piece element",
    "causes cause leads lead results result triggers trigger induces induce drives drive",
    "treats treat therapy cures cure manages manage",
    "owns own owned acquired acquire bought buys purchased",
    "founded established created started formed",
    "develops developed develop builds built designs designed makes made created",
    "produces produce generates generate outputs output manufactures",
    "contains contain includes include comprises comprise consists holds",
    "employs employ works work employee employer",
    "capital seat",
    "cools cooled cooling coolant",
    "increases increase raises raise boosts rises",
    "reduces reduce decreases decrease lowers lower cuts",
    "uses use used employs relies depends",
    "supports support backs confirms corroborates",
    "enables enable allows allow permits permit",
    "requires require needs need depends",
    "precedes preceded before predecessor",
    "follows followed after successor succeeds",
)]
#: Words that may stand between a negation and the relation word it negates ("is not the capital of").
_BETWEEN = frozenset(_split("the a an be been being yet always ever fully really"))


def _predicate_words(predicate: str) -> list[str]:
    spaced = re.sub(r"([a-z])([A-Z])", r"\1 \2", predicate).replace("_", " ").replace("-", " ")
    return [w for w in words(normalize(spaced)) if w not in STOPWORDS and not w.isdigit()]


@cache
def relation_terms(predicate: str) -> frozenset[str]:
    """Stems of the predicate's words that say what the relation is; empty for a generic predicate."""
    found = frozenset(stem_words([w for w in _predicate_words(predicate)
                                          if w not in NEGATIONS and not w.endswith("n't")]))
    return frozenset() if found <= _GENERIC else found - _GENERIC


def negative(predicate: str) -> bool:
    """Whether the predicate denies its relation ("does-not-require")."""
    return any(w in NEGATIONS or w.endswith("n't") for w in _predicate_words(predicate))


def _stems(text: str) -> list[str]:
    return stem_words(w.removesuffix("'s") for w in words(normalize(text)))


def _meanings(term: str) -> frozenset[str]:
    return frozenset().union(*(group for group in _SAME if term in group)) | {term}


def carries(text: str, predicate: str) -> bool:
    """Whether ``text`` says the relation of ``predicate`` (generic predicates: always): a word of it not
    negated just before, or negated for a predicate that denies ("does-not-require" in "does not require")."""
    wanted = relation_terms(predicate)
    if not wanted:
        return True
    stems = _stems(text)
    plain = words(normalize(text))
    meant = frozenset().union(*(_meanings(t) for t in wanted))
    denied = negative(predicate)
    return any(stem in meant and _negated(plain, position) == denied for position, stem in enumerate(stems))


def _negated(plain: list[str], position: int) -> bool:
    """Whether the word at ``position`` is negated right before it ("not", "is not the", "doesn't")."""
    def negation(word: str) -> bool:
        return word in NEGATIONS or word.endswith("n't")

    before = plain[max(0, position - 2):position]
    return bool(before) and (negation(before[-1]) or (len(before) == 2 and negation(before[0])
                                                      and before[1] in _BETWEEN))


#: Words that may stand between an end and the relation word in a plain statement ("Lisbon is the capital").
_LINK = frozenset(_split("is are was were be been being the a an also still now currently officially has have had "
                         "its their his her which that who"))
#: Words that may stand between the relation word and the other end ("capital of", "borders on").
_PREP = frozenset(_split("of to in on at with from into for over the a an its their"))
_BE = frozenset(_split("is are was were be been being"))


def direction(text: str, predicate: str, subject_names: Sequence[str], object_names: Sequence[str]) -> str:
    """Which way ``text`` says the relation between the two ends: "forward", "reversed" or "unknown".

    Only clear forms count, each read as "A relates to B": a plain clause ("A is the capital of B",
    "A borders B"), a passive one ("B is bordered by A"), a possessive ("B's capital, A") and "the
    capital of B is A". A predicate that reads backwards ("cooled-by", "has-capital") expects B first.
    A text that says it forward in any of them is forward; one that says it only reversed is reversed;
    any other wording ("A, which has B as its capital") is unknown, and is not
    held against a relationship.
    """
    plain = words(normalize(text))
    stems = stem_words(w.removesuffix("'s") for w in plain)
    denied = negative(predicate)
    meant = relation_stems(predicate)
    relations = [i for i, stem in enumerate(stems) if stem in meant and _negated(plain, i) == denied]
    return said_direction(plain, stems, predicate, relations, spans(stems, subject_names), spans(stems, object_names))


def relation_stems(predicate: str) -> frozenset[str]:
    """The stems that carry ``predicate``'s relation: its own words and those that mean the same here."""
    return frozenset().union(*(_meanings(t) for t in relation_terms(predicate)))


def said_direction(plain: list[str], stems: list[str], predicate: str, relations: Sequence[int],
                   subject_spans: Sequence[tuple[int, int]], object_spans: Sequence[tuple[int, int]]) -> str:
    """:func:`direction` over tokens, with only the relation words at ``relations`` and the ends' mentions
    at the given spans read (a caller leaves out those a text does not assert)."""
    meant = relation_stems(predicate)
    if not meant:
        return "unknown"
    ends = {"S": subject_spans, "O": object_spans}
    said: set[tuple[str, str]] = set()
    for r in relations:
        for first, second in (("S", "O"), ("O", "S")):
            for a in ends[first]:
                for b in ends[second]:
                    fact = _clause(plain, stems, meant, a, r, b)
                    if fact == "active":
                        said.add((first, second))
                    elif fact == "inverse":
                        said.add((second, first))
    forward, backward = (("O", "S"), ("S", "O")) if _inverse(predicate) else (("S", "O"), ("O", "S"))
    if forward in said:
        return "forward"
    return "reversed" if backward in said else "unknown"


def _inverse(predicate: str) -> bool:
    """Whether the predicate reads its relation word backwards: "cooled-by" (the object cools the subject),
    "has-capital" (the object is the subject's capital)."""
    plain = _plain_predicate(predicate)
    return "by" in plain or (bool(plain) and plain[0] in ("has", "have", "had"))


def _plain_predicate(predicate: str) -> list[str]:
    spaced = re.sub(r"([a-z])([A-Z])", r"\1 \2", predicate).replace("_", " ").replace("-", " ")
    return words(normalize(spaced))


def function_words_only(predicate: str) -> bool:
    """A predicate of function words only ("in", "of", "is-a"): it names no relation a word could carry."""
    plain = _plain_predicate(predicate)
    return bool(plain) and not _predicate_words(predicate)


_SKIPPED = frozenset(_split("the a an")) | _BE


def joins(text: str, predicate: str, subject_names: Sequence[str], object_names: Sequence[str]) -> bool:
    """Whether the text says "subject <predicate> object" with nothing else between ("Lisbon is a city" for
    "is-a"; articles and "is" aside): a predicate of function words is said only that plainly."""
    plain = words(normalize(text))
    stems = stem_words(w.removesuffix("'s") for w in plain)
    wanted = [w for w in _plain_predicate(predicate) if w not in _SKIPPED]
    return any(a[1] < b[0] and [w for w in plain[a[1] + 1:b[0]] if w not in _SKIPPED] == wanted
               for a in spans(stems, subject_names) for b in spans(stems, object_names))


def spans(stems: list[str], candidates: Sequence[str]) -> list[tuple[int, int]]:
    """(first, last) token positions of each occurrence of one of ``candidates``."""
    found = []
    for name in candidates:
        wanted = _name_stems(name)
        n = len(wanted)
        if n:
            found += [(i, i + n - 1) for i in range(len(stems) - n + 1) if tuple(stems[i:i + n]) == wanted]
    return found


def _clause(plain: list[str], stems: list[str], meant: frozenset[str], a: tuple[int, int], r: int,
            b: tuple[int, int]) -> str | None:
    """How the tokens read with end ``a``, the relation word at ``r`` and end ``b``: "active" (a relates to b),
    "inverse" (b relates to a) or None (no clear form)."""
    def only(start: int, end: int, allowed: frozenset[str]) -> bool:
        return all(plain[i] in allowed or stems[i] in meant for i in range(start, end))

    possessive = plain[a[1]].endswith("'s") or plain[a[1]].endswith("s'")
    if a[1] < r < b[0]:
        if possessive:  # "Portugal's capital, Lisbon" / "Portugal's capital is Lisbon"
            return "inverse" if r == a[1] + 1 and only(r + 1, b[0], _BE | {"the"}) else None
        if not only(a[1] + 1, r, _LINK):
            return None
        after = plain[r + 1] if r + 1 < b[0] else ""
        if after == "by":  # "Spain is bordered by Portugal"
            passive = any(plain[i] in _BE for i in range(a[1] + 1, r))
            return "inverse" if passive and only(r + 2, b[0], _PREP) else None
        return "active" if only(r + 1, b[0], _PREP) else None
    if r < a[0] < b[0] and a[1] < b[0]:  # "the capital of Portugal is Lisbon"
        before_ok = plain[r + 1:a[0]] in (["of"], ["of", "the"])
        if before_ok and only(a[1] + 1, b[0], _BE | {"the", "a", "an"}) and any(
                plain[i] in _BE for i in range(a[1] + 1, b[0])):
            return "inverse"
    return None


class Stemmed:
    """A text's words as stems, kept to look many names up in it."""

    def __init__(self, text: str) -> None:
        self.joined = f" {' '.join(_stems(text))} "

    def names(self, candidates: Iterable[str]) -> bool:
        """Whether the text names one of ``candidates`` on word boundaries (case, possessives, plurals aside)."""
        return any(wanted.strip() and f" {wanted} " in self.joined
                   for wanted in (" ".join(_name_stems(n)) for n in candidates))


@cache
def _name_stems(name: str) -> tuple[str, ...]:
    return tuple(_stems(name))


def names(text: str, candidates: Iterable[str]) -> bool:
    """Whether ``text`` names one of ``candidates`` on word boundaries (case, possessives, plurals aside)."""
    return Stemmed(text).names(candidates)
