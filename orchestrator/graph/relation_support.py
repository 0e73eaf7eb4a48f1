"""Whether a relationship's supporting claims state it: both ends named and the relation carried (pure).

A relationship ``Lisbon --capital of--> Portugal`` rests on the claims it lists in ``claim_ids``. A
claim states it when its text (its statement or one of its verified passages) names both ends, by
an entity's name or one of its aliases, and carries the relation: a word of the predicate ("capital"),
or one that means the same here ("lies in" for "located in"), not negated just before it (negated, for a
predicate that denies: "does-not-require"). A generic
predicate ("related-to", "co-occurs-with") is carried by naming both ends. The merge rejects a
relationship none of whose supporting claims states it (:func:`unsupported_relationships`); ``ask``
scores a relationship citation by whether the cited passage states it (:func:`support`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from orchestrator.model.problems import Problem
from orchestrator.model.terms import NEGATIONS, STOPWORDS, stem_words, words
from orchestrator.model.textnorm import normalize


def _split(text: str) -> list[str]:
    return text.split()


#: Predicates that only say two things go together: naming both ends states them.
_GENERIC = frozenset(stem_words(_split(
    "related relates relation associated association linked link connected connection co occurs occur "
    "cooccurs mentions mentioned involves involved concerns regarding about relevant same similar "
    "instance type kind subclass see also")))
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


@dataclass(frozen=True)
class Support:
    """How far one text states a relationship."""

    subject: bool
    object: bool
    relation: bool

    @property
    def states(self) -> bool:
        return self.subject and self.object and self.relation

    @property
    def ends(self) -> bool:
        return self.subject and self.object

    def missing(self) -> list[str]:
        return [what for what, held in (("its subject", self.subject), ("its object", self.object),
                                        ("the relation", self.relation)) if not held]


def support(text: str, predicate: str, subject_names: Sequence[str], object_names: Sequence[str]) -> Support:
    """How far ``text`` states ``subject --predicate--> object`` (an end without names counts as named)."""
    return Support(not subject_names or names(text, subject_names), not object_names or names(text, object_names),
                   carries(text, predicate))


def entity_names(entity: Mapping[str, Any] | None) -> list[str]:
    """An entity's name and its aliases."""
    if not entity:
        return []
    found = [entity.get("name"), *(entity.get("aliases") or ())]
    return [n for n in dict.fromkeys(found) if isinstance(n, str) and n.strip()]


def claim_texts(claim: Mapping[str, Any]) -> list[str]:
    """What a claim says: its statement and each verified passage of its evidence."""
    found = [claim.get("statement")]
    for evidence in claim.get("evidence") or ():
        check = evidence.get("verification") if isinstance(evidence, Mapping) else None
        if isinstance(check, Mapping) and check.get("verified") is True:
            found.append(check.get("matched_text"))
    return [t for t in found if isinstance(t, str) and t.strip()]


def unsupported_relationships(contribution: Mapping[str, Any], claim_of: Callable[[str], Mapping[str, Any] | None],
                              entity_of: Callable[[str], Mapping[str, Any] | None]) -> list[Problem]:
    """A problem for each relationship between entities none of whose supporting claims states it.

    ``claim_of`` and ``entity_of`` find an item by global id (the contribution's own first).
    """
    items = contribution["items"]
    own_claims = {c["id"]: c for c in items["claims"]}
    own_entities = {e["id"]: e for e in items["entities"]}
    problems = []
    for rel in items["relationships"]:
        claim_ids = [c for c in rel.get("claim_ids") or () if isinstance(c, str)]
        ends = [own_entities.get(str(rel.get(end))) or entity_of(str(rel.get(end))) for end in ("subject", "object")]
        if not claim_ids or any(end is None for end in ends):
            continue  # no support claimed, or an end that is a claim: nothing to check here
        predicate = str(rel.get("predicate", ""))
        subject_names, object_names = entity_names(ends[0]), entity_names(ends[1])
        best: tuple[int, str, Support] | None = None
        for claim_id in claim_ids:
            claim = own_claims.get(claim_id) or claim_of(claim_id)
            text = " ".join(claim_texts(claim)) if claim else ""
            found = support(text, predicate, subject_names, object_names)
            if found.states:
                break
            score = found.subject + found.object + found.relation
            if best is None or score > best[0]:
                best = (score, claim_id, found)
        else:
            problems.append(_problem(rel, predicate, subject_names, object_names, best))
    return problems


def _problem(rel: Mapping[str, Any], predicate: str, subject_names: list[str], object_names: list[str],
             best: tuple[int, str, Support] | None) -> Problem:
    provenance = rel.get("provenance") or {}
    shown = f"{subject_names[0] if subject_names else rel.get('subject')} --{predicate}--> " \
            f"{object_names[0] if object_names else rel.get('object')}"
    closest = f"; the closest, {best[1]}, lacks {' and '.join(best[2].missing())}" if best else ""
    return Problem(
        provenance.get("file"), provenance.get("pointer", ""), "relationship.unsupported",
        f"relationship {rel.get('local_id') or rel.get('id')} ({shown}) is not stated by any of its supporting "
        f"claims{closest}: a supporting claim's statement or verified passage must name both ends (by name or "
        "alias) and say the relation",
        "list under claim_ids a claim whose statement and quoted evidence say this relation between these two "
        "entities (add such a claim, quoting the source), or correct the relationship's predicate or ends; "
        "remove the relationship if no source states it",
        details={"relationship": rel.get("id"), "claim_ids": list(rel.get("claim_ids") or ())},
    )
