"""The statement lexer's fast path (words and plain numbers between spaces need no regular expression) finds
exactly the tokens and kinds the regular expression alone finds, on any text."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from orchestrator.contradictions.lexer import TOKEN as _TOKEN
from orchestrator.contradictions.lexer import tokens
from orchestrator.contradictions.values import fold


def _by_expression(text: str) -> tuple[list[str], list[str]]:
    found = _TOKEN.findall(text)
    kinds = ["num" if t[0].isdigit() else "word" if t[0].isalpha() else "dash" if "-" in t else "sym" for t in found]
    return ["-" if kind == "dash" else t for t, kind in zip(found, kinds, strict=True)], kinds


_PIECES = st.sampled_from(["20", "1,200", "3.5", "1.2.3", "-", " - ", " -", "- ", "%", "$", "€", "°c", "5-year",
                           "x-ray", "don't", "patients'", "ms.", "(12)", "é", "naïve", "٣", "²", "_", "a_b", ",", ".",
                           "/", "~40", ">5", "≥", "km/h", "  ", "\t", "well-known", "3-4", "20 -30", "Ünïcode"])


@settings(max_examples=400, deadline=None)
@given(st.lists(st.one_of(_PIECES, st.text(min_size=1, max_size=6)), max_size=12).map("".join))
def test_the_fast_lexer_finds_what_the_expression_finds(text: str) -> None:
    assert tokens(text) == _by_expression(text)
    assert tokens(fold(text)) == _by_expression(fold(text))


def test_a_dash_between_numbers_across_a_space_is_one_range_token() -> None:
    assert tokens("between 20 - 30 kg") == (["between", "20", "-", "30", "kg"], ["word", "num", "dash", "num", "word"])
    assert tokens("a well-known 5-year rate of 40%") == (
        ["a", "well-known", "5", "year", "rate", "of", "40", "%"],
        ["word", "word", "num", "word", "word", "word", "num", "sym"])
