"""The normal form's fast path for plain ASCII text is the general path's result, offsets included."""

from __future__ import annotations

import string

from hypothesis import given, settings
from hypothesis import strategies as st

from orchestrator.model import textnorm

PLAIN = st.text(alphabet=string.ascii_letters + string.digits + " \t\n\r\x0b\x0c\x1c\x1f.,;:'\"()[]%?!", max_size=80)


@settings(max_examples=400, deadline=None, database=None)
@given(PLAIN)
def test_plain_ascii_text_normalises_as_the_general_path_does(text: str) -> None:
    assert textnorm._normalize_plain(text) == textnorm._normalize_general(text)


@given(st.text(max_size=40))
@settings(max_examples=200, deadline=None, database=None)
def test_any_text_takes_a_path_that_gives_the_general_result(text: str) -> None:
    textnorm.normalize_mapped.cache_clear()
    assert textnorm.normalize_mapped(text) == textnorm._normalize_general(text)


def test_hyphens_and_backticks_still_take_the_general_path() -> None:
    assert textnorm.normalize("well-\n known `quote`") == textnorm._normalize_general("well-\n known `quote`").text
    assert textnorm.normalize("Evi-\ndence") == "evidence"
