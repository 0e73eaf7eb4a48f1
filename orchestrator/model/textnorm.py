"""Reader-equivalent text: the normal form in which a quoted snippet is compared with its source.

Two texts are "the same words" when they differ only in case, runs of whitespace, line-break
hyphenation, ligatures and the typography of quotes and dashes. The normal form keeps a map
back to the original offsets, so a match can be reported as the source's own passage. Its words are
read by :mod:`orchestrator.model.terms`.
"""

from __future__ import annotations

import re
import unicodedata
from array import array
from dataclasses import dataclass
from functools import lru_cache

_QUOTES = dict.fromkeys(map(ord, "\u2018\u2019\u201a\u201b\u2032\u00b4\u0060"), "'") | dict.fromkeys(
    map(ord, "\u201c\u201d\u201e\u201f\u2033\u00ab\u00bb"), '"'
)
_DASHES = dict.fromkeys(map(ord, "\u2010\u2011\u2012\u2013\u2014\u2015\u2212\ufe58\ufe63\uff0d"), "-")
_INVISIBLE = frozenset("\u00ad\u200b\u200c\u200d\u2060\ufeff")


@dataclass(frozen=True)
class Normalized:
    """``text`` in normal form, and for each of its characters the offset in the original."""

    text: str
    origin: array[int]
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


_RUN = re.compile(r"\S+")
_HYPHENS = "-\u2010\u00ad"


def _fold_token(token: str, start: int, out: list[str], origin: array[int]) -> None:
    """Append the normal form of one whitespace-free run, with each character's original offset."""
    if token.isascii() and "-" not in token and "`" not in token:
        out.append(token.lower())
        origin.extend(range(start, start + len(token)))
        return
    length = len(token)
    for i, char in enumerate(token):
        if char in _HYPHENS and 0 < i < length - 1 and out and out[-1][-1:].isalpha() and token[i + 1].isalpha():
            continue  # an intra-word hyphen ("well-known"): both spellings compare equal
        folded = _fold(char)
        for piece in folded:
            out.append(piece)
            origin.append(start + i)


@lru_cache(maxsize=512)
def normalize_mapped(text: str) -> Normalized:
    """Normal form of ``text`` with an offset map (cached: pages are normalised once per process)."""
    if text.isascii() and "-" not in text and "`" not in text:
        return _normalize_plain(text)
    return _normalize_general(text)


def _normalize_general(text: str) -> Normalized:
    out: list[str] = []
    origin: array[int] = array("I")
    previous_end = 0
    for run in _RUN.finditer(text):
        start = run.start()
        if out:
            gap = text[previous_end:start]
            last = out[-1]
            if (last.endswith("-") and "\n" in gap and len(origin) > 1 and text[origin[-1] - 1: origin[-1]].isalpha()
                    and run.group()[0].isalpha() and run.group()[0].islower()):
                out[-1] = last[:-1]  # line-break hyphenation: "evi-\n dence" reads as "evidence"
                origin.pop()
            else:
                out.append(" ")
                origin.append(start)
        _fold_token(run.group(), start, out, origin)
        previous_end = run.end()
    return Normalized("".join(out), origin, len(text))


def _normalize_plain(text: str) -> Normalized:
    """:func:`normalize_mapped` of ASCII text without hyphens or backticks (most pages and snippets).

    Nothing in it folds but case, and no line-break hyphenation can join words, so each run of
    non-space characters is kept lowercased, runs are joined by one space, and a space maps to the
    start of the run after it, as the general path does.
    """
    origin: array[int] = array("I")
    extend, append = origin.extend, origin.append
    runs: list[str] = []
    for run in _RUN.finditer(text):
        start, end = run.span()
        if runs:
            append(start)
        extend(range(start, end))
        runs.append(run.group())
    return Normalized(" ".join(runs).lower(), origin, len(text))


def normalize(text: str) -> str:
    """Normal form of ``text`` (see the module docstring)."""
    return normalize_mapped(text).text
