"""What a claim's statement asserts, reduced to what a comparison needs (pure, deterministic).

Contradiction detection compares statements written by different agents in different words.
Three things decide whether two statements can disagree: their content words (stemmed,
without stop words, numbers, units or negations), whether they are negated (the parity of
their negation cues, so a double negation reads as an assertion), and their quantities
(value and unit, units normalised: "12.5%" and "12.5 percent" are one quantity, "250 ms"
and "0.25 s" too). Years are kept apart: two statements about different years are about
different things.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from orchestrator.model.textnorm import NEGATIONS, normalize

_STOP_TEXT = """
a about above after again against all also although am among an and any are as at be been before being
between both but by can could did do does doing done during each either et al etc for from further had has
have having he her here hers him his how however i if in into is it its itself just may me might more most
much must my of off on once one only or other our ours out over own per same she should so some such than
that the their theirs them then there these they this those through thus to too under until up upon us
very via was we were what when where which while who whom whose why will with would yet you your
approximately around roughly nearly almost about some reported reports report found finds showed shows
show study studies according
"""
#: Common English words that say nothing about what a statement is about.
STOP_WORDS = frozenset(_STOP_TEXT.split())

#: Words that make the number after them a bound, not a value ("more than 10%" does not contradict 15%).
_BOUND = re.compile(
    r"(?:more|greater|higher|larger|less|fewer|lower|smaller)\s+than\s*$|(?:at\s+least|at\s+most|up\s+to|over|above|"
    r"under|below|exceeds?|exceeding|nearly|almost|beyond|within)\s*$|[<>≤≥~]\s*$"
)
_NEGATION_PHRASES = re.compile(r"\b(?:fail(?:s|ed|ing)?|unable)\s+to\b|\bno\s+longer\b|n't\b")
#: Phrases that hold a negation word but negate nothing ("not only fast but also accurate").
_NOT_NEGATIONS = re.compile(r"\b(?:not\s+only|not\s+just|not\s+least|no\s+doubt|no\s+less\s+than|no\s+more\s+than|"
                            r"not\s+unlike)\b")
_NUMBER = re.compile(r"(?<![\w.,\-])(-?)(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?(?![.,]?\d)")
_TAIL = re.compile(
    r"\s*(?:-\s*)?(?:(?P<mult>thousand|million|billion|trillion|mn|bn|k)(?![a-z]))?\s*"
    r"(?P<unit>%|percentage\s+points?|per\s+cent|[a-zμµ°][a-zμµ°/²³-]*)?"
)
_CURRENCY_BEFORE = re.compile(r"(?:(us|usd|eur|gbp)\s*)?([$€£])\s*$|\b(usd|eur|gbp)\s*$")
_WORD = re.compile(r"[^\W\d_][\w'-]*|\d[\w.,-]*")
_MULTIPLIERS = {"thousand": 1e3, "k": 1e3, "million": 1e6, "mn": 1e6, "billion": 1e9, "bn": 1e9,
                "trillion": 1e12}
_CURRENCY_SIGNS = {"$": "usd", "€": "eur", "£": "gbp"}


def _units() -> dict[str, tuple[str, float]]:
    table: dict[str, tuple[str, float]] = {}

    def add(unit: str, factor: float, *names: str) -> None:
        for name in names:
            table[name] = (unit, factor)

    add("%", 1, "%", "percent", "per cent", "pct", "percentage")
    add("percentage points", 1, "pp", "percentage point", "percentage points", "points", "point")
    add("s", 1e-9, "ns", "nanosecond", "nanoseconds")
    add("s", 1e-6, "µs", "μs", "us", "microsecond", "microseconds")
    add("s", 1e-3, "ms", "msec", "millisecond", "milliseconds")
    add("s", 1, "s", "sec", "secs", "second", "seconds")
    add("s", 60, "min", "mins", "minute", "minutes")
    add("s", 3600, "h", "hr", "hrs", "hour", "hours")
    add("s", 86400, "day", "days")
    add("s", 604800, "week", "weeks")
    add("s", 2629800, "month", "months")
    add("s", 31557600, "year", "years", "yr", "yrs")
    add("m", 1e-9, "nm", "nanometre", "nanometres", "nanometer", "nanometers")
    add("m", 1e-3, "mm", "millimetre", "millimetres", "millimeter", "millimeters")
    add("m", 1e-2, "cm", "centimetre", "centimetres", "centimeter", "centimeters")
    add("m", 1, "m", "metre", "metres", "meter", "meters")
    add("m", 1e3, "km", "kilometre", "kilometres", "kilometer", "kilometers")
    add("m", 1609.344, "mile", "miles")
    add("g", 1e-3, "mg", "milligram", "milligrams")
    add("g", 1, "g", "gram", "grams")
    add("g", 1e3, "kg", "kilogram", "kilograms")
    add("g", 1e6, "t", "tonne", "tonnes", "ton", "tons")
    add("B", 1e3, "kb", "kilobyte", "kilobytes")
    add("B", 1e6, "mb", "megabyte", "megabytes")
    add("B", 1e9, "gb", "gigabyte", "gigabytes")
    add("B", 1e12, "tb", "terabyte", "terabytes")
    add("Hz", 1, "hz", "hertz")
    add("Hz", 1e3, "khz")
    add("Hz", 1e6, "mhz")
    add("Hz", 1e9, "ghz")
    add("W", 1, "w", "watt", "watts")
    add("W", 1e3, "kw", "kilowatt", "kilowatts")
    add("W", 1e6, "mw", "megawatt", "megawatts")
    add("°C", 1, "°c", "celsius")
    add("x", 1, "x", "times", "fold", "-fold")
    add("usd", 1, "usd", "dollar", "dollars")
    add("eur", 1, "eur", "euro", "euros")
    add("gbp", 1, "gbp", "pound", "pounds")
    return table


UNITS = _units()


def stem(word: str) -> str:
    """A light English stemmer: plural, -ing, -ed and a final -e go ("reduces", "reduced", "reduce")."""
    if len(word) > 4 and word.endswith("ies"):
        word = word[:-3] + "y"
    elif len(word) > 4 and word.endswith("sses"):
        word = word[:-2]
    elif len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    if len(word) > 5 and word.endswith("ing"):
        word = word[:-3]
    elif len(word) > 4 and word.endswith("ed"):
        word = word[:-2]
    if len(word) > 4 and word.endswith("e"):
        word = word[:-1]
    return word


@dataclass(frozen=True)
class Quantity:
    """A number with its unit; ``value`` is in the unit's base (seconds, metres, ...)."""

    value: float
    unit: str
    text: str


@dataclass(frozen=True)
class Statement:
    """The parts of a statement a contradiction check compares."""

    content: frozenset[str]
    negated: bool
    quantities: tuple[Quantity, ...]
    years: frozenset[int]


def _unit_of(word: str | None) -> tuple[str, float] | None:
    if not word:
        return None
    word = " ".join(word.split())
    if word in UNITS:
        return UNITS[word]
    if word.endswith("-fold"):
        return UNITS["fold"]
    return None


def _quantities(text: str) -> tuple[list[Quantity], set[int], list[tuple[int, int]]]:
    """Quantities, years and the character spans they cover (excluded from the content words)."""
    found: list[Quantity] = []
    years: set[int] = set()
    spans: list[tuple[int, int]] = []
    for match in _NUMBER.finditer(text):
        sign, whole, fraction = match.groups()
        number = float(sign + whole.replace(",", "") + (fraction or ""))
        tail = _TAIL.match(text, match.end())
        assert tail is not None  # every part of _TAIL is optional
        mult, unit_word = tail.group("mult"), tail.group("unit")
        before = text[max(0, match.start() - 24):match.start()]
        currency = _CURRENCY_BEFORE.search(before)
        unit = _unit_of(unit_word)
        end = tail.end() if (mult or unit) else match.end()
        if mult:
            number *= _MULTIPLIERS[mult]
        if currency:
            if not mult and unit_word in ("m", "b"):  # "$5m", "$2b"
                number *= 1e6 if unit_word == "m" else 1e9
                end = tail.end()
            sign_unit = _CURRENCY_SIGNS.get(currency.group(2) or "", "")
            unit = (currency.group(1) or currency.group(3) or sign_unit, 1.0)
            if unit[0] == "us":
                unit = ("usd", 1.0)
        elif unit is None and unit_word and unit_word not in STOP_WORDS and unit_word not in NEGATIONS:
            if not mult and not fraction and 1800 <= number <= 2100 and not unit_word.endswith("s"):
                years.add(int(number))  # "the 2019 survey"
                spans.append((match.start(), match.end()))
                continue
            unit = (stem(unit_word.split("/")[0]), 1.0)  # a count: "120 patients"
            end = tail.end()
        elif unit is None:
            if not mult and not fraction and not sign and 1800 <= number <= 2100:
                years.add(int(number))
                spans.append((match.start(), match.end()))
                continue
            unit = ("", 1.0)
        spans.append((currency.start() + max(0, match.start() - 24) if currency else match.start(), end))
        if _BOUND.search(before):
            continue  # a bound, not a value
        found.append(Quantity(number * unit[1], unit[0], " ".join(text[spans[-1][0]:end].split())))
    return found, years, spans


def _negated(text: str, words: list[str]) -> bool:
    count = sum(1 for w in words if w in NEGATIONS and w != "nor")
    if "nor" in words and "neither" not in words:
        count += 1
    count += len(_NEGATION_PHRASES.findall(text)) - len(_NOT_NEGATIONS.findall(text))
    return count % 2 == 1


@lru_cache(maxsize=65536)
def analyse(statement: str) -> Statement:
    """The content words, negation, quantities and years of ``statement``."""
    text = normalize(statement)
    quantities, years, spans = _quantities(text)
    rest = list(text)
    for start, end in spans:
        rest[start:end] = " " * (end - start)
    plain = "".join(rest)
    words = [w.strip("'-") for w in _WORD.findall(plain)]
    negated = _negated(text, words)
    content = set()
    for word in words:
        if not word or word in STOP_WORDS or word in NEGATIONS or word.endswith("n't") or word[0].isdigit():
            continue
        if word in ("fail", "fails", "failed", "failing", "unable", "longer", "does", "did"):
            continue
        content.add(stem(word))
    return Statement(frozenset(content), negated, tuple(quantities), frozenset(years))
