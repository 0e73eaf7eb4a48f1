"""Does a passage answer the question the right way round? ("the capital of Lisbon" vs "Lisbon, the capital of ...").

A question that puts a name after a noun of "of" asks for that noun of it: "What is the capital of
Lisbon?" wants the capital *of Lisbon*, and "Lisbon is the capital of Portugal", which names Lisbon
and says "capital", tells the capital of Portugal. A question that leaves "of" at its end asks the
reverse: "What is Portugal the capital of?" wants what Portugal is the capital of, and a passage
that says "the capital of Portugal" answers what the capital of Portugal is. Read only where both the
question and the passage put a word before "of" and the passage names what follows it; everything
else is left to the relevance score (:mod:`orchestrator.answers.relevance`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from orchestrator.model.textnorm import normalize

__all__ = ["turned_round"]

#: Words before "of" that carry no relation of their own ("one of", "all of", "most of").
_NO_RELATION = frozenset(["one", "all", "some", "most", "many", "none", "each", "any", "both", "either",
                          "neither", "part", "kind", "type", "sort", "out", "because", "instead", "ahead"])
_WORD = r"[^\W\d_][\w-]*"


def turned_round(question: str, passage: str, topics: Sequence[Sequence[str]]) -> str | None:
    """Why ``passage`` answers the question the other way round (see the module docstring), or None."""
    asked = " ".join(normalize(question).split()).lower()
    said = " ".join(passage.split())  # as written: a capital after "of" marks a name
    for names in topics:
        alternatives = "|".join(re.escape(n.lower()) for n in sorted(names, key=len, reverse=True) if n.strip())
        if not alternatives:
            continue
        of_topic = rf"\s+of\s+(?:the\s+)?(?:{alternatives})\b"
        for found in re.finditer(rf"\b({_WORD})\s+of\s+(?:the\s+)?(?:{alternatives})\b", asked):
            word = found.group(1)
            if word in _NO_RELATION or re.search(rf"\b{re.escape(word)}{of_topic}", said, re.IGNORECASE):
                continue
            other = re.search(rf"(?i:\b{re.escape(word)}\s+of\s+(?:the\s+)?)([A-Z][\w-]*(?:\s+[A-Z][\w-]*)*)", said)
            if other:
                return (f"the passage says the {word} of {other.group(1)!r}, and the question asks for the {word} "
                        f"of {names[0]!r}: it answers another question")
        stranded = re.search(rf"\b(?:{alternatives})\b.*?\b({_WORD})\s+of\s*[?.!]?\s*$", asked)
        if stranded and stranded.group(1) not in _NO_RELATION \
                and re.search(rf"\b{re.escape(stranded.group(1))}{of_topic}", said, re.IGNORECASE):
            word = stranded.group(1)
            return (f"the passage says what the {word} of {names[0]!r} is, and the question asks what {names[0]!r} "
                    f"is the {word} of: it answers the reverse")
    return None
