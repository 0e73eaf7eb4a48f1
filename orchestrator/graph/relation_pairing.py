"""Which of a sentence's relation words joins which two names (pure).

"Paris is the capital of France and Berlin is the capital of Germany" names Paris, Germany and the
word "capital", but says nothing of Paris and Germany together: each "capital" joins its own pair. A
relation word is read as joining two mentions when

- a mention of each end is nearer to it than to any other relation word of the sentence (the
  subject of "Berlin is the capital of" is Berlin, not Paris, whose "capital" comes first; in "BERT
  outperforms ELMo, and GPT outperforms BERT", GPT outperforms BERT, not ELMo), and
- where the word is a noun of "of" ("capital of", "member of", "part of"), the name right after
  "of" (past "the", "a", "an") is the other end: "capital of France" is not a capital of Germany,
  however near Germany is.

What is read this way is only ever a reason to leave a word out: a sentence whose relation words
join the ends in no such way does not state the relationship. Negation, contrast, questions and the
like are :mod:`orchestrator.graph.relation_scope`'s; the direction is
:func:`orchestrator.graph.relation_words.said_direction`'s.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from orchestrator.model.terms import STOPWORDS

__all__ = ["capitalised", "joining"]

Span = tuple[int, int]
_DETERMINERS = frozenset({"the", "a", "an"})
_CAPITALISED = re.compile(r"\b[A-Z][\w'-]*")


def capitalised(text: str) -> frozenset[str]:
    """The words ``text`` writes with a capital (lower-cased), function words aside: what may be a name."""
    return frozenset(w.lower() for w in _CAPITALISED.findall(text)) - STOPWORDS


def joining(plain: Sequence[str], relations: Sequence[int], one: Sequence[Span], other: Sequence[Span],
            names: frozenset[str]) -> list[int]:
    """The relation words (positions in ``plain``) that join a mention of ``one`` end with a mention of
    ``other``, either way round; ``names``: words written capitalised in the passage (:func:`capitalised`)."""
    return [r for r in relations
            if _joins(plain, r, relations, one, other, names) or _joins(plain, r, relations, other, one, names)]


def _joins(plain: Sequence[str], r: int, relations: Sequence[int], near: Sequence[Span], after_of: Sequence[Span],
           names: frozenset[str]) -> bool:
    if not (any(_nearest(r, span, relations) for span in near) and any(_nearest(r, span, relations)
                                                                      for span in after_of)):
        return False
    if r + 1 >= len(plain) or plain[r + 1] != "of":
        return True
    if any(_after(plain, k + 1) in {start for start, _ in after_of} for k in _ofs(plain, r, relations)):
        return True
    j = _after(plain, r + 2)
    return not (j < len(plain) and plain[j] in names)  # "capital of France": France is its other end


def _after(plain: Sequence[str], j: int) -> int:
    """The position of the word at ``j`` or after the determiners there."""
    while j < len(plain) and plain[j] in _DETERMINERS:
        j += 1
    return j


def _ofs(plain: Sequence[str], r: int, relations: Sequence[int]) -> list[int]:
    """The "of" right after relation word ``r``, and each "but of" / "rather of" that takes it up again before
    the next relation word ("not the capital of Spain but of Portugal")."""
    end = min((q for q in relations if q > r), default=len(plain))
    return [r + 1] + [k for k in range(r + 2, end) if plain[k] == "of" and plain[k - 1] in _TAKEN_UP]


_TAKEN_UP = frozenset({"but", "rather", "instead"})


def _nearest(r: int, span: Span, relations: Sequence[int]) -> bool:
    """Whether relation word ``r`` is the one nearest the mention (a tie goes to both)."""
    def distance(q: int) -> int:
        return 0 if span[0] <= q <= span[1] else min(abs(q - span[0]), abs(q - span[1]))

    return distance(r) == min(distance(q) for q in relations)
