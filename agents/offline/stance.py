"""Yes, no or mixed: what the quoted evidence says to a yes/no question, decided from its own words.

"Is X associated with Y?" is answered by results sentences such as "X was significantly associated
with Y (p<0.01)" (yes) or "no significant difference was found" (no). The decision counts such
signals in the sentences the answer quotes; when they point both ways, or none is clear, the
answer says the evidence is mixed or unclear rather than guessing. A question that itself asks
about a negative ("Is X not ...?", "Is it unnecessary ...?") flips the reading. The decision is a
label in front of the quoted evidence, never a replacement for it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from orchestrator.model.terms import search_terms, stem_words

__all__ = ["MIXED", "NO", "UNCLEAR", "YES", "decide", "is_yes_no"]

YES, NO, MIXED, UNCLEAR = "yes", "no", "mixed", "unclear"

_AUX = r"(?:is|are|was|were|does|do|did|can|could|should|will|would|has|have|had|may|might|must)"
_YES_NO = re.compile(rf"(?i)(?:^\s*{_AUX}\b|[:;,?]\s*{_AUX}\b[^?]*\?\s*$|"
                     r"\b(?:is it|are they|is there|are there)\b[^?]*\?\s*$)")
_NEGATIVE = [re.compile(p, re.I) for p in (
    r"\bno (?:statistically )?significant\b", r"\bnot (?:statistically )?significant(?:ly)?\b",
    r"\bnon-?significant(?:ly)?\b", r"\b(?:did|does|do|was|were|is|are|could|can) not\b", r"\bno (?:difference|"
    r"association|correlation|relationship|effect|evidence|benefit|improvement|change|increase|decrease|impact)s?\b",
    r"\bfailed to\b", r"\bwithout (?:any )?(?:significant )?(?:difference|effect|benefit|change)\b",
    r"\bsimilar (?:in|between|to|across)\b", r"\bcomparable\b", r"\bunchanged\b", r"\bnot (?:associated|related|"
    r"correlated|detected|found|observed|useful|necessary|required)\b", r"\bneither\b", r"\bnone of\b",
    r"\bp\s*[>=≥]\s*0?\.0*[5-9]", r"\bns\b", r"\binsignificant\b", r"\bno longer\b",
    r"\bno\b[^.;]{0,80}\b(?:was|were|could be|has been|have been) (?:detected|found|observed|identified|seen)\b",
    r"\bnot (?:greatly|significantly|substantially|materially) (?:affected|changed|different|improved|reduced)\b",
    r"\b(?:did|does|do) not differ\b", r"\bno (?:additional|added|further) (?:benefit|value|cancers?|findings?)\b",
)]
_POSITIVE = [re.compile(p, re.I) for p in (
    r"(?<!not )(?<!no )\bsignificant(?:ly)?\b", r"\bp\s*[<≤]\s*0?\.0*[0-5]\d*", r"\b(?:was|were|is|are) "
    r"(?:strongly |positively |negatively |independently )?(?:associated|correlated|related|linked)\b",
    r"\bcorrelat(?:ed|ion) (?:with|between)\b", r"\b(?:improved|increased|reduced|decreased|lowered|raised|"
    r"predicted|detected|identified|demonstrated|showed|revealed|confirmed|enhanced)\b", r"\bhigher\b", r"\blower\b",
    r"\bmore (?:likely|frequent|common|effective|accurate)\b", r"\b(?:effective|accurate|reliable|useful|"
    r"feasible|safe|superior|valuable|sensitive|specific)\b", r"\bodds ratio\b", r"\bhazard ratio\b",
    r"\b\d+(?:\.\d+)?\s*%\s*(?:of|vs|versus)\b",
)]
_HEDGE = re.compile(r"(?i)\b(?:may|might|possibly|potentially|trend(?:ed)? toward|tended to|borderline|marginal(?:ly)?|"
                    r"inconclusive|unclear|limited evidence|further (?:studies|research) (?:are|is) needed|"
                    r"did not reach|approached significance)\b")
_QUESTION_NEGATIVE = re.compile(r"(?i)\b(?:not|no|never|un(?:necessary|safe|related|useful)|without|"
                                r"lack of|fail(?:s|ed)? to)\b")


def _terms(text: str) -> set[str]:
    return {t for t in search_terms(text) if len(t) > 3 and not t[0].isdigit()} - _COMMON


#: Words of every clinical abstract: sharing them says nothing about sharing a subject.
_COMMON = frozenset(stem_words(["patients", "study", "group", "results"]))


def is_yes_no(question: str) -> bool:
    """A question answered by yes or no ("Is X ...?", "Does X ...?", "X in Y: is it necessary?")."""
    return bool(_YES_NO.search(question.strip())) and not re.match(r"(?i)\s*(?:what|which|who|how|why|when|where)\b",
                                                                    question)


def _signals(sentence: str) -> tuple[int, int, int]:
    negative = sum(1 for p in _NEGATIVE if p.search(sentence))
    text = sentence
    for p in _NEGATIVE:
        text = p.sub(" ", text)  # "not significantly" must not also count as "significantly"
    positive = sum(1 for p in _POSITIVE if p.search(text))
    hedge = len(_HEDGE.findall(sentence))
    return positive, negative, hedge


def decide(question: str, sentences: Iterable[str]) -> str:
    """``yes``, ``no``, ``mixed`` (signals both ways) or ``unclear`` (no signal) for a yes/no question."""
    positive = negative = 0.0  # each sentence votes once: the first ones and those about the question more
    hedge = 0
    asked = _terms(question)
    for weight, sentence in zip((1.5, 1.2, 1.0, 1.0, 1.0, 1.0), sentences, strict=False):
        p, n, h = _signals(sentence)
        weight *= 0.5 + (len(asked & _terms(sentence)) / len(asked) if asked else 0.5)
        if n:  # a sentence reporting no effect says "no" however many numbers it also gives
            negative += weight
        elif p:
            positive += weight
        hedge += h
    if positive == 0 and negative == 0:
        return UNCLEAR
    if hedge >= 2 and abs(positive - negative) < 1.5:
        return MIXED
    if min(positive, negative) >= 0.75 * max(positive, negative):
        return MIXED
    answer = YES if positive > negative else NO
    if _QUESTION_NEGATIVE.search(question):  # "Is X unnecessary?" answered by "X improved Y" is "no"
        answer = NO if answer == YES else YES
    return answer
