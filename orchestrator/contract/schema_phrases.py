"""What a JSON Schema wants, as a short phrase for messages: "a number between 0 and 1" (pure).

The phrases are what retry hints tell an agent to write, so they name formats with an example
and objects by their schema title. Following ``$ref`` needs the registry, which passes its
resolver in.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

#: Follows a sub-schema's ``$ref`` chain to the schema it stands for.
Resolve = Callable[[dict[str, Any]], dict[str, Any]]

FORMAT_EXAMPLES = {
    "uri": "an absolute URI with a scheme, e.g. 'https://example.org/paper.pdf'",
    "date-time": "an RFC 3339 date-time with a time zone, e.g. '2026-11-22T09:30:00Z'",
    "date": "a full date YYYY-MM-DD, e.g. '2026-11-22'",
}
TYPE_WORDS = {
    "string": "a string", "integer": "an integer", "number": "a number", "boolean": "true or false",
    "array": "a list", "object": "an object", "null": "null",
}


def quote_all(values: Sequence[Any]) -> str:
    return ", ".join(json.dumps(v, ensure_ascii=False) for v in values)


def _article(word: str) -> str:
    return ("an " if word[:1].lower() in "aeiou" else "a ") + word


def describe(schema: Any, resolve: Resolve) -> str:
    """A short phrase for what a value must be, e.g. 'a number between 0 and 1'."""
    if not isinstance(schema, dict):
        return "any value"
    resolved = resolve(schema)
    if "enum" in resolved:
        return f"one of {quote_all(resolved['enum'])}"
    if "const" in resolved:
        return json.dumps(resolved["const"], ensure_ascii=False)
    alternatives = resolved.get("anyOf") or resolved.get("oneOf")
    if alternatives:
        return " or ".join(describe(alt, resolve) for alt in alternatives)
    types = resolved.get("type", [])
    types = [types] if isinstance(types, str) else types
    if not types:
        return "any value"
    return " or ".join(_describe_type(kind, resolved, resolve) for kind in types)


def _describe_type(kind: str, schema: dict[str, Any], resolve: Resolve) -> str:
    if kind == "string":
        return _describe_string(schema)
    if kind in ("number", "integer"):
        return TYPE_WORDS[kind] + _describe_bounds(schema)
    if kind == "array":
        items = resolve(schema["items"]) if isinstance(schema.get("items"), dict) else {}
        if items.get("type") == "object" and "title" in items:
            text = f"a list of {items['title']} objects"
        else:
            text = f"a list, each item {describe(schema.get('items', True), resolve)}"
        if "minItems" in schema:
            text += f", at least {schema['minItems']} item(s)"
        return text
    if kind == "object" and "title" in schema:
        return f"{_article(schema['title'])} object"
    return TYPE_WORDS.get(kind, kind)


def _describe_string(schema: dict[str, Any]) -> str:
    if "format" in schema:
        return FORMAT_EXAMPLES.get(schema["format"], f"a {schema['format']} string")
    text = "a string"
    if "pattern" in schema:
        text += f" matching {schema['pattern']}"
    if "examples" in schema:
        text += " such as " + " or ".join(json.dumps(e, ensure_ascii=False) for e in schema["examples"])
    if "title" in schema and "pattern" in schema:
        text = f"{_article(schema['title'])} ({text})"
    low, high = schema.get("minLength", 0), schema.get("maxLength")
    if high is not None:
        text += f" of {low} to {high} characters"
    elif low == 1:
        text = text.replace("a string", "a non-empty string", 1)
    elif low:
        text += f" of at least {low} characters"
    return text


def _describe_bounds(schema: dict[str, Any]) -> str:
    low, high = schema.get("minimum"), schema.get("maximum")
    if low is not None and high is not None:
        return f" between {low} and {high}"
    if low is not None:
        return f" >= {low}"
    if high is not None:
        return f" <= {high}"
    return ""

