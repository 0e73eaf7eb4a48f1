"""Query expansion from the corpus itself: defined abbreviations, lay terms, word families.

A question rarely uses the paper's words: "kidney failure" for "renal insufficiency", "ESRD" for
"end-stage renal disease", "rehab" for "rehabilitation". Three generic mechanisms bridge that gap
without knowing the questions: abbreviations the documents define ("end-stage renal disease
(ESRD)"), a small map of lay words to the technical vocabulary papers use, and stems of the
corpus vocabulary that start with a query stem; and pseudo-relevance feedback from the best windows.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable

import numpy as np

from agents.offline.text import wordlist
from orchestrator.model.terms import SEARCH_STOPWORDS, search_words, stem_words

__all__ = ["LAY_TERMS", "QUESTION_FILLER", "feedback", "find_abbreviations", "lay_expansions",
           "question_terms"]

#: Words that shape a question but are not what it is about ("what happened to ...", "which ... did best").
QUESTION_FILLER = frozenset(wordlist("""
    happen happens happened take takes took part think thinks thought help best use used using uses
    provide provides contain contains mean means stand stands find found
    report reported describe describes main kind kinds type according get got make made give gives given
    say says said tell show shown shows known exactly paper papers study studies article articles doe does
    affect affects affected impact impacts influence influences relate relates interact interacts
    latest recent current currently newest figure figures
"""))


#: Lay or general words -> the terms papers write instead (both directions are added at query time).
LAY_TERMS: dict[str, tuple[str, ...]] = {
    "kidney": ("renal", "nephro"), "heart": ("cardiac", "cardio", "coronary"), "lung": ("pulmonary", "respiratory"),
    "liver": ("hepatic",), "brain": ("cerebral", "neural", "neuro"), "blood": ("vascular", "haematolog", "plasma"),
    "skin": ("dermal", "cutaneous"), "bone": ("skeletal", "osseous"), "leg": ("lower", "extremity", "limb"),
    "clot": ("thrombosis", "thrombus", "embolism", "thromboembolism"), "stroke": ("cerebrovascular",),
    "failure": ("insufficiency", "dysfunction"), "cancer": ("tumour", "tumor", "carcinoma", "neoplasm"),
    "thinner": ("anticoagulant", "anticoagulation", "heparin"), "painkiller": ("analgesic",),
    "drug": ("medication", "pharmacologic", "agent", "compound", "inhibitor"), "medicine": ("medication", "drug"),
    "injured": ("trauma", "injury"), "injury": ("trauma",), "wound": ("injury", "lesion"),
    "doctor": ("physician", "clinician", "gp", "practitioner"), "nurse": ("nursing",),
    "hospital": ("clinical", "inpatient", "ward"), "people": ("participants", "patients", "subjects", "respondents"),
    "person": ("participant", "patient", "subject"), "patient": ("participant",),
    "group": ("cohort", "arm"), "death": ("mortality", "fatal"),
    "die": ("mortality", "death"), "sickness": ("morbidity", "illness"), "side": ("adverse", "complication"),
    "risk": ("complication", "adverse", "hazard"), "problem": ("complication", "barrier", "challenge", "limitation"),
    "weakness": ("limitation",), "drawback": ("limitation",), "shortcoming": ("limitation",),
    "hot": ("heat", "temperature", "thermal"), "heat": ("temperature", "thermal"), "cold": ("chill", "temperature"),
    "weather": ("climate", "temperature"), "cope": ("tolerance", "tolerant", "resilience", "resistant"),
    "tolerate": ("tolerance", "tolerant"), "agree": ("agreement", "correlation", "correlate", "consistent"),
    "flowering": ("anthesis", "bloom"), "plant": ("crop", "genotype", "cultivar"), "variety": ("genotype", "cultivar"),
    "line": ("genotype", "cultivar"), "harvest": ("yield",), "grain": ("kernel", "seed"),
    "gene": ("genetic", "genomic"), "genome": ("proteome", "genomic"), "evolution": ("evolutionary", "selective"),
    "program": ("software", "tool", "pipeline"), "software": ("tool", "pipeline", "program"),
    "tool": ("software", "pipeline"), "code": ("software", "implementation"),
    "article": ("paper", "publication"), "scholarly": ("academic", "scientific"), "scientific": ("academic",),
    "collection": ("corpus", "dataset"), "dataset": ("corpus", "data"), "size": ("number", "count"),
    "summary": ("summarization", "summarisation"), "judge": ("annotate", "evaluate", "rate"),
    "rater": ("annotator", "judge"), "agreement": ("correlation", "consistency"),
    "cost": ("expense", "expenditure", "workload"), "effort": ("workload", "cost"),
    "satisfaction": ("satisfied", "rating"),
    "enzyme": ("protease", "peptidase"), "block": ("inhibit", "inhibitor"), "blocker": ("inhibitor",),
    "bind": ("affinity", "binding"), "strength": ("affinity", "potency"), "selective": ("selectivity", "specific"),
    "shrink": ("reduce", "decrease"), "cut": ("reduce", "decrease", "reduction"), "lower": ("reduce", "decrease"),
    "increase": ("rise", "elevate", "higher"), "improve": ("enhance", "increase"), "better": ("outperform", "improve"),
    "worse": ("underperform", "lower"), "cause": ("induce", "lead"), "stop": ("cease", "lapse", "end"),
    "exercise": ("physical", "activity"), "lab": ("laboratory",),
    "staff": ("personnel", "workforce", "employee"), "worker": ("employee", "staff", "personnel"),
    "money": ("revenue", "income", "sales", "profit", "earnings"), "earn": ("revenue", "income", "profit"),
    "sales": ("revenue",), "turnover": ("revenue", "sales"), "profit": ("income", "earnings"),
    "firm": ("company", "business"), "business": ("company", "segment", "division"),
    "unit": ("business", "division", "segment", "subsidiary"), "spin": ("separation", "spinoff", "divest"),
    "price": ("cost", "fee", "charge"), "fee": ("price", "charge", "cost"),
    "boss": ("ceo", "chief", "executive"), "head": ("chief", "director", "executive"),
    "big": ("size", "large", "number"), "large": ("size",), "small": ("size",),
}
_LAY_STEMS: dict[str, set[str]] = {}
for _word, _targets in LAY_TERMS.items():
    _key = stem_words([_word])[0]
    for _target in stem_words(_targets):
        _LAY_STEMS.setdefault(_key, set()).add(_target)
        _LAY_STEMS.setdefault(_target, set()).add(_key)


def lay_expansions(stem: str) -> set[str]:
    """Technical stems for a lay stem and lay stems for a technical one (from :data:`LAY_TERMS`)."""
    return set(_LAY_STEMS.get(stem, ()))


_PAREN_RE = re.compile(r"\(([A-Za-z][A-Za-z0-9\-]{1,11}s?)\)")
_LONG_IN_PAREN_RE = re.compile(r"\b([A-Z][A-Za-z0-9\-]{1,11})\s+\(([a-z][^()]{4,80})\)")


def _initials_match(abbr: str, words: list[str]) -> bool:
    letters = [c.lower() for c in abbr if c.isalpha()]
    heads = [w[0].lower() for w in words if w]
    parts = [p[0].lower() for w in words for p in re.split(r"[-/]", w) if p and p[0].isalpha()]
    return bool(letters) and (letters[0] == heads[0] if heads else False) and (
        _subsequence(letters, heads) or _subsequence(letters, parts))


def _subsequence(needle: list[str], hay: list[str]) -> bool:
    it = iter(hay)
    return all(any(c == h for h in it) for c in needle)


def find_abbreviations(texts: Iterable[str]) -> dict[str, str]:
    """Abbreviation (lower-case) -> its long form, as the documents define them.

    Both "long form (ABBR)" and "ABBR (long form)" count; the long form's word initials must
    spell the abbreviation's letters in order (Schwartz-Hearst, simplified), so "(see Table 2)" or
    "(n = 12)" never define anything.
    """
    found: dict[str, str] = {}
    for text in texts:
        flat = " ".join(text.split())
        for m in _PAREN_RE.finditer(flat):
            abbr = m.group(1)
            letters = sum(c.isupper() for c in abbr)
            if letters < 2 or abbr.lower() in found:
                continue
            before = re.findall(r"[A-Za-z0-9][\w\-/]*", flat[max(0, m.start() - 120) : m.start()])
            n = len([c for c in abbr if c.isalpha()])
            for size in range(min(n, len(before)), min(n + 3, len(before)) + 1):
                words = before[-size:]
                if size and _initials_match(abbr.rstrip("s"), words):
                    found[abbr.lower()] = " ".join(words)
                    break
        for m in _LONG_IN_PAREN_RE.finditer(flat):
            abbr, long_form = m.group(1), m.group(2)
            if sum(c.isupper() for c in abbr) >= 2 and abbr.lower() not in found:
                words = re.findall(r"[A-Za-z0-9][\w\-/]*", long_form)
                if words and _initials_match(abbr, words):
                    found[abbr.lower()] = long_form
    return found


_FILLER_PHRASES = re.compile(r"(?i)\b(?:in terms of|with respect to|when it comes to|in regards? to|as far as)\b")


def question_terms(question: str) -> list[str]:
    """A question's content words (no stopwords, no question filler), as written."""
    return [w for w in search_words(_FILLER_PHRASES.sub(" ", question)) if w not in SEARCH_STOPWORDS
            and w not in QUESTION_FILLER and (len(w) > 1 or w.isdigit())]


def feedback(score: np.ndarray, weights: dict[str, float], windows: list[set[str]], idf: dict[str, float],
             term_scores: Callable[[str], np.ndarray]) -> np.ndarray:
    """Pseudo-relevance feedback: terms frequent in the 5 best windows and rare elsewhere, at low weight."""
    top = [int(i) for i in np.argsort(-score, kind="stable")[:5] if score[i] > 0]
    if not top:
        return score
    counts: Counter[str] = Counter(t for i in top for t in windows[i])
    extra = sorted(((c * idf[t], t) for t, c in counts.items()
                    if t not in weights and c >= 2 and not t.isdigit()), reverse=True)[:6]
    mean = sum(weights.values()) / max(1, len(weights))
    for value, term in extra:
        score = score + 0.15 * mean * term_scores(term) * min(1.0, value / (5 * mean or 1.0))
    return score
