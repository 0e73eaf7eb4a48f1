"""The vocabulary of a comparison: which words say what a statement is about, and which flip it (pure).

A statement is reduced to its *topic*: the stemmed content words that name what it is about
(Snowball stems, as ``ask`` ranks with). Three small tables shape the topic:

* :data:`~orchestrator.model.terms.STOPWORDS`: function words, never part of a topic. Words that
  qualify a value are *not* stop words: "before", "after", "first", "second", "during" tell two
  measurements apart; nor are negations (:data:`~orchestrator.model.terms.NEGATIONS`), which flip it.
* :data:`LIGHT`: generic verbs and nouns ("reported", "reached", "estimated", "total", "effect").
  Two agents say the same thing with or without them, so they never make two topics differ.
* :data:`CANONICAL`: one word for words that mean the same here ("produces" / "generates"), and
  :data:`DIRECTIONS`: the two sides of an opposition ("rose" / "fell", "open" / "closed"), read
  as one word plus a flip, so "prices rose" and "prices fell" have one topic and opposite senses.
"""

from __future__ import annotations

from functools import cache

from orchestrator.model.terms import STOPWORDS, stem


def _set(text: str) -> frozenset[str]:
    return frozenset(text.split())


#: Generic words: they link a subject to a value or hedge it, and never tell two topics apart.
LIGHT = _set("""
is are was were be been make makes made making show shows showed shown find finds found report reports reported
reporting estimate estimates estimated total totals totaled totalled totalling number amount amounts amounted
value values level levels figure figures effect effects affect affects affected impact impacts impacted
influence influenced change changes changed reach reaches reached stand stands stood come comes came record
recorded measure measured measures according overall currently now today approximately about around roughly
nearly almost some circa approx study studies data researchers research say says said note noted indicate
indicates indicated suggest suggests suggested claim claims claimed there just still already even only
exactly precisely estimate average typically typical usually generally annual annually total every
""")

_SYNONYMS = {
    "produc": "produce generates generate generated generating output outputs produces produced producing "
              "delivers",
    "enrol": "enrol enroll enrolls enrolled enrolling enrols recruited recruits recruit recruiting",
    "height": "tall taller height heights high elevation",
    "length": "long length lengths",
    "width": "wide width",
    "depth": "deep depth",
    "weight": "weigh weighs weighed weight weights heavy",
    "peopl": "people persons individuals residents inhabitants",
    "worker": "workers employees staff employee",
    "establish": "founded founding establish established establishing",
    "cost": "cost costs costing",
    "span": "span spans spanning",
    "begin": "began begins begin started starts start",
}
#: surface word -> canonical word
CANONICAL = {word: canonical for canonical, words in _SYNONYMS.items() for word in words.split()}

_DIRECTIONS = {
    # canonical: (words that say it, words that say the opposite)
    "increas": ("increase increases increased increasing rise rises rose risen rising grow grows grew grown growing "
                "climb climbs climbed jump jumps jumped gain gains gained raise raises raised raising boost boosts "
                "boosted higher expand expands expanded soar soared win wins won winning",
                "decrease decreases decreased decreasing fall falls fell fallen falling decline declines declined "
                "declining drop drops dropped dropping shrink shrinks shrank shrunk reduce reduces reduced reducing "
                "lower lowers lowered lowering cut cuts slash slashed lessen lessened diminish diminished "
                "diminishes lose loses lost losing"),
    "open": ("open opens opened opening reopen reopens reopened restart restarts restarted",
             "closed close closes closing shut shuts"),
    "doubl": ("double doubles doubled doubling", "halve halves halved halving"),
    "improv": ("improve improves improved improving better", "worsen worsens worsened worsening worse"),
    "safe": ("safe", "unsafe"),
    "effectiv": ("effective", "ineffective"),
    "legal": ("legal lawful", "illegal unlawful"),
    "allow": ("allow allows allowed permit permits permitted", "forbid forbids forbade forbidden prohibit "
                                                             "prohibits prohibited"),
    "accept": ("accept accepts accepted approve approves approved uphold upholds upheld ratify ratifies ratified "
               "confirm confirms confirmed", "reject rejects rejected dismiss dismisses dismissed overturn overturns "
               "overturned veto vetoes vetoed deny denies denied refute refutes refuted disapprove disapproves "
               "disapproved blocked"),
    # "failed to" negates what follows (statements.py) before "failed" is read as the opposite of "passed"
    "pass": ("pass passes passed passing succeed succeeds succeeded successful", "fail fails failed failing "
                                                                                 "unsuccessful"),
    "support": ("support supports supported favour favours favoured favor favors favored",
                "oppose opposes opposed"),
    "convict": ("convicted guilty", "acquitted innocent"),
    "true": ("true correct accurate", "false incorrect inaccurate wrong"),
    "strong": ("strengthen strengthens strengthened stronger strong", "weaken weakens weakened weaker weak"),
    "surviv": ("survive survives survived surviving", "die dies died dying"),
    "major": ("majority", "minority"),
    "enact": ("enact enacts enacted", "repeal repeals repealed abolish abolishes abolished"),
    "present": ("present", "absent"),
    "alive": ("alive", "dead"),
    "fast": ("faster fast", "slower slow"),
}
#: Adjectives a prefix negates ("reversible" / "irreversible"). Not those of a share of people ("insured",
#: "vaccinated", "employed"): "8% are uninsured" and "92% are insured" agree.
_NEGATED_BY_PREFIX = {
    "un": "available aware certain clear common conscious constitutional known lawful likely limited "
          "necessary official popular profitable reliable related restricted stable sustainable usual",
    "in": "accurate active adequate capable compatible complete conclusive consistent curable dependent direct "
          "efficient eligible formal sufficient valid visible",
    "im": "balanced mature measurable mobile moral partial perfect possible practical probable proper",
    "il": "legible literate logical",
    "ir": "regular relevant reversible responsible rational replaceable",
    "dis": "agree agrees agreed continued honest proved proven similar",
    "non": "toxic existent",
}
_TAKEN = {word for sides in _DIRECTIONS.values() for words in sides for word in words.split()}
for _prefix, _words in _NEGATED_BY_PREFIX.items():
    for _word in _words.split():
        if _word not in _TAKEN:  # one opposition per word: "approved" stays the opposite of "rejected"
            _base, _negated = _DIRECTIONS.get(stem(_word), ("", ""))
            _DIRECTIONS[stem(_word)] = (f"{_base} {_word}".strip(), f"{_negated} {_prefix}{_word}".strip())

#: surface word -> (canonical word, whether it says the opposite)
DIRECTIONS = {word: (canonical, bool(flipped)) for canonical, sides in _DIRECTIONS.items()
              for flipped, words in enumerate(sides) for word in words.split()}

#: The canonical word of each opposition.
OPPOSITIONS = frozenset(_DIRECTIONS)

#: Nouns a single letter or a number after names one of ("group A", "phase 2", "stage 4", "grade 3"): a label
#: that says which, never a count ("the phase 2 trial" is no count of trials).
GROUPS = frozenset({"group", "groups", "arm", "cohort", "site", "plant", "unit", "block", "zone", "region", "team",
                    "wave", "sample", "condition", "class", "grade", "type", "stage", "phase", "option", "scenario",
                    "line", "building", "reactor", "well", "sector", "area", "district", "village", "school",
                    "tier", "round", "step", "version", "generation", "series", "model", "category", "cycle", "season",
                    "batch", "lot", "level", "ward", "division", "league", "grid", "track", "lane"})

#: Verbs of one-time events: with one of them, a statement's only year is its value ("opened in 1932").
EVENT_WORDS = _set("""
opened founded established born died launched released built completed discovered invented introduced signed
published created began started ended elected appointed formed incorporated inaugurated constructed first
""")

#: The same by stem, so that other forms of a listed word mean the same too ("deliver", "delivered").
_CANONICAL_STEMS = {stem(word): canonical for word, canonical in CANONICAL.items()
                    if word not in LIGHT}


@cache
def term(word: str) -> tuple[str, bool] | None:
    """The topic word for a surface word and whether it flips the sense; None for a word of no topic.

    Light words give ``("", False)``: no topic, but not nothing (a caller may count them).
    """
    if word in STOPWORDS or not word:
        return None
    if word in DIRECTIONS:
        return DIRECTIONS[word]
    if word in LIGHT:
        return ("", False)
    if word in CANONICAL:
        return (CANONICAL[word], False)
    stemmed = stem(word)
    return (_CANONICAL_STEMS.get(stemmed, stemmed), False)
