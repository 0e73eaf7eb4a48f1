"""What a claim's statement asserts, reduced to what a comparison needs (pure, deterministic).

A statement becomes a :class:`Statement`: its *topic* (the content words of
:mod:`orchestrator.contradictions.words`, the names of the claim's entities as one token each,
labels such as "phase 2" as one word, and the thing a bare number counts: "120 patients"), the
parity of its negations and of its opposites ("fell" is "rose" flipped), its years, and its
values (intervals in a base unit, :mod:`orchestrator.contradictions.values`). Each value carries its *anchor*, the
topic word that tells it apart from the statement's other values ("45% in the treatment arm"),
so that two statements giving two groups the same values the other way round can be compared
value by value.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property, lru_cache

from orchestrator.contradictions.values import ENTITY_PREFIX, LINKING, Quantity, Reader, fold
from orchestrator.contradictions.words import EVENT_WORDS, GROUPS, LIGHT, term
from orchestrator.model.terms import NEGATIONS, STOPWORDS

_NON_NEGATIONS = ("not only", "not just", "not least", "no doubt", "not unlike", "no sooner")


@dataclass(frozen=True)
class Statement:
    """The parts of a statement a contradiction check compares."""

    topic: frozenset[str]
    negated: bool
    flipped: bool
    quantities: tuple[Quantity, ...]
    years: frozenset[int]
    text: str = ""
    names: tuple[tuple[str, str], ...] = ()
    #: (token position, topic word) of each topic word, and the positions of the other words that are no
    #: function words ("study", "not"): what :attr:`modifiers` and :attr:`bare` are read from, analysed again
    #: from :attr:`text` when first needed
    order: tuple[tuple[int, str], ...] = ()
    blockers: frozenset[int] = frozenset()

    @cached_property
    def _ordered(self) -> Statement:
        return self if self.order or not self.topic else _analysed(self.text, self.names, True)

    @cached_property
    def modifiers(self) -> frozenset[tuple[str, str]]:
        """(modifier, word) for each topic word written just before another ("lung cancer": ("lung", "cancer"))."""
        order = self._ordered.order
        at = dict(order)
        return frozenset((at[p - 1], w) for p, w in order if p - 1 in at)

    @cached_property
    def bare(self) -> frozenset[str]:
        """The topic words written with only function words, a value or nothing before them ("Cancer deaths",
        "the cancer"), where "lung cancer" or "the study enrolled" have a word there."""
        ordered = self._ordered
        at = dict(ordered.order)
        return frozenset(w for p, w in ordered.order if p - 1 not in at and p - 1 not in ordered.blockers)


def entity_token(name: str) -> str:
    """The one word that stands for an entity in a topic, whatever name or alias the statement used."""
    return ENTITY_PREFIX + re.sub(r"\W+", "_", fold(name)).strip("_")


def _with_acronyms(statement: str, names: Sequence[tuple[str, str]]) -> str:
    """``statement`` with each all-capitals function word that is no entity name as a name token ("IT spending"
    is not "it spending"); a statement written all in capitals is left as it is."""
    if not any(c.islower() for c in statement):
        return statement
    known = {name for name, _ in names}

    def named(match: re.Match[str]) -> str:
        word = match.group(0).lower()
        return f"{ENTITY_PREFIX}{word}" if word in _NAMED and word not in known else match.group(0)

    return _ACRONYM.sub(named, statement)


def _with_names(text: str, names: Sequence[tuple[str, str]]) -> str:
    """``text`` with each entity name (longest first, on word boundaries) replaced by its token."""
    for name, token in sorted(names, key=lambda pair: -len(pair[0])):
        folded = fold(name)
        if folded and folded in text:
            text = re.sub(rf"(?<![\w-]){re.escape(folded)}(?:'s)?(?![\w-])", f" {token} ", text)
    return text


#: A minus sign: a dash before a digit that follows no word, number or bracket ("-18", "(-0.3%)"), where "20-30",
#: "covid-19" and "20 -30" are no signs.
_SIGNED = re.compile(r"(?<![\w)\].%°-])(?<!\d )-(?=\d)")
_FAILING = re.compile(r"\b(?:fail(?:s|ed|ing)?|unable)\s+to\b")  # "no longer" counts by its "no"
_FAILS = frozenset({"unable", "longer"})
_FAIL_WORDS = frozenset({"fail", "fails", "failed", "failing"})  # before "to" a negation, else "passed" flipped
#: An all-capitals word that would read as a function word ("IT", "US", "WHO", "AND"): a name, kept as one.
_ACRONYM = re.compile(r"(?<![\w$-])[A-Z]{2,}(?![\w$-])")
_NAMED = (STOPWORDS | LIGHT) - NEGATIONS
_SKIP, _NEGATION, _TOPIC, _STOP, _FAIL = 0, 1, 2, 3, 4
#: surface word -> (what it is, its topic word, whether it flips the sense): one lookup per word.
_WORDS: dict[str, tuple[int, str, bool]] = {}


def _word_info(word: str) -> tuple[int, str, bool]:
    found = _WORDS.get(word)
    if found is None:
        plain = word.removesuffix("'s").strip("'") if "'" in word else word
        if plain.startswith(ENTITY_PREFIX):
            found = (_TOPIC, plain, False)
        elif plain in NEGATIONS or word.endswith("n't"):
            found = (_NEGATION, "", False)
        elif plain in _FAILS:
            found = (_SKIP, "", False)
        elif plain in _FAIL_WORDS:
            found = (_FAIL, *(term(plain) or ("", False)))
        elif plain in STOPWORDS or not plain:
            found = (_STOP, "", False)
        else:
            meaning = term(plain)
            found = (_TOPIC, meaning[0], meaning[1]) if meaning and meaning[0] else (_SKIP, "", False)
        if len(_WORDS) < 200_000:
            _WORDS[word] = found
    return found


_UNITS_WORDS = {w: n for n, w in enumerate([
    "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
    "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen"])}
_TENS_WORDS = {w: 10 * n for n, w in enumerate([
    "", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]) if w}
_SCALE_WORDS = {"hundred": 100, "thousand": 1000}
#: The words that start a rewrite (a lone "one" or "zero" does not), "forty-two" included (one token).
NUMBER_WORDS = frozenset([*_UNITS_WORDS, *_TENS_WORDS, *_SCALE_WORDS,
                           *(f"{t}-{u}" for t in _TENS_WORDS for u in list(_UNITS_WORDS)[1:10])]) - {"one", "zero"}
_NUMBER_WORD = "|".join([*_UNITS_WORDS, *_TENS_WORDS, *_SCALE_WORDS])
_SPELLED = re.compile(rf"(?<![\w-])(?:{_NUMBER_WORD})(?:(?:\s+and\s+|\s+|-)(?:{_NUMBER_WORD}))*(?![\w-])")


def _number(words: list[str]) -> int | None:
    """The value of number words ("one hundred twenty"), or None when they do not read as one number."""
    total = current = 0
    for word in words:
        if word in _UNITS_WORDS or word in _TENS_WORDS:
            value = _UNITS_WORDS.get(word, _TENS_WORDS.get(word, 0))
            if current % 10 or (current % 100 and value >= 10) or (word in _TENS_WORDS and current % 100):
                return None  # "twenty thirty", "five six": a list, not a number
            current += value
        elif word == "hundred":
            if current == 0 or current >= 100:
                return None
            current *= 100
        else:  # thousand
            if current == 0:
                return None
            total, current = total + current * 1000, 0
    return total + current


def _with_numbers(text: str) -> str:
    """``text`` with numbers written in words as digits ("enrolled one hundred twenty patients" -> 120); a lone
    "one" (a pronoun as often as a number) stays a word."""
    def digits(match: re.Match[str]) -> str:
        words = [w for w in re.split(r"[\s-]+", match.group(0)) if w and w != "and"]
        if words == ["one"] or words == ["zero"]:
            return match.group(0)
        value = _number(words)
        return match.group(0) if value is None else str(value)

    return _SPELLED.sub(digits, text)


@lru_cache(maxsize=65536)
def analyse(statement: str, names: tuple[tuple[str, str], ...] = ()) -> Statement:
    """The topic, senses, quantities and years of ``statement``; ``names``: (entity name, its token) pairs."""
    return _analysed(statement, names, False)


def _analysed(original: str, names: tuple[tuple[str, str], ...], keep_order: bool) -> Statement:
    """:func:`analyse`, with the order of the topic words when ``keep_order`` (only a pair that differs by one
    word needs it: the containers it takes, kept for every statement, made the cyclic collector a tenth of a
    full search)."""
    statement = original
    if not statement[1:].islower() and _ACRONYM.search(statement):
        statement = _with_acronyms(statement, names)
    text = _with_names(fold(statement), names) if names else fold(statement)
    if "-" in text:
        text = _SIGNED.sub("minus ", text)  # "-18 °C", "-0.3%" (a minus sign folds to "-"): read as "minus"
    parser = Reader(text)
    if not NUMBER_WORDS.isdisjoint(parser.texts):  # a set test per statement: the rewrite only when needed
        numbered = _with_numbers(text)
        if numbered != text:
            text, parser = numbered, Reader(numbered)
    if "num" in parser.kinds:
        parser.parse()
    used, kinds = parser.used, parser.kinds
    flips = negations = nor = 0
    sequence: list[tuple[int, str]] = []  # (token position, topic word) in order, for the anchors
    texts = parser.texts
    blockers: list[int] | None = [] if keep_order else None
    for position, (word, kind, taken) in enumerate(zip(texts, kinds, used, strict=True)):
        if taken or kind != "word":
            continue  # the words of a value or bound ("no more than 50") negate and name nothing
        if len(word) == 1 and sequence and sequence[-1][0] == position - 1 and texts[position - 1] in GROUPS:
            sequence[-1] = (position - 1, f"{sequence[-1][1]}#{word}")  # "group A": which group
            continue
        what, topic_word, flipped = _WORDS.get(word) or _word_info(word)
        if what == _FAIL:  # "failed to pass": a negation (counted below); else "failed" is "passed" flipped
            what = _SKIP if position + 1 < len(texts) and texts[position + 1] == "to" else _TOPIC
        if what == _TOPIC:
            flips += flipped
            sequence.append((position, topic_word))
        elif what == _NEGATION:
            negations += 1
            nor += word == "nor"
            if blockers is not None:
                blockers.append(position)
        elif what == _SKIP and blockers is not None:
            blockers.append(position)
    if nor and "neither" in parser.texts:
        negations -= 1  # "neither ... nor" is one negation
    if "fail" in text or "unable" in text or "longer" in text:
        negations += len(_FAILING.findall(text))
    if "not " in text or "no " in text:
        negations -= sum(text.count(phrase) for phrase in _NON_NEGATIONS)
    sequence += parser.labels
    quantities = [q for _, q in parser.quantities]
    years = {year for _, year in parser.years}
    if len(years) == 1 and not quantities and not EVENT_WORDS.isdisjoint(parser.texts):
        at, year = parser.years[0]  # "opened in 1932": the year is the value
        parser.quantities = [(at, Quantity(year - 0.5, year + 0.5, float(year), "year", str(year)))]
        quantities = [parser.quantities[0][1]]
        years = set()
    if len(quantities) > 1 and parser.compounds:
        quantities = _compounds_as_labels(parser, sequence)
    topic = frozenset([w for _, w in sequence] + [q.unit for q in quantities if q.unit.startswith("#")])
    if len(quantities) > 1:
        quantities = _anchors(parser, sorted(sequence))
    if quantities and not _PROPORTIONS.isdisjoint(topic):
        quantities = [_as_percent(q) for q in quantities]
    if len(topic) < MIN_TOPIC and quantities:  # "Its half-life is 8 days": a short claim is also what it measures
        topic |= {f"@{q.unit}" for q in quantities if q.unit and q.unit not in _RATIOS and not q.unit.startswith("#")}
    if keep_order:
        return Statement(topic, negations % 2 == 1, flips % 2 == 1, tuple(quantities), frozenset(years),
                         original, names, tuple(sequence), frozenset(blockers or ()))
    return Statement(topic, negations % 2 == 1, flips % 2 == 1, tuple(quantities), frozenset(years), original, names)


#: Topic words fewer than this: the statement's units of measure count among them; a ratio says nothing of
#: what it measures ("Accuracy is 90%" and "Accuracy is 60%" may be two models' accuracies).
MIN_TOPIC = 2
_RATIOS = frozenset({"%", "percentage points", "x"})


def _compounds_as_labels(parser: Reader, sequence: list[tuple[int, str]]) -> list[Quantity]:
    """A value joined to the noun it qualifies ("the 5-year survival rate is 68%", "the 30-day mortality") beside
    another value: a label that says which (the 10-year rate is another rate), no measurement."""
    kept = []
    compounds = parser.compounds or {}
    for at, quantity in parser.quantities:
        if at in compounds:
            sequence.append((at, compounds[at]))
        else:
            kept.append((at, quantity))
    parser.quantities = kept
    return [q for _, q in kept]


#: Measures written as a fraction or a percentage alike ("a sensitivity of 0.7" is "of 70 %"), as topic words.
_PROPORTIONS = frozenset(found[0] for word in (
    "sensitivity", "specificity", "accuracy", "precision", "recall", "proportion", "fraction", "share", "probability",
    "prevalence", "efficacy", "likelihood", "rate") if (found := term(word)) and found[0])


def _as_percent(quantity: Quantity) -> Quantity:
    """A bare decimal fraction of a proportion ("0.7") as the percentage it is; any other value as it is."""
    if quantity.unit or "." not in quantity.text or not 0 < quantity.value < 1:
        return quantity
    return Quantity(quantity.low * 100, quantity.high * 100, round(quantity.value * 100, 10), "%", quantity.text,
                    quantity.bound, quantity.anchor)


def _anchors(parser: Reader, sequence: list[tuple[int, str]]) -> list[Quantity]:
    """Each quantity with the topic word that tells it apart: after it when linked ("20% in rural schools"),
    else a group label before it ("arm A of the study lost 4 kg"), else the nearest word before it, back to
    the previous value; a word the statement uses twice tells nothing."""
    once = {w for w, n in Counter(w for _, w in sequence).items() if n == 1}
    positions = [p for p, _ in parser.quantities]
    found = []
    for n, (at, quantity) in enumerate(parser.quantities):
        previous = positions[n - 1] if n else -1
        following = positions[n + 1] if n + 1 < len(positions) else len(parser.texts)
        anchor = ""
        after = next((k for k in range(at + 1, following) if not parser.used[k] or parser.texts[k] in LINKING), None)
        if after is not None and parser.texts[after] in LINKING:
            anchor = next((w for p, w in sequence if after < p < following and w in once), "")
        if not anchor:  # a group named before the value ("arm B lost 2 kg") tells it apart before any other word
            before = [w for p, w in reversed(sequence) if previous < p < at and w in once]
            anchor = next((w for w in before if "#" in w), before[0] if before else "")
        found.append(Quantity(quantity.low, quantity.high, quantity.value, quantity.unit, quantity.text,
                              quantity.bound, anchor))
    return found
