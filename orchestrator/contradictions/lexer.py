"""The lexer of statements: numbers, words, symbols, and a dash between two numbers (pure).

Tokens are told apart by their first character: a lexer of values and their units, not a word tokenizer
(words are compared by :func:`orchestrator.contradictions.words.term`). Apart from
:mod:`orchestrator.contradictions.values`, which reads values from the tokens, because reading every
statement's tokens is most of a full contradiction search: its fast path is measured on its own.
"""

from __future__ import annotations

import re

#: Numbers, words, symbols, and a dash between two numbers ("20-30").
TOKEN = re.compile(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)*|[^\W\d_][\w'-]*|[$€£¥%<>≤≥~+°/]"
                   r"|(?<=\d)\s?-\s?(?=\d)")

_DASHED = re.compile(r"\d\s?-\s?\d")
#: a token's kind by its first character, for the characters that decide it (a digit or a letter)
_KINDS: dict[str, str] = {}


def _kind(token: str) -> str:
    first = token[0]
    if first.isdigit() or first.isalpha():
        found = _KINDS[first] = "num" if first.isdigit() else "word"
        return found
    return "dash" if "-" in token else "sym"  # "½-a" is a "dash", "½" a "sym", as the expression's kinds go


def tokens(text: str) -> tuple[list[str], list[str]]:
    """The tokens of ``text`` and their kinds ("num", "word", "dash" (shown as "-") or "sym"), as :data:`TOKEN`
    finds them.

    Most of a statement is words and plain numbers between spaces, which need no regular expression: only the
    other whitespace-separated pieces go through the lexer, and the whole text when a dash joins two numbers
    (the one token that may span a space). The lexer was a third of analysing a statement."""
    if "-" in text and _DASHED.search(text):
        found = TOKEN.findall(text)
        kinds = [_KINDS.get(t[0]) or _kind(t) for t in found]
        return ["-" if kind == "dash" else t for t, kind in zip(found, kinds, strict=True)], kinds
    texts: list[str] = []
    kinds = []
    for piece in text.split():
        if piece.isalpha():
            texts.append(piece)
            kinds.append("word")
        elif piece.isdecimal():
            texts.append(piece)
            kinds.append("num")
        else:
            for token in TOKEN.findall(piece):
                kind = _KINDS.get(token[0]) or _kind(token)
                texts.append("-" if kind == "dash" else token)
                kinds.append(kind)
    return texts, kinds
