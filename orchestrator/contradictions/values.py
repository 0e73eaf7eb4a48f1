"""Values as written in a statement, read as intervals in a base unit (pure).

"12%" is 11.5-12.5 (the precision it is written with), "about 40%" is 36-44 (hedged: 10%), "at least
10 hours" is 10 hours or more, "10% or more" too, "between 20 and 30" and "20-30" are 20-30, "95 °F"
is 35 °C, "$5m" is 5,000,000 usd. A bare number counts the word after it ("120 patients"); a number
that names the word before it is a label ("phase 2", "Python 3.12"), a bound word after a noun narrows
the noun ("children under 5"), and a year qualifies the statement rather than measuring anything.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache
from typing import NamedTuple

from orchestrator.contradictions.lexer import TOKEN, tokens
from orchestrator.contradictions.units import CURRENCY_SIGNS, MULTIPLIERS, UNITS, Unit, unit_named
from orchestrator.contradictions.words import CANONICAL, DIRECTIONS, EVENT_WORDS, GROUPS, LIGHT, term
from orchestrator.model.terms import NEGATIONS, STOPWORDS

#: Relative half-width of a hedged value ("about 40%": 36% to 44%).
HEDGE = 0.10
#: At most this relative half-width for a round number ("1,000" may be 950 to 1,050, not 500 to 1,500).
ROUNDING = 0.05
ENTITY_PREFIX = "entity_"

#: No space before these when a value is shown as written, nor after the second.
_TIGHT_BEFORE, _TIGHT_AFTER = frozenset("%/-"), frozenset("$€£¥~<>≤≥/-")
_QUOTES = dict.fromkeys(map(ord, "\u2018\u2019\u201a\u201b\u2032\u00b4`"), "'")
_DASHES = dict.fromkeys(map(ord, "\u2010\u2011\u2012\u2013\u2014\u2015\u2212\ufe58\ufe63\uff0d"), "-")


def _phrases(kind: str, text: str) -> dict[tuple[str, ...], str]:
    return {tuple(phrase.split()): kind for phrase in text.split("|")}


#: Words before a value that bound it ("at least 10") or hedge it ("about 40%"), by their tokens.
_BEFORE = {
    **_phrases("hedge", "about|approximately|approx|around|roughly|nearly|almost|some|circa|ca|an estimated|"
                        "estimated|close to|~"),
    **_phrases("lower", "more than|greater than|higher than|larger than|bigger than|longer than|older than|at least|"
                        "upwards of|in excess of|no less than|no fewer than|not less than|a minimum of|minimum|"
                        "over|above|exceeding|exceeds|exceed|exceeded|surpassed|beyond|>|≥"),
    **_phrases("upper", "less than|fewer than|lower than|smaller than|shorter than|younger than|at most|up to|"
                        "no more than|not more than|not exceeding|a maximum of|maximum|under|below|within|<|≤"),
}
#: Words after a value that bound it ("10% or more").
_AFTER = {
    **_phrases("lower", "or more|or greater|or higher|or above|or over|or longer|or older|and above|and over|"
                        "and up|plus|+"),
    **_phrases("upper", "or less|or fewer|or lower|or below|or under|or shorter|or younger|and below|and under"),
}
_LAST_WORDS = frozenset(k[-1] for k in _BEFORE)
_FIRST_WORDS = frozenset(k[0] for k in _AFTER)
#: Bound words that, after a noun, narrow the noun instead of bounding a value ("children under 5").
_QUALIFYING = frozenset({"under", "over", "above", "below"})
#: Words before a value that make it say which part it is of ("the top 10% of earners", "the bottom 40").
_RANKS = frozenset({"top", "bottom"})
#: Words after a value that say what the value is of ("45% in the treatment arm").
LINKING = frozenset({"of", "in", "for", "among", "at", "on", "from", "across", "by"})
#: Units of more than one token ("per cent", "km/h", "°f"), by their tokens, longest first.
_MULTI_UNITS = {tuple(name.replace("/", " / ").replace("°", "° ").split()): UNITS[name]
                for name in UNITS if " " in name or "/" in name or name.startswith("°")}
_MULTI_SIZES = sorted({len(k) for k in _MULTI_UNITS}, reverse=True)
_MULTI_FIRST = frozenset(k[0] for k in _MULTI_UNITS)
#: Unit words with a plural: the singular after a number qualifies a noun ("a 10 mile race", "5 year survival").
_SINGULAR_UNITS = frozenset(name for name in UNITS if name + "s" in UNITS)
#: Plural nouns that do not end in "s" (a number before a plural counts it: "2000 people", not the year 2000).
_PLURALS = frozenset({"people", "men", "women", "children", "staff", "police", "cattle", "sheep", "fish", "deer",
                      "personnel", "mice", "teeth", "feet", "geese", "data", "media", "criteria", "phenomena"})


class Quantity(NamedTuple):
    """A value as an interval ``[low, high]`` in its unit's base; ``unit`` "#word" counts that word.

    A named tuple rather than a frozen dataclass: as immutable, and made four times faster (every statement
    with a number makes one or two, and a full search analyses every statement)."""

    low: float
    high: float
    value: float
    unit: str
    text: str
    bound: str = ""  # "", "lower", "upper" or "range"
    anchor: str = ""


def fold(text: str) -> str:
    """Lower case, compatibility forms, one kind of quote and dash, single spaces."""
    if not text.isascii():
        text = unicodedata.normalize("NFKC", text).translate(_QUOTES).translate(_DASHES)
    return " ".join(text.casefold().split())


@lru_cache(maxsize=4096)
def _precision(text: str) -> float:
    """Half the step of the last digit written; a round number may be rounded ("1,200": up to 5%)."""
    digits = text.replace(",", "")
    if "." in digits:
        return 0.5 * 10 ** -len(digits.split(".", 1)[1])
    zeros = len(digits) - len(digits.rstrip("0"))
    if zeros == 0 or digits.strip("0") == "":
        return 0.5
    return max(0.5, min(0.5 * 10 ** zeros, ROUNDING * float(digits)))


def _noun_like(word: str) -> bool:
    """Whether a word may be narrowed by what follows it ("phase" in "phase 2", "children" in "children under 5")."""
    return (word not in STOPWORDS and word not in LIGHT and word not in DIRECTIONS and word not in CANONICAL
            and word not in NEGATIONS and word not in EVENT_WORDS and not word.startswith(ENTITY_PREFIX))


@lru_cache(maxsize=4096)
def _unit_of(base: str) -> Unit:
    """A currency or a counted word ("#patient") as a unit of its own."""
    return Unit(base)


def _year(text: str) -> bool:
    return len(text) == 4 and text.isdigit() and "1800" <= text <= "2100"


def _count_word(word: str) -> str | None:
    """The thing a bare number counts ("120 patients"), when the word after it can be one."""
    word = word.removesuffix("'s").strip("'")
    if word in STOPWORDS or word in LIGHT or word in NEGATIONS or word in DIRECTIONS or not word.isalpha():
        return None
    found = term(word)
    return "#" + found[0] if found and found[0] else None


class Reader:
    """One statement's tokens (parallel lists), read left to right; values and labels mark theirs used."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.texts, self.kinds = tokens(text)
        #: token position of a number joined to the word after it by a hyphen ("5-year") -> that word
        self.hyphened: frozenset[int] = frozenset()  # no container of its own unless needed: see analyse's docstring
        if "-" in text and re.search(r"\d-[^\W\d_]", text):
            self.hyphened = frozenset(n for n, m in enumerate(TOKEN.finditer(text))
                                      if m.group(0)[0].isdigit() and text[m.end():m.end() + 1] == "-")
        self.used = [False] * len(self.texts)
        self.quantities: list[tuple[int, Quantity]] = []
        self.labels: list[tuple[int, str]] = []
        self.years: list[tuple[int, int]] = []
        #: values that qualify the noun after them ("the 5-year survival rate"): position -> the label they make
        self.compounds: dict[int, str] | None = None

    def word(self, i: int) -> str:
        return self.texts[i] if 0 <= i < len(self.texts) and self.kinds[i] == "word" else ""

    def before(self, i: int, table: dict[tuple[str, ...], str]) -> tuple[str, int]:
        """The phrase of ``table`` ending just before token ``i``: (its kind, its length), or ("", 0)."""
        if i < 1 or self.texts[i - 1] not in _LAST_WORDS:
            return "", 0
        for size in (3, 2, 1):
            if i - size >= 0 and "num" not in self.kinds[i - size:i]:
                kind = table.get(tuple(self.texts[i - size:i]))
                if kind:
                    return kind, size
        return "", 0

    def after(self, i: int) -> tuple[str, int]:
        if i >= len(self.texts) or self.texts[i] not in _FIRST_WORDS:
            return "", 0
        for size in (2, 1):
            if i + size <= len(self.texts) and "num" not in self.kinds[i:i + size]:
                kind = _AFTER.get(tuple(self.texts[i:i + size]))
                if kind:
                    return kind, size
        return "", 0

    def unit(self, i: int, currency: bool) -> tuple[Unit | None, int]:
        """The unit written from token ``i`` on, and how many tokens it takes."""
        texts = self.texts
        if i >= len(texts):
            return None, 0
        if texts[i] in _MULTI_FIRST:
            for size in _MULTI_SIZES:
                found = _MULTI_UNITS.get(tuple(texts[i:i + size])) if i + size <= len(texts) else None
                if found is not None:
                    return found, size
        if texts[i] == "%":
            return UNITS["%"], 1
        if self.kinds[i] != "word" or (currency and texts[i] in ("m", "b")):
            return None, 0
        found = UNITS.get(texts[i]) or unit_named(texts[i])
        return (found, 1) if found is not None else (None, 0)

    def parse(self) -> None:
        done = -1
        for i, kind in enumerate(self.kinds):
            if kind == "num" and i > done and not self.used[i]:
                done = self.number(i) - 1

    def number(self, i: int) -> int:
        """Read the number at token ``i`` (its range, currency, multiplier, unit, bounds); the next position."""
        texts, kinds = self.texts, self.kinds
        count = len(texts)
        text = texts[i]
        if text.count(".") > 1:  # a version: "1.2.3"
            self.label(i, text)
            return i + 1
        high_text, j, ranged = text, i + 1, False
        if j + 1 < count and kinds[j + 1] == "num" and (kinds[j] == "dash" or texts[j] == "to" or (
                texts[j] == "and" and self.word(i - 1) in ("between", "from"))):  # "20-30", "between 20 and 30"
            high_text, j, ranged = texts[j + 1], j + 2, True
            if _year(text) and _year(high_text) and not (j < count and (unit_named(texts[j]) or texts[j] == "%")):
                self.years += [(i, int(text)), (j - 1, int(high_text))]  # "between 2010 and 2020": a period
                for k in range(i, j):
                    self.used[k] = True
                return j
        start = i
        currency = ""
        if i >= 1 and texts[i - 1] in CURRENCY_SIGNS:
            currency, start = CURRENCY_SIGNS[texts[i - 1]], i - 1
            if i >= 2 and texts[i - 2] == "us":
                start = i - 2
        elif i >= 1 and texts[i - 1] in ("usd", "eur", "gbp"):
            currency, start = texts[i - 1], i - 1
        multiplier = 1.0
        if j < count and texts[j] in MULTIPLIERS and (texts[j] not in ("m", "b") or currency):
            multiplier, j = MULTIPLIERS[texts[j]], j + 1
        if j == i + 1 and j < count and texts[j] == "s" and len(text) == 4 and "1800" <= text <= "2100":
            self.years.append((i, int(text)))  # "the 1990s": a decade, not 1,990 seconds
            self.used[i] = self.used[j] = True
            return j + 1
        unit, taken = self.unit(j, bool(currency))
        sign = 1.0
        if start >= 1 and texts[start - 1] == "minus" and not ranged:  # "minus 18 degrees", "-18 °c"
            sign, start = -1.0, start - 1
        value = sign * float(text.replace(",", ""))
        kind, size = self.before(start, _BEFORE)
        if (not kind and start and texts[start - 1] == "after" and not currency and not ranged
                and (taken or _count_word(self.word(j)))):
            end = j + 1  # "40 MPa after 28 days", "after 1,000 cycles": when it was measured, which measurement
            for k in range(start - 1, end):
                self.used[k] = True
            self.labels.append((i, f"after#{text.replace(',', '')}{texts[j]}"))
            return end
        if not kind and start and texts[start - 1] in _RANKS:  # "the top 10% of earners": which earners
            end = j + taken
            for k in range(start - 1, end):
                self.used[k] = True
            self.labels.append((i, f"{texts[start - 1]}#{text}{texts[j] if taken else ''}"))
            return end
        if currency:
            unit = _unit_of(currency)
        elif unit is None:
            following = self.word(j)
            counted = _count_word(following) if following else None
            if (not ranged and multiplier == 1.0 and "." not in text and "," not in text and 1800 <= value <= 2100
                    and not kind and not (counted and (following.endswith("s") or following in _PLURALS))):
                self.years.append((i, int(value)))
                self.used[i] = True
                return i + 1
            if multiplier == 1.0 and not ranged and not kind and (
                    (counted is None and _noun_like(self.word(i - 1))) or (i and texts[i - 1] in GROUPS)):
                self.label(i, text)  # "phase 2", "the phase 3 trial": which one, never a count of trials
                return i + 1
            unit, taken = _unit_of(counted or ""), 1 if counted else 0
        end = j + taken
        if (taken == 1 and (i in self.hyphened or (texts[j] in _SINGULAR_UNITS and text != "1"))
                and not currency and not ranged and not kind and self.word(end)):
            self.compounds = self.compounds or {}
            self.compounds[i] = f"{texts[j]}#{text}"  # "a 5-year survival rate", "a 10 mile race": which one
        if size == 1 and kind in ("lower", "upper") and texts[start - 1] in _QUALIFYING and _noun_like(
                self.word(start - 2)):
            self.labels.append((i, f"{texts[start - 1]}#{text}"))  # "children under 5": which children
            for k in range(start - 1, end):
                self.used[k] = True
            return end
        after, after_size = self.after(end)
        for k in range(start - size, end + after_size):
            self.used[k] = True
        low, high = value * multiplier, sign * float(high_text.replace(",", "")) * multiplier
        bound = "range" if ranged else ""
        if after or kind in ("lower", "upper"):
            bound = after or kind
            low, high = (low, float("inf")) if bound == "lower" else (float("-inf"), low)
        elif not ranged:
            half = _precision(text) * multiplier
            if kind == "hedge":
                half = max(half, HEDGE * abs(low))
            low, high = low - half, low + half
        low, high = sorted((low * unit.factor + unit.offset, high * unit.factor + unit.offset))
        shown = self.shown(start - size, end + after_size)
        central = value * multiplier * unit.factor + unit.offset
        self.quantities.append((i, Quantity(low, high, central, unit.base, shown, bound)))
        return end + after_size

    def shown(self, start: int, end: int) -> str:
        """Tokens ``start`` to ``end`` as written ("40%", "$5m", "250 ms")."""
        if end - start == 1:
            return self.texts[start]
        out = ""
        for k in range(start, end):
            text = self.texts[k]
            tight = not out or text in _TIGHT_BEFORE or out[-1] in _TIGHT_AFTER or text == "$" or (
                self.kinds[k] == "word" and self.kinds[k - 1] == "num" and text in ("m", "b", "k", "bn", "mn"))
            out += text if tight else " " + text
        return out

    def label(self, i: int, number: str) -> None:
        before = self.word(i - 1)
        if before and _noun_like(before):
            self.used[i - 1] = True
            self.labels.append((i, f"{before}#{number}"))
        else:
            self.labels.append((i, number))
        self.used[i] = True
