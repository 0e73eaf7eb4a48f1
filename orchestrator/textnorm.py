"""Reader-equivalent text: the normal form in which a quoted snippet is compared with its source.

Two texts are "the same words" when they differ only in case, runs of whitespace, line-break
hyphenation, ligatures and the typography of quotes and dashes. The normal form keeps a map
back to the original offsets, so a match can be reported as the source's own passage.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

_QUOTES = dict.fromkeys(map(ord, "\u2018\u2019\u201a\u201b\u2032\u00b4\u0060"), "'") | dict.fromkeys(
    map(ord, "\u201c\u201d\u201e\u201f\u2033\u00ab\u00bb"), '"'
)
_DASHES = dict.fromkeys(map(ord, "\u2010\u2011\u2012\u2013\u2014\u2015\u2212\ufe58\ufe63\uff0d"), "-")
_INVISIBLE = frozenset("\u00ad\u200b\u200c\u200d\u2060\ufeff")
#: Words whose presence or absence flips what a sentence says.
NEGATIONS = frozenset(
    {"no", "not", "never", "none", "nor", "neither", "without", "cannot", "nothing", "nobody", "nowhere", "non"}
)
_NUMBER = re.compile(r"[-+]?\d+(?:[.,]\d+)*")
_WORD = re.compile(r"\d+(?:[.,]\d+)*|[^\W\d_]+(?:'[^\W\d_]+)?")
_UNIT_WORDS = frozenset({"percent", "per", "cent", "percentage", "fold", "times", "million", "billion", "thousand"})


@dataclass(frozen=True)
class Normalized:
    """``text`` in normal form, and for each of its characters the offset in the original."""

    text: str
    origin: tuple[int, ...]
    source_length: int

    def span(self, start: int, end: int) -> tuple[int, int]:
        """Original ``[start, end)`` offsets of the normal-form slice ``[start, end)``."""
        if start >= end:
            return (self.origin[start] if start < len(self.origin) else self.source_length,) * 2
        return self.origin[start], self.origin[end - 1] + 1


def _fold(char: str) -> str:
    if char in _INVISIBLE:
        return ""
    folded = unicodedata.normalize("NFKC", char).casefold()
    return folded.translate(_QUOTES).translate(_DASHES)


@lru_cache(maxsize=512)
def normalize_mapped(text: str) -> Normalized:
    """Normal form of ``text`` with an offset map (cached: pages are normalised once per process)."""
    out: list[str] = []
    origin: list[int] = []
    pending_space = False
    index, length = 0, len(text)
    while index < length:
        char = text[index]
        if char == "-" or char in "\u2010\u00ad":
            # Line-break hyphenation: "evi-\n dence" reads as "evidence".
            look = index + 1
            while look < length and text[look] in " \t\r":
                look += 1
            if look < length and text[look] == "\n" and out and out[-1].isalpha():
                look += 1
                while look < length and text[look].isspace():
                    look += 1
                if look < length and text[look].isalpha() and text[look].islower():
                    index = look
                    continue
            # An intra-word hyphen ("well-known") is dropped too, so both spellings compare equal.
            if index + 1 < length and text[index + 1].isalpha() and out and out[-1].isalpha():
                index += 1
                continue
        if char.isspace():
            pending_space = bool(out)
            index += 1
            continue
        folded = _fold(char)
        if folded:
            if pending_space:
                out.append(" ")
                origin.append(index)
                pending_space = False
            for piece in folded:
                out.append(piece)
                origin.append(index)
        index += 1
    return Normalized("".join(out), tuple(origin), length)


def normalize(text: str) -> str:
    """Normal form of ``text`` (see the module docstring)."""
    return normalize_mapped(text).text


def words(normal_text: str) -> list[str]:
    """Word and number tokens; a number's thousands separators do not matter ("4,000" is "4000")."""
    return [w.replace(",", "") if w[0].isdigit() else w for w in _WORD.findall(normal_text)]


def critical_tokens(normal_text: str) -> tuple[list[str], list[str], list[str]]:
    """Numbers, units and negations: the tokens an approximate match may never change."""
    numbers = sorted(n.replace(",", "").lstrip("+") for n in _NUMBER.findall(normal_text))
    tokens = words(normal_text)
    units = sorted([t for t in tokens if t in _UNIT_WORDS] + ["%"] * normal_text.count("%"))
    negations = sorted(
        [t for t in tokens if t in NEGATIONS] + ["not"] * sum(1 for t in tokens if t.endswith("n't"))
    )
    return numbers, units, negations
