"""What kind of answer a question wants, and how well a sentence fits that kind.

"How many / what percentage" wants a sentence with a number (and the asked unit); "limitations"
wants the limitations paragraph; "what does X stand for" wants the sentence defining X; "who /
which tool" wants a name. The bonus is added to the retrieval score, so it reorders sentences that
are already about the question rather than pulling in unrelated ones.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from agents.offline.stance import is_yes_no
from agents.offline.text import normalize_ws
from agents.offline.units import row_label
from orchestrator.model.terms import SEARCH_STOPWORDS, search_words

__all__ = ["QuestionType", "classify", "fit"]

STRUCTURED_PENALTY = 0.08  # a row or list item, for a question that asks no quantity
ROW_LABEL_BONUS = 0.1  # a table row whose label (its first cell) the question names
_NUMERIC = re.compile(
    r"(?i)\b(?:how (?:many|much|long|large|big|often|fast|high|low|old|far|common|frequent(?:ly)?|prevalent|"
    r"likely|similar|close(?:ly)?|accurate(?:ly)?|strong(?:ly)?|small|heavy|deep|wide|early|late|soon)|"
    r"what(?: is| are| was| were)?"
    r"(?: the)? (?:\w+ )?(?:percentage|percent|"
    r"proportion|fraction|share|number|value|rate|size|amount|level|ratio|temperature|dose|score|accuracy|"
    r"ki|ic50|concentration|capacity|risk|correlation|count)|at what|by how)\b"
)
_LIMITATION = re.compile("|".join((
    r"(?i)\b(?:limitations?|weakness(?:es)?|shortcomings?|drawbacks?|caveats?|gaps? in|leaves? out|left out",
    r"what (?:are|were) the (?:main )?(?:problems|challenges)|(?:apply|generali[sz]e) to every",
    r"(?:still|is|are) (?:missing|lacking|unknown|unclear|needed)|not (?:yet )?(?:known|studied|covered)",
    r"can(?:'|\u2019|no)t (?:\w+ ){0,3}be (?:applied|generali[sz]ed))\b")))
#: "Why ...", "what is the reason": the answer gives a cause.
_REASON = re.compile(r"(?i)\b(?:why|how come|what (?:is|was|are|were) the (?:main )?reasons?|for what reasons?|"
                     r"reasons? (?:for|why|behind))\b")
_CAUSE_WORDS = re.compile(r"(?i)\b(?:because|due to|owing to|since|as a result|reasons?|caused? by|so that|"
                          r"in order to|therefore|thus|explain(?:s|ed)?|attribut(?:e|ed|able) to|(?:fear|afraid) of)\b")
_DEFINITION = re.compile(r"(?i)\bwhat (?:does|do|is) (?:the )?(?:abbreviation |acronym )?[\"'\u201c]?"
                         r"([A-Za-z][\w-]{1,11})[\"'\u201d]? (?:stand for|mean)\b|\bwhat is meant by\b|"
                         r"\bdefin(?:e|ition)\b")
_RESULTS = re.compile(r"(?i)\b(?:results?|findings|(?:main|key|the) finding|outcomes?|"
                      r"what did (?:they|the \w+) find)\b")
#: "When did ...", "at what point / stage / age": the answer is a time.
#: Not "When VESPA was run on ..., how did it do?": there "when" opens a clause, not the question.
_TIMING = re.compile(r"(?i)^\s*(?:when (?:did|do|does|was|were|is|are|will|would|had|has|have|should|can|could)\b|"
                     r"at what (?:point|stage|time|age)\b|how soon\b|how long after\b|(?:in )?(?:what|which) "
                     r"(?:year|month|date|day)\b)")
_TIME_WORDS = re.compile(r"(?i)\b(?:(?:days?|weeks?|months?|years?|hours?|minutes?) (?:after|before|of|from|post)|"
                         r"(?:after|before|during|until|since|prior to|at the (?:start|end|onset) of)\b|"
                         r"(?:19|20)\d\d\b|(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.? \d)")
_CONTRACTION = re.compile(r"(?i)\b(what|who|where|which|how|that|it)['\u2019]s\b")
_NAME = re.compile(r"(?i)^\s*(?:who|which|what (?:tool|software|program|method|dataset|model|algorithm|"
                   r"language|compound|drug|species|genotypes?|hospital|country))\b")
_UNITS = {
    "percent": re.compile(r"%|\bper ?cent\b"), "fold": re.compile(r"(?i)\d\s*-?\s*fold\b|\btimes\b"),
    "temperature": re.compile(r"[\u00b0\u02da]\s?[CF]\b|\bdegrees?\b"),
}
_NUMBER_WORDS = ("one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty|thirty|forty|"
                 "fifty|hundred|thousand|million|billion|half|twice")
_NUMBER_RE = re.compile(rf"\d|\b(?:{_NUMBER_WORDS})\b", re.I)
_CITATION_RE = re.compile(r"\[[\d,;\s\u2013-]+\]|\([^()]*\b(?:19|20)\d\d[a-z]?\)|\b(?:Fig(?:ure)?|Table|Eq)\.?\s*\d+")
_LIMIT_WORDS = re.compile(r"(?i)\blimitations?\b|\b(?:is|are|was|were) limited (?:to|by|in)\b|\bcaveats?\b|"
                          r"\bshortcomings?\b|\bdrawbacks?\b|\bdoes not allow\b|\bgenerali[sz]|\bbias(?:ed|es)?\b|"
                          r"\bsmall (?:sample|size|number)\b|\binterpreted with caution\b|\bfuture (?:work|research)\b")
_AIM = re.compile(r"(?i)^\s*(?:aims?|objectives?|purpose|background|methods?)\s*:|\b(?:the (?:aim|purpose|"
                  r"objective|goal)s? of (?:this|the|our)|we (?:sought|aimed|set out|investigated|evaluated|assessed|"
                  r"studied|examined|analy[sz]ed) (?:to|whether|if)|to (?:determine|investigate|assess|evaluate) "
                  r"(?:whether|if))\b")
_FINDING = re.compile(r"(?i)\bsignificant(?:ly)?\b|\bp\s*[<>=]|\b(?:associated|correlated) with\b|\bno "
                      r"(?:difference|association|correlation|effect)\b|\b(?:was|were) (?:found|observed|detected)\b")
_PROPER = re.compile(r"\b(?:[A-Z][a-z]+[A-Z]\w*|[A-Z]{2,}[\w-]*|[A-Z][a-z]{2,}(?:\s[A-Z][a-z]{2,})*)\b")


def _padded(question: str) -> str:
    """The question case-folded, its punctuation between words dropped, padded: `` f" {label} " in`` it."""
    return f" {normalize_ws(re.sub(r'[?,;]', ' ', question)).casefold()} "


@dataclass(frozen=True)
class QuestionType:
    """The answer kinds a question asks for; ``unit`` is 'percent', 'fold', 'temperature' or ''."""

    numeric: bool = False
    unit: str = ""
    limitation: bool = False
    definition: str = ""  # the abbreviation to define, lower-case ('' when none)
    name: bool = False
    results: bool = False  # "what were the results / findings / outcomes"
    counted: str = ""  # "how many wheat genotypes": the first 5 letters of the counted noun
    yes_no: bool = False  # "Is X ...?": answered by a result, not by the study's aim
    reason: bool = False  # "why ...": answered by a cause
    timing: bool = False  # "when did ... begin": answered by a time ("ten days after anthesis", "in 2015")

    @property
    def label(self) -> str:
        kinds = [k for k, on in (("yes/no", self.yes_no), ("numeric", self.numeric), ("limitations", self.limitation),
                                 ("definition", bool(self.definition)), ("name", self.name),
                                 ("results", self.results), ("reason", self.reason), ("timing", self.timing))
                 if on]
        return "+".join(kinds) or "open"


def classify(question: str) -> QuestionType:
    question = _CONTRACTION.sub(lambda m: m.group(1) + " is", question)  # "what's the Ki" asks for a value
    unit = ""
    low = question.casefold()
    if re.search(r"percent|proportion|%|share of", low):
        unit = "percent"
    elif re.search(r"\bfold\b|times (?:more|less|higher|lower)", low):
        unit = "fold"
    elif ("temperature" in low or "degrees" in low) and not re.search(r"\bhow many\b", low):
        unit = "temperature"  # "how many varieties were tested at high temperatures" counts varieties
    definition = _DEFINITION.search(question)
    return QuestionType(
        numeric=bool(_NUMERIC.search(question)) or bool(unit and unit != "temperature"),
        unit=unit,
        limitation=bool(_LIMITATION.search(question)),
        definition=(definition.group(1) or "").casefold() if definition else "",
        name=bool(_NAME.search(question)),
        results=bool(_RESULTS.search(question)),
        counted=_counted(question),
        yes_no=is_yes_no(question),
        reason=bool(_REASON.search(question)),
        timing=bool(_TIMING.search(question)),
    )


def _counted(question: str) -> str:
    """The noun a "how many" question counts: the first plural among its next words, else the first word."""
    m = re.search(r"(?i)\bhow many ((?:[a-z][\w-]* ?){1,3})", question)
    if not m:
        return ""
    words = []
    for word in m.group(1).split():
        if word.casefold() in SEARCH_STOPWORDS:
            break
        words.append(word.casefold())
    plural = [w for w in words if w.endswith("s") and not w.endswith("ss")]
    return (plural or words or [""])[0][:5]


def fit(kind: QuestionType, sentence: str, section: str, question: str, unit: str = "sentence",
        abstract: bool = True) -> float:
    """A bonus in about [-0.15, 0.35] for how well ``sentence`` has the kind of answer asked for.

    ``unit``: "sentence", "row" or "item" (agents.offline.units). ``abstract``: the sentence's document is a
    summary of a study (an abstract, a short note), where a yes/no question is answered by its results; in a
    long paper the answer may be in any section ("did they use a cryo-protectant" is answered by the methods)."""
    bonus = 0.0
    if unit != "sentence" and not kind.numeric:
        bonus -= STRUCTURED_PENALTY  # a row or list item answers "how many / what value", rarely "why"
    if unit == "row" and (label := row_label(sentence)) and f" {label} " in _padded(question):
        bonus += ROW_LABEL_BONUS  # "the Ki against the N-domain": the row labelled N-domain, not C-domain
    if kind.numeric:
        sentence = _CITATION_RE.sub(" ", sentence)  # "[30; 31]", "(Smith et al., 2018)" are not answers
        numbers = _NUMBER_RE.findall(sentence)
        bonus += 0.15 if numbers else -0.15
        if kind.unit and _UNITS[kind.unit].search(sentence):
            bonus += 0.1
        # a count of the noun ("81.1M English-language papers"), not a share of it ("(7.2%) papers")
        counted = (rf"(?i)(?:\b\d[\d.,]*(?:[kmb]\b)?|\b(?:{_NUMBER_WORDS})\b)(?:\s+(?:million|billion|thousand))?"
                   rf"\s+(?:[^\s%]+\s+){{0,2}}{re.escape(kind.counted)}")
        if kind.counted and re.search(counted, sentence):
            bonus += 0.15
    if kind.limitation:
        bonus += 0.2 if section == "limitations" else 0.0
        bonus += 0.15 if _LIMIT_WORDS.search(sentence) else -0.05
    if kind.results and not kind.limitation:
        bonus += 0.1 if section in ("results", "abstract", "conclusion", "discussion") else 0.0
        bonus -= 0.1 if _LIMIT_WORDS.search(sentence) else 0.0
    if kind.yes_no and not kind.limitation and abstract:
        bonus += 0.2 if section == "results" else -0.1 if section in ("methods", "introduction") else 0.0
        bonus -= 0.15 if _AIM.search(sentence) else 0.0
        bonus += 0.1 if _FINDING.search(sentence) else 0.0
    if kind.timing:
        bonus += 0.1 if _TIME_WORDS.search(sentence) else 0.0
    if kind.reason:
        bonus += 0.1 if _CAUSE_WORDS.search(sentence) else 0.0
    if kind.definition:
        defined = re.search(rf"(?i)\(\s*{re.escape(kind.definition)}s?\s*\)|\b{re.escape(kind.definition)}s?\s*\(",
                            sentence)
        bonus += 0.35 if defined else 0.0
    if kind.name:
        asked = set(search_words(question, sqlite=True))
        names = [m for m in _PROPER.findall(sentence[1:]) if m.casefold() not in asked]
        bonus += 0.08 if names else 0.0
    return bonus
