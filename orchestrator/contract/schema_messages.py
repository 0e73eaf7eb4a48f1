"""Schema errors in words an agent can act on: each error becomes a :class:`Problem` (pure).

Agents fix their files from our messages alone, so every error points at the offending
object and says, in terms of the file, what to write instead: one explainer per JSON Schema
keyword, with what the schema wants there in the words of :mod:`orchestrator.contract.schema_phrases`.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

from jsonschema.exceptions import ValidationError, best_match

from orchestrator.contract.schema_phrases import FORMAT_EXAMPLES, TYPE_WORDS, Resolve, describe, quote_all
from orchestrator.model.problems import Problem, pointer_join, quoted

PREVIEW_CHARS = 60

_JSON_TYPES: tuple[tuple[type, str], ...] = (
    (bool, "boolean"), (int, "integer"), (float, "number"), (str, "string"),
    (list, "array"), (dict, "object"), (type(None), "null"),
)

#: What a (sub-)schema wants, as a short phrase.
Describe = Callable[[Any], str]
_Located = tuple[tuple[tuple[int, int, str], ...], Problem]
_Explained = tuple[str, str, dict[str, Any]]
_Explainer = Callable[[ValidationError, str, Describe], Iterator[_Explained]]


def _preview(value: Any) -> str:
    """Compact JSON rendering of ``value``, cut so messages stay one line."""
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= PREVIEW_CHARS else text[: PREVIEW_CHARS - 1] + "…"


def _json_type(value: Any) -> str:
    return next(name for kind, name in _JSON_TYPES if isinstance(value, kind))


def _object_at(pointer: str) -> str:
    return f"the object at {pointer}" if pointer else "the top-level object"


def _at(pointer: str) -> str:
    return pointer or "the top level"


def _value_at(pointer: str) -> str:
    return f"the value at {pointer}" if pointer else "the document"


def _path_key(path: Sequence[str | int]) -> tuple[tuple[int, int, str], ...]:
    """Sort key that orders array indexes numerically (/claims/2 before /claims/10)."""
    return tuple((0, part, "") if isinstance(part, int) else (1, 0, part) for part in path)


def problems_for(errors: Iterable[ValidationError], file: str | None, resolve: Resolve) -> list[Problem]:
    """One problem per distinct error, ordered by where it is in the document."""

    def describe_schema(schema: Any) -> str:
        return describe(schema, resolve)

    located: list[_Located] = []
    seen: set[tuple[str, str, str]] = set()
    for error in errors:
        for key, problem in _explain(error, file, describe_schema):
            identity = (problem.pointer, problem.rule, problem.message)
            if identity not in seen:
                seen.add(identity)
                located.append((key, problem))
    located.sort(key=lambda item: item[0])
    return [problem for _, problem in located]


def not_an_object(filename: str, data: Any, file: str, known_names: Sequence[str]) -> Problem:
    """An artifact of no known schema must still hold one JSON object."""
    return Problem(
        file,
        "",
        "artifact.not_object",
        f"{filename} holds {TYPE_WORDS[_json_type(data)]} ({_preview(data)}); "
        "artifact files must hold one JSON object",
        f"wrap the content in an object, e.g. {{\"items\": ...}}, or use one of the known "
        f"file names: {', '.join(known_names)}",
    )


def _explain(error: ValidationError, file: str | None, describe: Describe) -> Iterator[_Located]:
    if error.validator in ("anyOf", "oneOf") and error.context:
        # best_match descends into error.context itself, preferring the branch whose type
        # fits the value; it returns ``error`` when no branch stands out.
        best = best_match([error])
        if best is not None and best is not error:
            yield from _explain(best, file, describe)
            return
    pointer = pointer_join(*error.absolute_path)
    key = _path_key(error.absolute_path)
    explain = _EXPLAINERS.get(str(error.validator), _explain_other)
    for message, hint, details in explain(error, pointer, describe):
        yield key, Problem(
            file,
            pointer,
            f"schema.{error.validator}",
            message,
            hint,
            details={"schema_path": pointer_join(*error.absolute_schema_path), **details},
        )


def _explain_required(error: ValidationError, pointer: str, describe: Describe) -> Iterator[_Explained]:
    properties = error.schema.get("properties", {}) if isinstance(error.schema, dict) else {}
    instance: Any = error.instance
    required: Any = error.validator_value
    for field in required:
        if isinstance(instance, dict) and field not in instance:
            described = describe(properties.get(field, True))
            yield (
                f"{_object_at(pointer)} is missing the required field '{field}'",
                f"add the field '{field}' ({described}) to {_object_at(pointer)}",
                {"field": field},
            )

def _explain_additional(error: ValidationError, pointer: str, describe: Describe) -> Iterator[_Explained]:
    schema = error.schema if isinstance(error.schema, dict) else {}
    allowed = sorted(schema.get("properties", {}))
    instance: Any = error.instance
    for field in sorted(instance):
        if field in allowed:
            continue
        close = difflib.get_close_matches(field, allowed, n=1)
        fix = f"rename {quoted(field)} to '{close[0]}'" if close else f"remove {quoted(field)}"
        if "extra" in allowed:
            fix += " or move it under 'extra' (a free-form object)"
        yield (
            f"{_object_at(pointer)} has the field {quoted(field)}, which is not allowed there",
            f"{fix}; the allowed fields are: {', '.join(allowed) or '(none)'}",
            {"field": field},
        )

def _explain_enum(error: ValidationError, pointer: str, describe: Describe) -> Iterator[_Explained]:
    values: Any = error.validator_value
    allowed = list(values)
    close = difflib.get_close_matches(str(error.instance).lower(), [str(v) for v in allowed], n=1)
    suggestion = f" (did you mean {json.dumps(close[0])}?)" if close else ""
    yield (
        f"{_preview(error.instance)} at {_at(pointer)} is not one of {quote_all(allowed)}",
        f"use one of {quote_all(allowed)}{suggestion}",
        {},
    )

def _explain_type(error: ValidationError, pointer: str, describe: Describe) -> Iterator[_Explained]:
    wanted = describe(error.schema)
    found = TYPE_WORDS[_json_type(error.instance)]
    yield (
        f"{_value_at(pointer)} is {found} ({_preview(error.instance)}) but must be {wanted}",
        f"change {_value_at(pointer)} to {wanted}",
        {},
    )

def _explain_format(error: ValidationError, pointer: str, describe: Describe) -> Iterator[_Explained]:
    fmt = str(error.validator_value)
    yield (
        f"{_preview(error.instance)} at {_at(pointer)} is not a valid {fmt}",
        f"write {FORMAT_EXAMPLES.get(fmt, f'a valid {fmt}')}",
        {},
    )

def _explain_bound(error: ValidationError, pointer: str, describe: Describe) -> Iterator[_Explained]:
    side = "below the minimum" if "inimum" in str(error.validator) else "above the maximum"
    yield (
        f"{_preview(error.instance)} at {_at(pointer)} is {side} {error.validator_value}",
        f"use {describe(error.schema)}",
        {},
    )

def _explain_length(error: ValidationError, pointer: str, describe: Describe) -> Iterator[_Explained]:
    limit = error.validator_value
    instance: Any = error.instance
    length = len(instance)
    if error.validator == "minLength":
        problem = "is empty" if length == 0 else f"is {length} characters long"
        yield (
            f"the string at {_at(pointer)} {problem}; at least {limit} required",
            f"write at least {limit} character(s) there",
            {},
        )
    else:
        yield (
            f"the string at {_at(pointer)} is {length} characters long; at most {limit} allowed",
            f"shorten it to at most {limit} characters",
            {},
        )

def _explain_items_count(error: ValidationError, pointer: str, describe: Describe) -> Iterator[_Explained]:
    limit = error.validator_value
    bound = "at least" if error.validator == "minItems" else "at most"
    instance: Any = error.instance
    yield (
        f"the list at {_at(pointer)} has {len(instance)} item(s); "
        f"{bound} {limit} required",
        f"give {bound} {limit} items in the list at {_at(pointer)}",
        {},
    )

def _explain_pattern(error: ValidationError, pointer: str, describe: Describe) -> Iterator[_Explained]:
    wanted = describe(error.schema)
    if "propertyNames" in error.absolute_schema_path:
        yield (
            f"{_object_at(pointer)} has the field name {_preview(error.instance)}, which does not "
            f"match the pattern {error.validator_value}",
            f"rename the field {_preview(error.instance)} to {wanted}",
            {"field": error.instance},
        )
        return
    yield (
        f"{_preview(error.instance)} at {_at(pointer)} does not match "
        f"the pattern {error.validator_value}",
        f"use {wanted}",
        {},
    )

def _explain_alternatives(error: ValidationError, pointer: str, describe: Describe) -> Iterator[_Explained]:
    wanted = describe(error.schema)
    yield (
        f"{_preview(error.instance)} at {_at(pointer)} matches none of the allowed forms ({wanted})",
        f"change {_value_at(pointer)} to {wanted}",
        {},
    )

def _explain_other(error: ValidationError, pointer: str, describe: Describe) -> Iterator[_Explained]:
    wanted = describe(error.schema)
    yield (
        f"{_preview(error.instance)} at {_at(pointer)} violates '{error.validator}': "
        f"{_preview(error.message)}",
        f"change {_value_at(pointer)} to {wanted}",
        {},
    )


_EXPLAINERS: dict[str, _Explainer] = {
    "required": _explain_required,
    "additionalProperties": _explain_additional,
    "enum": _explain_enum,
    "type": _explain_type,
    "format": _explain_format,
    "minimum": _explain_bound,
    "maximum": _explain_bound,
    "minLength": _explain_length,
    "maxLength": _explain_length,
    "minItems": _explain_items_count,
    "maxItems": _explain_items_count,
    "pattern": _explain_pattern,
    "anyOf": _explain_alternatives,
    "oneOf": _explain_alternatives,
}
