"""Whether a relationship's supporting claims state it: both ends named and the relation carried (pure).

A relationship ``Lisbon --capital of--> Portugal`` rests on the claims it lists in ``claim_ids``. A
claim states it when one of its verified passages (the source's words, never the agent's statement)
names both ends, by an entity's name or one of its aliases, carries the relation: a word of the
predicate ("capital"), or one that means the same here ("lies in" for "located in"), not negated just
before it (negated, for a predicate that denies: "does-not-require"), and does not say it the other
way round (:func:`orchestrator.graph.relation_words.direction`), and asserts it: in a sentence that does not
negate it, say it of another entity with this one set apart ("Madrid, not Lisbon, is ..."), ask, suppose
or say it only of the past (:mod:`orchestrator.graph.relation_scope`). A generic predicate ("related-to",
"co-occurs-with") is carried by naming both ends; one of function words only ("in", "is-a") by
saying it plainly between them. The merge rejects a relationship between two entities that lists no
claim or none of whose supporting claims states it (:func:`unsupported_relationships`); ``ask``
scores a relationship citation by whether the cited passage states it (:func:`support`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from orchestrator.graph import relation_scope as scope
from orchestrator.graph.relation_pairing import capitalised, joining
from orchestrator.graph.relation_words import (
    LINK_STEMS,
    carries,
    direction,
    function_words_only,
    joins,
    names,
    negative,
    relation_stems,
    relation_terms,
    said_direction,
    spans,
)
from orchestrator.model.problems import Problem


@dataclass(frozen=True)
class Support:
    """How far one text states a relationship."""

    subject: bool
    object: bool
    relation: bool
    #: False when the text says the relation the other way round ("Lisbon is the capital of Portugal"
    #: for ``Portugal --capital of--> Lisbon``)
    forward: bool = True
    #: Why the text does not assert it, after "it" ("names 'Lisbon' only to set it apart ('not lisbon')"):
    #: negated, said of another entity, asked, supposed or of the past (:mod:`orchestrator.graph.relation_scope`)
    unasserted: str = ""

    @property
    def states(self) -> bool:
        return self.subject and self.object and self.relation and self.forward and not self.unasserted

    @property
    def ends(self) -> bool:
        return self.subject and self.object

    def missing(self) -> list[str]:
        return [what for what, held in (("its subject", self.subject), ("its object", self.object),
                                        ("the relation", self.relation),
                                        ("the direction (it says the relation the other way round)", self.forward),
                                        (f"an assertion of it (it {self.unasserted})", not self.unasserted))
                if not held]


def support(text: str, predicate: str, subject_names: Sequence[str], object_names: Sequence[str]) -> Support:
    """How far ``text`` states ``subject --predicate--> object`` (an end without names counts as named)."""
    found = Support(not subject_names or names(text, subject_names), not object_names or names(text, object_names),
                    carries(text, predicate))
    if found.ends and subject_names and object_names and function_words_only(predicate):
        return Support(True, True, joins(text, predicate, subject_names, object_names))
    if not (found.ends and subject_names and object_names):
        return found
    if not relation_terms(predicate):  # generic: naming both ends states it, unless the link is denied
        return _asserted(text, predicate, subject_names, object_names, LINK_STEMS, generic=True)
    return _asserted(text, predicate, subject_names, object_names, relation_stems(predicate))


def _asserted(text: str, predicate: str, subject_names: Sequence[str], object_names: Sequence[str],
              meant: frozenset[str], generic: bool = False) -> Support:
    """Sentence by sentence: a sentence that names both ends and asserts the relation (in this direction)
    states it; one that names them with the relation only negated, contrasted, asked, supposed or of the
    past denies it (:mod:`orchestrator.graph.relation_scope`). A passage with no such sentence states it when
    its asserted mentions and relation words, spread over its sentences, name both ends and say it
    ("Lisbon lies on the Tagus. It is the capital of Portugal.")."""
    reversed_, said, why, first_why, refers = False, False, "", "", False
    spread = {"S": False, "O": False, "R": False}
    capitals = capitalised(text)
    for sentence in scope.sentences(text):
        read = _Read(sentence, predicate, meant, subject_names, object_names)
        first_why = first_why or (read.reasons[0] if read.reasons else "")
        said = said or bool(read.relations or read.dropped)
        spread = {"S": spread["S"] or bool(read.kept["S"]), "O": spread["O"] or bool(read.kept["O"]),
                  "R": spread["R"] or bool(read.relations)}
        refers = refers or bool(read.relations and _REFERRING.intersection(sentence.plain))
        if not (read.named["S"] and read.named["O"] and (read.relations or read.dropped)):
            continue
        if read.kept["S"] and read.kept["O"] and read.relations:
            joined = joining(sentence.plain, read.relations, read.kept["S"], read.kept["O"], capitals)
            if not joined:  # "Paris is the capital of France and Berlin is the capital of Germany"
                why = why or _OTHER_PAIRS
                continue
            if said_direction(sentence.plain, sentence.stems, predicate, joined, read.kept["S"],
                              read.kept["O"]) != "reversed":
                return Support(True, True, True)
            reversed_ = True
        else:
            why = why or read.reasons[0]
    if reversed_:
        return Support(True, True, True, forward=False)
    if generic and not why:
        return Support(True, True, True)
    if not said:
        return Support(True, True, False)  # no word of the relation at all
    if why or not all(spread.values()):
        return Support(True, True, True, unasserted=why or first_why or _APART)
    if not refers:  # "Lisbon is a city. Portugal has a capital.": nothing says the capital is Lisbon
        return Support(True, True, True, unasserted=_APART)
    if direction(text, predicate, subject_names, object_names) == "reversed":
        return Support(True, True, True, forward=False)
    return Support(True, True, True)


#: Words by which a sentence refers back to a name said before ("It is the capital of Portugal").
_REFERRING_WORDS = "it its this these they their which whose who he she his her"
_REFERRING = frozenset(_REFERRING_WORDS.split())
_OTHER_PAIRS = ("says the relation only between other names of the sentence (each word of it joins "
                "another pair: \"the capital of France\" is not a capital of Germany)")
_APART = ("names its ends in different sentences, and the sentence that says the relation neither names the "
          "other end nor refers back to it (\"it\", \"which\")")


class _Read:
    """One sentence read for one relationship: the ends' mentions it makes and those it asserts, the relation
    words it asserts, and why it does not assert the others (in words, first the mentions')."""

    def __init__(self, sentence: scope.Sentence, predicate: str, meant: frozenset[str],
                 subject_names: Sequence[str], object_names: Sequence[str]) -> None:
        self.named = {"S": spans(sentence.stems, subject_names), "O": spans(sentence.stems, object_names)}
        self.kept: dict[str, list[tuple[int, int]]] = {"S": [], "O": []}
        self.reasons: list[str] = []
        for end, found in self.named.items():
            for span in found:
                reason = scope.mention_reason(sentence, span)
                if reason is None:
                    self.kept[end].append(span)
                else:
                    self.reasons.append(scope.explain(reason, _named(sentence, span, subject_names, object_names)))
        denied = negative(predicate)
        self.relations: list[int] = []
        self.dropped: list[str] = []
        for r in (i for i, stem in enumerate(sentence.stems) if stem in meant):
            reasons = scope.relation_reasons(sentence, r)
            if scope.asserted(reasons, denied) or (not denied and all(kind == "negated" for kind, _ in reasons)
                                                   and scope.but_for(sentence, r, self.kept["S"] + self.kept["O"])):
                self.relations.append(r)
            else:
                self.dropped.append(_why_not(reasons))
        self.reasons += self.dropped


def _why_not(reasons: Sequence[scope.Reason]) -> str:
    """Why a relation word with these reasons does not assert it (none: a predicate that denies, said plainly)."""
    other = [reason for reason in reasons if reason[0] != "negated"]
    return scope.explain((other or list(reasons))[0]) if reasons else "says it without the negation its predicate has"


def _named(sentence: scope.Sentence, span: tuple[int, int], *groups: Sequence[str]) -> str:
    """The end's first name, for a message ("'Lisbon'" for a mention of its alias "Lisboa")."""
    for group in groups:
        if span in spans(sentence.stems, group):
            return group[0]
    return " ".join(sentence.plain[span[0]:span[1] + 1])


def entity_names(entity: Mapping[str, Any] | None) -> list[str]:
    """An entity's name and its aliases."""
    if not entity:
        return []
    found = [entity.get("name"), *(entity.get("aliases") or ())]
    return [n for n in dict.fromkeys(found) if isinstance(n, str) and n.strip()]


def claim_texts(claim: Mapping[str, Any]) -> list[str]:
    """What a claim's sources say: each verified passage of its evidence (the statement is the agent's
    own wording, not evidence: "Lisbon is the capital of Spain" quoting "Portugal borders Spain" states nothing)."""
    found = []
    for evidence in claim.get("evidence") or ():
        check = evidence.get("verification") if isinstance(evidence, Mapping) else None
        if isinstance(check, Mapping) and check.get("verified") is True:
            found.append(check.get("matched_text"))
    return [t for t in found if isinstance(t, str) and t.strip()]


def unsupported_relationships(contribution: Mapping[str, Any], claim_of: Callable[[str], Mapping[str, Any] | None],
                              entity_of: Callable[[str], Mapping[str, Any] | None]) -> list[Problem]:
    """A problem for each relationship between entities that lists no claim, or none of whose supporting
    claims states it in a verified passage.

    ``claim_of`` and ``entity_of`` find an item by global id (the contribution's own first). A
    relationship with a claim at an end ("C1 supports C2", "C1 mentions E1") is not checked here: that
    claim, with its own evidence, is what it is about.
    """
    items = contribution["items"]
    own_claims = {c["id"]: c for c in items["claims"]}
    own_entities = {e["id"]: e for e in items["entities"]}
    problems = []
    for rel in items["relationships"]:
        problem = relationship_problem(rel, lambda gid: own_claims.get(gid) or claim_of(gid),
                                       lambda gid: own_entities.get(gid) or entity_of(gid))
        if problem is not None:
            problems.append(problem)
    return problems


def relationship_problem(rel: Mapping[str, Any], claim_of: Callable[[str], Mapping[str, Any] | None],
                         entity_of: Callable[[str], Mapping[str, Any] | None]) -> Problem | None:
    """Why ``rel`` is not stated by its supporting claims (see :func:`unsupported_relationships`), or None."""
    ends = [entity_of(str(rel.get(end))) for end in ("subject", "object")]
    if any(end is None for end in ends):
        return None  # a claim at an end: the claim and its evidence are what the relationship is about
    claim_ids = [c for c in rel.get("claim_ids") or () if isinstance(c, str)]
    predicate = str(rel.get("predicate", ""))
    subject_names, object_names = entity_names(ends[0]), entity_names(ends[1])
    if not claim_ids:
        return _problem(rel, predicate, subject_names, object_names, None, cited=False)
    best: tuple[int, str, Support] | None = None
    for claim_id in claim_ids:
        claim = claim_of(claim_id)
        for text in (claim_texts(claim) if claim else []) or [""]:
            found = support(text, predicate, subject_names, object_names)
            if found.states:
                return None
            score = found.subject + found.object + found.relation
            if best is None or score > best[0]:
                best = (score, claim_id, found)
    return _problem(rel, predicate, subject_names, object_names, best)


def _problem(rel: Mapping[str, Any], predicate: str, subject_names: list[str], object_names: list[str],
             best: tuple[int, str, Support] | None, cited: bool = True) -> Problem:
    provenance = rel.get("provenance") or {}
    shown = f"{subject_names[0] if subject_names else rel.get('subject')} --{predicate}--> " \
            f"{object_names[0] if object_names else rel.get('object')}"
    name = rel.get("local_id") or rel.get("id")
    details = {"relationship": rel.get("id"), "claim_ids": list(rel.get("claim_ids") or ())}
    if not cited:
        return Problem(
            provenance.get("file"), provenance.get("pointer", ""), "relationship.unsupported",
            f"relationship {name} ({shown}) lists no supporting claim (claim_ids is missing or empty): a "
            "relationship between entities must rest on a claim whose verified passage states it",
            "add claim_ids listing the claim(s) that state this relation between these two entities (add such a "
            "claim, quoting the source, if there is none); remove the relationship if no source states it",
            details=details)
    closest = f"; the closest, {best[1]}, lacks {' and '.join(best[2].missing())}" if best else ""
    if best and best[2].ends and best[2].relation and best[2].unasserted:
        closest = f"; the closest, {best[1]}, does not assert it (its passage {best[2].unasserted})"
    return Problem(
        provenance.get("file"), provenance.get("pointer", ""), "relationship.unsupported",
        f"relationship {name} ({shown}) is not stated by any of its supporting claims{closest}: a supporting "
        "claim's verified passage (the quoted source text, not its statement) must name both ends (by name or "
        "alias) and assert the relation in this direction",
        "list under claim_ids a claim whose quoted evidence asserts this relation between these two entities, "
        "subject first, and not negated, contrasted with another entity, asked, supposed or said only of the "
        "past (add such a claim, quoting the source), or correct the relationship's predicate, ends or "
        "direction; remove the relationship if no source states it",
        details=details,
    )
