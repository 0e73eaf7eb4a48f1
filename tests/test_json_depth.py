"""The nesting limit of artifact JSON, read from the text: the same depth as a walk of the parsed value."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from orchestrator.contract.jsonio import MAX_DEPTH, parse_json_bytes

# strings full of what could be taken for structure: brackets, quotes, backslashes, escapes
tricky_text = st.text(alphabet=st.sampled_from(list('[]{}"\\/ab\n\u00e9\u2028')), max_size=12)
values = st.recursive(
    st.none() | st.booleans() | st.integers(-10**6, 10**6) | tricky_text,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(tricky_text, children, max_size=4),
    max_leaves=40,
)


def walked_depth(value: Any) -> int:
    if isinstance(value, dict):
        return 1 + max((walked_depth(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((walked_depth(v) for v in value), default=0)
    return 0


def nested(depth: int) -> Any:
    value: Any = "[{x}]"
    for level in range(depth):
        value = [value] if level % 2 else {"k{": value}
    return value


@settings(max_examples=300, deadline=None)
@given(values, st.booleans())
def test_the_depth_read_from_the_text_is_the_depth_of_the_value(value: Any, pretty: bool) -> None:
    document = {"wrapper": [value, nested(3)]}
    body = json.dumps(document, indent=2 if pretty else None, ensure_ascii=False).encode()
    depth = walked_depth(document)
    assert parse_json_bytes(body, "f.json", max_depth=depth).problems == []
    too_deep = parse_json_bytes(body, "f.json", max_depth=depth - 1).problems
    assert [p.rule for p in too_deep] == ["json.depth"] and f"nested {depth} levels" in too_deep[0].message


def test_brackets_inside_strings_and_escaped_quotes_are_not_structure() -> None:
    text = json.dumps({"a": "[[[[" * 20 + '\\"{{{{' * 20, "b": [[["\\\\"]]]})
    assert parse_json_bytes(text.encode(), "f.json").problems == []
    at_limit = json.dumps(nested(MAX_DEPTH - 1))  # the string leaf adds no level
    assert parse_json_bytes(at_limit.encode(), "f.json").problems == []
    past = json.dumps(nested(MAX_DEPTH + 1))
    assert [p.rule for p in parse_json_bytes(past.encode(), "f.json").problems] == ["json.depth"]
