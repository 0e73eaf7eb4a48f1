"""Populations a finding in one does not answer for the other: children and adults, animals and humans, men and women.

A passage about adults does not answer a question about children, and a sentence saying "in humans" is not
supported by a passage saying "in mice", however many other words they share (pure).
"""

from __future__ import annotations

from orchestrator.graph.relation_words import Stemmed

#: Populations a finding in one does not answer for the other: (one side, the other side), each a group of words.
POPULATIONS = tuple((frozenset(a.split()), frozenset(b.split())) for a, b in (
    ("children child kids paediatric pediatric infants infant newborns neonates toddlers",
     "adults adult elderly seniors"),
    ("mice mouse rats rat rodents rodent murine animals animal dogs pigs primates monkeys zebrafish",
     "humans human patients people participants volunteers"),
    ("men male males boys", "women female females girls"),
))


def other_population(question: str, passage: Stemmed) -> tuple[str, str] | None:
    """(what ``question`` (or a sentence) is about, what the passage speaks of instead) when it names one side of a
    :data:`POPULATIONS` opposition and the passage only the other ("in children" answered by "in adults")."""
    asked = Stemmed(question)
    for one, other in POPULATIONS:
        for wanted, instead in ((one, other), (other, one)):
            named = sorted(w for w in wanted if asked.names([w]))
            if named and not any(asked.names([w]) for w in instead) and not any(passage.names([w]) for w in wanted):
                said = sorted(w for w in instead if passage.names([w]))
                if said:
                    return named[0], said[0]
    return None
