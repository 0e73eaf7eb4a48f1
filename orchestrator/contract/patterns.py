"""JSON Schema ``pattern`` as the standard means it, for the Python ``jsonschema`` that decides.

A schema's patterns are ECMA-262 regular expressions, and jsonschema-rs (the fast check) reads them
so. Python's ``jsonschema`` hands them to :mod:`re` as they are, where two things differ for the
patterns we write: ``$`` also matches before a final newline (so ``"C1\\n"`` passed
``^[A-Za-z0-9]...$``, which the documented pattern forbids), and ``\\d`` / ``\\w`` take any
Unicode digit or letter (ECMA: ASCII only). :func:`ecma` rewrites a pattern for :mod:`re` with
ECMA's meaning (``$`` -> ``\\Z``, ``\\d`` -> ``[0-9]``, ``\\w`` -> ``[A-Za-z0-9_]``), and
:func:`extended` gives a validator class whose ``pattern`` and ``patternProperties`` use it.
tests/test_schema_patterns.py holds every pattern of schemas/ to the same verdicts in both validators.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import lru_cache
from typing import Any

__all__ = ["ecma", "end_of_string", "extended"]

#: Escapes whose ECMA meaning is ASCII-only, as classes (outside a class) and ranges (inside one).
_OUTSIDE = {"d": "[0-9]", "D": "[^0-9]", "w": "[A-Za-z0-9_]", "W": "[^A-Za-z0-9_]"}
_INSIDE = {"d": "0-9", "w": "A-Za-z0-9_"}


@lru_cache(maxsize=256)
def ecma(pattern: str) -> re.Pattern[str]:
    """``pattern`` (ECMA-262, no flags) compiled for :mod:`re` with the same meaning where they differ."""
    return re.compile(_rewritten(pattern, ascii_classes=True))


def end_of_string(pattern: str) -> str:
    """``pattern`` (an XPath regex, as SHACL's ``sh:pattern``, without the ``m`` flag) for :mod:`re`: its
    ``$`` means the end of the string (``\\Z``), never before a final newline. ``\\d`` and ``\\w`` are
    Unicode in XPath as in :mod:`re`, and stay."""
    return _rewritten(pattern, ascii_classes=False)


def _rewritten(pattern: str, *, ascii_classes: bool) -> str:
    """``pattern`` with each ``$`` outside a class as ``\\Z`` and (``ascii_classes``) ECMA's ASCII ``\\d``,
    ``\\w`` and their negations."""
    out: list[str] = []
    in_class = False
    i = 0
    while i < len(pattern):
        char = pattern[i]
        if char == "\\" and i + 1 < len(pattern):
            escaped = pattern[i + 1]
            if not ascii_classes:
                out.append(pattern[i:i + 2])
            elif in_class and escaped in _INSIDE:
                out.append(_INSIDE[escaped])
            elif not in_class and escaped in _OUTSIDE:
                out.append(_OUTSIDE[escaped])
            else:
                out.append(pattern[i:i + 2])
            i += 2
            continue
        if in_class:
            in_class = char != "]" or (bool(out) and out[-1] in ("[", "[^"))
            out.append(char)
        elif char == "[":
            in_class = True
            if pattern.startswith("[^", i):
                out.append("[^")
                i += 2
                continue
            out.append(char)
        elif char == "$":
            out.append(r"\Z")
        else:
            out.append(char)
        i += 1
    return "".join(out)


def _pattern(validator: Any, pattern: str, instance: Any, schema: Any) -> Iterator[Any]:
    from jsonschema.exceptions import ValidationError

    if validator.is_type(instance, "string") and not ecma(pattern).search(instance):
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


def _pattern_properties(validator: Any, properties: dict[str, Any], instance: Any, schema: Any) -> Iterator[Any]:
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in properties.items():
        for key, value in instance.items():
            if ecma(pattern).search(key):
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


def extended(validator_class: Any) -> Any:
    """``validator_class`` with ECMA-262 ``pattern`` and ``patternProperties``."""
    from jsonschema.validators import extend

    return extend(validator_class, {"pattern": _pattern, "patternProperties": _pattern_properties})
