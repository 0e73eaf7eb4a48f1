"""How much a cited sentence is worth: the arithmetic of citation and answer confidence.

* Support of a sentence by a passage: exact (the sentence occurs in the passage on word boundaries,
  in the normal form of :mod:`orchestrator.model.textnorm`, as :func:`orchestrator.graph.evidence.verify_snippet`
  checks evidence) is 1.0; approximate is 0.5-0.9, linear in the similarity from 60 to 100
  (:func:`similarity_of`: 60% the share of the sentence's stemmed content terms found in the passage,
  40% rapidfuzz's partial alignment); below 60,
  or when the sentence has a number or a negation the passage lacks, it is not found: 0.0.
* An inferred relation over ``L`` steps (alias / same-as links and relationships, at most
  :data:`MAX_STEPS`): a direct relationship (``L = 1``) is 1.0; ``L >= 2`` scores
  ``0.9 * 0.8 ** (L - 2)`` (2: 0.9, 3: 0.72, 4: 0.58, 5: 0.46).
* A citation's confidence is the minimum over its parts; a sentence's is the best of its citations;
  the answer's is the mean of the kept citations weighted by the words of the sentence each supports.
* Sentences under :data:`FLAG_BELOW` are flagged, under :data:`DROP_BELOW` dropped.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from rapidfuzz import fuzz

from orchestrator.answers.data import Part, VerifiedPassage
from orchestrator.answers.populations import other_population
from orchestrator.graph.evidence import verify_snippet
from orchestrator.graph.relation_scope import QUALIFYING, explain, quote_reasons
from orchestrator.graph.relation_words import Stemmed
from orchestrator.model.terms import coverage, critical_tokens, words
from orchestrator.model.textnorm import normalize

EXACT = 1.0
APPROX_MIN, APPROX_MAX = 0.5, 0.9
#: Similarity (0-100) below which a sentence is "not found" in a passage.
MIN_SIMILARITY = 60.0
FLAG_BELOW = 0.5
DROP_BELOW = 0.3
MAX_STEPS = 5
#: Weight of content-term coverage in the similarity (the rest is rapidfuzz's partial alignment).
COVERAGE_WEIGHT = 0.6
FIRST_INFERRED, STEP_DECAY = 0.9, 0.8
_TRAILING = re.compile(r"[\s.;:!?,]+$")
#: A time up to which a passage says something held ("before 2010", "until 1990", "prior to 2005").
_UNTIL = re.compile(r"\b(?:before|until|till|prior to|up to)\s+(?:the\s+)?(?:\d{4}s?|\d{4}-\d{2,4})\b")


def approximate(similarity: float) -> float:
    """Map a similarity in [MIN_SIMILARITY, 100] linearly onto [0.5, 0.9]."""
    share = (min(similarity, 100.0) - MIN_SIMILARITY) / (100.0 - MIN_SIMILARITY)
    return round(APPROX_MIN + (APPROX_MAX - APPROX_MIN) * max(share, 0.0), 3)


def inferred(steps: int) -> float:
    """Confidence of a relation that takes ``steps`` hops (1 = stated directly); 0.0 past MAX_STEPS."""
    if steps < 1 or steps > MAX_STEPS:
        return 0.0
    return 1.0 if steps == 1 else round(FIRST_INFERRED * STEP_DECAY ** (steps - 2), 3)


def _missing_critical(sentence: str, passage: str) -> list[str]:
    """Numbers of the sentence the passage never uses, or a negation only one side of the aligned text has.

    Either flips what the sentence says: "40 megawatts" is not "90 megawatts", "does not require" is
    not "does require". Both texts are in normal form.
    """
    numbers, _, negations = critical_tokens(sentence)
    have_numbers, _, _ = critical_tokens(passage)
    missing = [f"the number {n}" for n in numbers if n not in have_numbers]
    alignment = fuzz.partial_ratio_alignment(sentence, passage)
    if alignment is not None:
        start, end = alignment.dest_start, alignment.dest_end
        while start > 0 and passage[start - 1] != " ":
            start -= 1
        while end < len(passage) and passage[end] != " ":
            end += 1
        aligned = critical_tokens(passage[start:end])[2]
        if bool(aligned) != bool(negations):
            missing.append("a negation (" + ", ".join(sorted(set(aligned or negations))) + ")")
        elif not negations:  # what the passage says around the aligned words: "hoped the vaccine would prevent"
            missing += [f"the passage {explain(reason)}" for reason in quote_reasons(passage, start, end)[:1]]
        dropped = sorted((set(words(passage[start:end])) & QUALIFYING) - set(words(sentence)))
        if dropped and not missing:  # "may have reduced" answered as "reduced": the answer says more than the source
            missing.append(f"the passage's qualifier ({', '.join(dropped)})")
        lapsed = _UNTIL.search(passage[max(0, passage.rfind(". ", 0, start)):end])
        if lapsed and lapsed.group(0) not in sentence and not missing:  # "before 2010, the plant produced ..."
            missing.append(f"the passage's time ({lapsed.group(0)!r}: it may no longer hold)")
    other = other_population(sentence, Stemmed(passage))
    if other is not None:
        missing.append(f"the population ({other[0]!r}, where the passage speaks of {other[1]!r})")
    return missing


def similarity_of(sentence: str, passage: str) -> float:
    """0-100: mostly the share of the sentence's content terms the passage uses, partly their alignment."""
    return COVERAGE_WEIGHT * 100 * coverage(sentence, passage) + (1 - COVERAGE_WEIGHT) * fuzz.partial_ratio(
        sentence, passage)


def _where(passage: VerifiedPassage) -> str:
    return passage.title + (f", p. {passage.page}" if passage.page else "")


def support(sentence: str, passages: Sequence[VerifiedPassage]) -> tuple[Part, VerifiedPassage | None]:
    """How well the node's verified passages support ``sentence``; the best passage with it."""
    wanted = _TRAILING.sub("", sentence)
    norm = normalize(wanted)
    nothing = Part("support", 0.0, "the node has no verified passage to check against")
    best: tuple[Part, VerifiedPassage | None] = (nothing, None)
    for passage in passages:
        check = verify_snippet(wanted, passage.text, None)
        if check.verified and check.match == "exact":
            return Part("support", EXACT, f"exact: the sentence is quoted from {_where(passage)}"), passage
        other = normalize(passage.text)
        missing = _missing_critical(norm, other) if not check.governed else []
        if check.governed:  # quoted word for word from a sentence that denies, asks or only reports it
            part = Part("support", 0.0, f"not supported: in {_where(passage)}, "
                                        f"{check.governed.replace('the source', 'the passage')}")
        elif missing:
            part = Part("support", 0.0, f"not found: {'; '.join(missing)} differs from {_where(passage)}")
        else:
            similarity = similarity_of(norm, other)
            if check.verified:
                similarity = max(similarity, check.score)
            if similarity >= MIN_SIMILARITY:
                part = Part("support", approximate(similarity),
                            f"approximate: similarity {similarity:.0f}/100 with {_where(passage)}")
            else:
                part = Part("support", 0.0, f"not found: similarity {similarity:.0f}/100 with {_where(passage)} "
                                            f"(at least {MIN_SIMILARITY:.0f} needed)")
        if best[1] is None or part.confidence > best[0].confidence:
            best = (part, passage)
    return best


def mentions(sentence: str, names: Sequence[str]) -> int | None:
    """Index in ``names`` of the first name the sentence uses on word boundaries (normal form), else None."""
    text = f" {' '.join(words(normalize(sentence)))} "
    for position, name in enumerate(names):
        wanted = " ".join(words(normalize(name)))
        if wanted and f" {wanted} " in text:
            return position
    return None


def weighted_mean(pairs: Iterable[tuple[float, float]]) -> float:
    """Mean of (confidence, weight) pairs; 0.0 when there are none."""
    pairs = list(pairs)
    total = sum(weight for _, weight in pairs)
    return round(sum(c * w for c, w in pairs) / total, 3) if total else 0.0


def verdict(confidence: float) -> str:
    return "dropped" if confidence < DROP_BELOW else "flagged" if confidence < FLAG_BELOW else "ok"
