"""Yes, no or mixed: what the quoted evidence says to a yes/no question, decided from its own words.

"Is X associated with Y?" is answered by results sentences such as "X was significantly associated
with Y (p<0.01)" (yes) or "no significant difference was found" (no). Each clause of a sentence
("..., whereas ...", "...; ...") is read on its own: its statistics first (a p-value below or above
0.05, a ratio's confidence interval excluding or crossing 1, a difference's crossing 0), then its
words (a finding, or the absence of one). A sentence that only describes the sample ("Thirty-seven
patients were identified") says nothing either way. When the signals point both ways, or hedges
("may", "tended to", "did not reach significance") weaken a thin margin, the answer says the
evidence is mixed; with no signal it is unclear rather than a guess. A finding that moves the asked-about
outcome the other way ("higher mortality" to "associated with lower mortality?") says no. A question about equivalence
("Is X an acceptable alternative to Y?") is answered yes by "no difference"; a question that
itself asks about a negative ("Is X unnecessary?") flips the reading. The decision is a label in
front of the quoted evidence, never a replacement for it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from orchestrator.model.terms import search_terms, stem_words

__all__ = ["MIXED", "NO", "UNCLEAR", "YES", "Signals", "decide", "is_yes_no", "signals"]

YES, NO, MIXED, UNCLEAR = "yes", "no", "mixed", "unclear"

_AUX = r"(?:is|are|was|were|does|do|did|can|could|should|will|would|has|have|had|may|might|must)"
_WH = re.compile(r"(?i)\s*(?:what|which|who|whom|whose|how|why|when|where)\b")
_YES_NO = re.compile(rf"(?i)(?:^\s*{_AUX}\b|[:;,?]\s*{_AUX}\b[^?]*\?\s*$|"
                     r"\b(?:is it|are they|is there|are there)\b[^?]*\?\s*$)")
#: A title put as a question: "Spinal subdural hematoma: a sequela of a ruptured aneurysm?"
_TITLE_QUESTION = re.compile(r"[:;]\s*([^:;?]{3,})\?\s*$")

#: A finding's absence or a null result.
_NULL = [re.compile(p, re.I) for p in (
    r"\bno (?:statistically )?significant\b", r"\bnot (?:statistically )?significant(?:ly)?\b",
    r"\bnon-?significant(?:ly)?\b", r"\b(?:did|does|do|was|were|is|are|could|can) not\b", r"\bno (?:difference|"
    r"association|correlation|relationship|effect|evidence|benefit|improvement|change|increase|decrease|impact|"
    r"advantage|role|link)s?\b",
    r"\bfailed to\b", r"\bwithout (?:any )?(?:significant )?(?:difference|effect|benefit|change)\b",
    r"\bunchanged\b", r"\bnot (?:associated|related|correlated|detected|found|observed|useful|necessary|required|"
    r"different|influenced|affected)\b", r"\bneither\b", r"\bnone of\b", r"\bns\b", r"\binsignificant\b",
    r"\bno longer\b", r"\bno\b[^.;]{0,80}\b(?:was|were|could be|has been|have been) (?:detected|found|observed|"
    r"identified|seen)\b",
    r"\bnot (?:greatly|significantly|substantially|materially) (?:affected|changed|different|improved|reduced)\b",
    r"\bno (?:additional|added|further) (?:benefit|value|cancers?|findings?|advantage)\b",
)]
#: Sameness: a null result for "does X change Y?", a positive one for "is X as good as Y?".
_SAME = [re.compile(p, re.I) for p in (
    r"\bsimilar\b", r"\bcomparable\b", r"\bidentical\b", r"\bequivalent\b", r"\b(?:did|do|does) not differ\b",
    r"\bno (?:statistically )?(?:significant )?differences?\b", r"\bnot (?:significantly )?different\b",
    r"\bregardless of\b", r"\birrespective of\b",
)]
_FINDING = [re.compile(p, re.I) for p in (
    r"\bsignificant(?:ly)?\b", r"\b(?:was|were|is|are) (?:strongly |positively |negatively |independently |closely )?"
    r"(?:associated|correlated|related|linked)\b",
    r"\bcorrelat(?:ed|ion|ions) (?:closely |strongly |well |highly )?(?:with|between)\b",
    r"\b(?:improved|increased|reduced|decreased|lowered|raised|"
    r"predicted|detected|demonstrated|revealed|confirmed|enhanced|induced|proved|prolonged|shortened)\b",
    r"\bhigher\b", r"\blower\b", r"\bgreater\b", r"\bfewer\b",
    r"\bmore (?:likely|frequent|common|effective|accurate|often)\b", r"\b(?:effective|accurate|reliable|useful|"
    r"feasible|safe|superior|valuable|sensitive|specific|predictive|acceptable)\b", r"\bodds ratio\b",
    r"\bhazard ratio\b", r"\b\d+(?:\.\d+)?\s*%\s*(?:of|vs|versus)\b", r"\bidentified as\b", r"\bshowed (?:a|an)\b",
    r"\b(?:high|strong) (?:positive |negative )?correlation\b", r"\brisk factors?\b", r"\bpredictors?\b",
)]
_HEDGE = re.compile(r"(?i)\b(?:may|might|possibly|potentially|trend(?:ed|s)? (?:toward|to)|tended to|borderline|"
                    r"marginal(?:ly)?|inconclusive|unclear|uncertain|limited evidence|remains? to be|"
                    r"further (?:studies|research|trials) (?:are|is) (?:needed|required|warranted)|"
                    r"did not reach|approached (?:statistical )?significance|not conclusive)\b")
#: A clause that only describes the sample or the procedure: who was included, how many, what was measured.
_DESCRIPTIVE = re.compile(r"(?i)\b(?:was|were|had been) (?:identified|included|enrolled|recruited|reviewed|studied|"
                          r"analy[sz]ed|randomi[sz]ed|assigned|admitted|received|returned|collected|available|"
                          r"evaluated|examined|screened|selected|operated|treated|followed)\b|"
                          r"\b(?:responses|questionnaires) were\b|\baveraged\b|\bmean age\b|\bmedian age\b")
_P_VALUE = re.compile(r"(?i)\bp\s*(?:value\s*)?(<|≤|=|>|≥|&lt;|&gt;)\s*(0?\.\d+|0|1(?:\.0+)?)\b")
_CI = re.compile(r"(?i)(?:\bci|confidence interval)\b[\s:,=]*\[?\(?(-?\d+(?:\.\d+)?)\s*%?\s*(?:-|\u2013|\u2014|to|,)\s*"
                 r"(-?\d+(?:\.\d+)?)")
_RATIO = re.compile(r"\b(?:a?OR|RR|a?HR|IRR|(?i:odds ratios?|relative risks?|risk ratios?|hazard ratios?|"
                    r"rate ratios?))\b")
_DIFFERENCE = re.compile(r"\b(?:MD|WMD|SMD|(?i:difference|mean change|beta|β|coefficient))\b")
_CLAUSES = re.compile(r"(?i);|,?\s+\b(?:whereas|while|but|although|though|however)\b,?")
_QUESTION_NEGATIVE = re.compile(r"(?i)\b(?:not|no|never|un(?:necessary|safe|related|useful)|without|"
                                r"lack of|fail(?:s|ed)? to)\b")
#: A question about sameness: "an acceptable alternative to", "comparable", "as accurate as", "interchangeable".
_QUESTION_SAME = re.compile(r"(?i)\b(?:alternative|comparable|equivalent|equally|interchangeable|substitute|"
                            r"replace|non-?inferior|as (?:good|effective|safe|accurate|reliable) as|same as|"
                            r"similar|agree(?:ment)?)\b")


@dataclass(frozen=True)
class Signals:
    """What one sentence says: clauses reporting a finding, clauses reporting none (or sameness), hedges."""

    finding: float = 0.0
    null: float = 0.0
    same: float = 0.0  # part of ``null`` that states sameness ("similar", "did not differ")
    differ: float = 0.0  # part of ``finding`` that states a difference ("significantly more than")
    hedge: int = 0

    @property
    def any(self) -> bool:
        return bool(self.finding or self.null)


def is_yes_no(question: str) -> bool:
    """A question answered by yes or no ("Is X ...?", "Does X ...?", "X in Y: is it necessary?", or a title
    put as a question, "X: a new treatment for Y?"), not a choice between named options."""
    text = question.strip()
    if _WH.match(text):
        return False
    if _YES_NO.search(text):
        return True
    title = _TITLE_QUESTION.search(text)
    if title is None:
        return False
    return not _WH.match(title.group(1)) and not re.search(r"(?i)\bor\b", title.group(1))


def _statistics(clause: str) -> tuple[int, int, int]:
    """(significant, not significant, borderline) results stated by the clause's p-values and intervals."""
    significant = null = borderline = 0
    for op, value in _P_VALUE.findall(clause):
        p = float(value)
        if op in ("<", "≤", "&lt;"):
            significant += p <= 0.05
            null += p > 0.05  # "p < 0.1": not significant at the usual level
        elif op in (">", "≥", "&gt;"):
            null += p >= 0.05
        elif p < 0.05:
            significant += 1
        elif p <= 0.1:
            borderline += 1
        else:
            null += 1
    for low, high in _CI.findall(clause):
        lo, hi = sorted((float(low), float(high)))
        before = clause[max(0, clause.find(low) - 60): clause.find(low)]  # what the interval is of
        if _RATIO.search(before):
            crosses = lo <= 1 <= hi
        elif _DIFFERENCE.search(before):
            crosses = lo <= 0 <= hi
        else:  # an interval around a rate or a mean says nothing about an effect
            continue
        null += crosses
        significant += not crosses
    return significant, null, borderline


def _clause(text: str) -> tuple[str, int]:
    """What one clause says ("finding", "differ" (a finding of a difference), "null", "same" (a null result
    stated as sameness) or "" (nothing)) and its hedges."""
    significant, insignificant, borderline = _statistics(text)
    hedge = len(_HEDGE.findall(text)) + borderline
    same = any(p.search(text) for p in _SAME)
    if same or insignificant > significant or any(p.search(text) for p in _NULL):
        return ("same" if same else "null"), hedge
    stripped = text
    for p in _NULL:
        stripped = p.sub(" ", stripped)  # "not significantly" must not also count as "significantly"
    if not significant and not any(p.search(stripped) for p in _FINDING):
        return "", hedge
    compared = _COMPARED.search(text)
    if not significant and not compared and _DESCRIPTIVE.search(text) and "significant" not in text.casefold():
        return "", hedge  # "Thirty-seven patients were identified": who was studied, not what was found
    return ("differ" if compared and (significant or "significant" in text.casefold()) else "finding"), hedge


#: A comparison: "higher than", "more ... compared with", "vs", "increased".
_COMPARED = re.compile(r"(?i)\b(?:than|compared|vs\.?|versus|higher|lower|greater|fewer|more|less|worse|better|"
                       r"increased|decreased|differ(?:ed|ent|ence)?)\b")


def signals(sentence: str) -> Signals:
    """The sentence's clauses read one by one; each clause with a signal has an equal share of the sentence."""
    parts = [_clause(c) for c in _CLAUSES.split(sentence) if c and c.strip()]
    voting = [kind for kind, _ in parts if kind]
    hedge = sum(h for _, h in parts)
    if not voting:
        return Signals(hedge=hedge)
    share = 1 / len(voting)
    return Signals(finding=share * sum(k in ("finding", "differ") for k in voting),
                   null=share * sum(k in ("null", "same") for k in voting), same=share * voting.count("same"),
                   differ=share * voting.count("differ"), hedge=hedge)


def _terms(text: str) -> set[str]:
    return {t for t in search_terms(text) if len(t) > 3 and not t[0].isdigit()} - _COMMON


#: Words of every clinical abstract: sharing them says nothing about sharing a subject.
_COMMON = frozenset(stem_words(["patients", "study", "group", "results"]))


_UP = re.compile(r"(?i)\b(?:higher|increas(?:e|es|ed|ing)|more|greater|longer|rais(?:e|es|ed)|elevat(?:e|es|ed)|"
                 r"prolong(?:s|ed)?)\b")
_DOWN = re.compile(r"(?i)\b(?:lower(?:s|ed)?|reduc(?:e|es|ed|ing|tion)|decreas(?:e|es|ed|ing)|less|fewer|shorter|"
                   r"shorten(?:s|ed)?|prevent(?:s|ed)?)\b")


def _direction(question: str) -> tuple[str, set[str]]:
    """("up" or "down", the terms of what moves) for a question that asks which way something moves ("Is X
    associated with lower mortality?"); ("", set()) for any other."""
    found = sorted((m.start(), m.end(), way) for way, pattern in (("up", _UP), ("down", _DOWN))
                   for m in pattern.finditer(question))
    if not found:
        return "", set()
    _, end, way = found[0]
    return way, _terms(" ".join(question[end:].split()[:4]))


def _against(sentence: str, way: str, moved: set[str]) -> bool:
    """The sentence finds the asked-about outcome moving the other way ("higher mortality" to "lower?")."""
    if not way or not moved or not moved & _terms(sentence):
        return False
    same, other = (_UP, _DOWN) if way == "up" else (_DOWN, _UP)
    return other.search(sentence) is not None and same.search(sentence) is None


def decide(question: str, sentences: Iterable[str]) -> str:
    """``yes``, ``no``, ``mixed`` (signals both ways, or hedged and thin) or ``unclear`` (no signal)."""
    positive = negative = 0.0  # each sentence votes once: the first ones and those about the question more
    hedge = 0
    asked = _terms(question)
    same_asked = bool(_QUESTION_SAME.search(question))
    way, moved = _direction(question)
    for weight, sentence in zip((1.5, 1.2, 1.0, 1.0, 1.0, 1.0, 0.8, 0.8), sentences, strict=False):
        found = signals(sentence)
        weight *= 0.5 + (len(asked & _terms(sentence)) / len(asked) if asked else 0.5)
        if found.finding and _against(sentence, way, moved):  # a finding the other way answers "no"
            negative += weight * found.finding
        elif same_asked:  # "as good as?": "no difference" says yes, "significantly more than" says no
            positive += weight * (found.finding - found.differ + found.same)
            negative += weight * (found.null - found.same + found.differ)
        else:
            positive += weight * found.finding
            negative += weight * found.null
        hedge += found.hedge
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
