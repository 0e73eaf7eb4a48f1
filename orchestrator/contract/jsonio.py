"""Strict JSON reading for untrusted artifacts.

Python's ``json`` module accepts NaN/Infinity, silently keeps the last of duplicate
keys and ignores nothing about encodings; agents' files get none of that leniency.
Every failure becomes a :class:`Problem` that points at the line and column.
"""

from __future__ import annotations

import codecs
import json
import math
import re
import sys
from dataclasses import dataclass
from typing import Any

from orchestrator.model.problems import Problem

MAX_DEPTH = 32

_BOMS = (
    (codecs.BOM_UTF32_LE, "UTF-32 LE"),
    (codecs.BOM_UTF32_BE, "UTF-32 BE"),
    (codecs.BOM_UTF8, "UTF-8"),
    (codecs.BOM_UTF16_LE, "UTF-16 LE"),
    (codecs.BOM_UTF16_BE, "UTF-16 BE"),
)


class _StrictJSONError(ValueError):
    def __init__(self, rule: str, message: str, hint: str, needle: str | None = None, occurrence: int = 1):
        super().__init__(message)
        self.rule = rule
        self.message = message
        self.hint = hint
        self.needle = needle
        self.occurrence = occurrence


@dataclass(frozen=True)
class ParseResult:
    value: Any
    problems: list[Problem]

    @property
    def ok(self) -> bool:
        return not self.problems


def line_col(text: str, offset: int) -> tuple[int, int]:
    line = text.count("\n", 0, offset) + 1
    col = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return line, col


def _reject_constant(name: str) -> Any:
    raise _StrictJSONError(
        "json.non_finite",
        f"{name} is not valid JSON (non-finite numbers are not allowed)",
        "write the number as a finite value, or use null if it is unknown",
        needle=name,
    )


def _parse_float(text: str) -> float:
    value = float(text)
    if math.isinf(value):  # 1e400 parses as inf, which no JSON writer can write back
        raise _StrictJSONError(
            "json.non_finite",
            f"the number {text} is too large: it does not fit a 64-bit float and would become Infinity",
            "write a number between -1.7e308 and 1.7e308, or store it as a string",
            needle=text,
        )
    return value


def _parse_int(text: str) -> int:
    limit = sys.get_int_max_str_digits()
    digits = len(text.lstrip("-"))
    if limit and digits > limit:  # int() would raise a bare ValueError
        raise _StrictJSONError(
            "json.number_too_long",
            f"an integer with {digits} digits is too long; at most {limit} digits are accepted",
            "shorten the number, or store it as a string",
            needle=text[:40],
        )
    return int(text)


#: Integers must fit a signed 64-bit word: the ledger (SQLite), the views (orjson) and RDF tools store them so.
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1


def _out_of_range(value: Any) -> tuple[str, int] | None:
    """(JSON pointer, value) of the first integer beyond 64 bits, iteratively."""
    from orchestrator.model.problems import pointer_join

    stack: list[tuple[str, Any]] = [("", value)]
    while stack:
        pointer, node = stack.pop()
        if isinstance(node, bool):
            continue
        if isinstance(node, int) and not INT64_MIN <= node <= INT64_MAX:
            return pointer, node
        if isinstance(node, dict):
            stack.extend((pointer + pointer_join(k), v) for k, v in node.items())
        elif isinstance(node, list):
            stack.extend((pointer + pointer_join(i), v) for i, v in enumerate(node))
    return None


_SURROGATE = re.compile("[\ud800-\udfff]")
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_LONG_DIGITS = re.compile(r"\d{19}")


def _lone_surrogate(value: Any) -> str | None:
    """The first string (key or value) holding an unpaired UTF-16 surrogate, iteratively."""
    stack: list[Any] = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, str):
            if _SURROGATE.search(node):
                return node
        elif isinstance(node, dict):
            stack.extend(node.keys())
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return None


def _pairs_hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    for key, value in pairs:
        if key in seen:
            raise _StrictJSONError(
                "json.duplicate_key",
                f"duplicate key {key!r} in one object (JSON readers disagree on which value wins)",
                f"keep a single {key!r} entry in that object; merge the two values if both are needed",
                needle=json.dumps(key),
                occurrence=2,
            )
        seen[key] = value
    return seen


_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"')
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")


def _depth(text: str) -> int:
    """Nesting depth of objects and arrays in ``text``, which parsed as JSON: the deepest bracket outside
    strings. Read from the text rather than by walking the parsed value: the walk visited every value in
    Python and was a tenth of judging a small agent's files; this touches only the brackets."""
    brackets = _NOT_BRACKET.sub("", _STRING.sub("", text))
    if len(brackets) <= 2:
        return len(brackets) // 2
    depth = deepest = 0
    for step in [1 if c in "[{" else -1 for c in brackets]:
        depth += step
        if depth > deepest:
            deepest = depth
    return deepest


def _locate(text: str, needle: str | None, occurrence: int) -> tuple[int, int] | None:
    if not needle:
        return None
    matches = list(re.finditer(re.escape(needle), text))
    if len(matches) >= occurrence:
        return line_col(text, matches[occurrence - 1].start())
    return None


def parse_json_bytes(data: bytes, file: str | None, *, max_depth: int = MAX_DEPTH) -> ParseResult:
    """Decode and parse ``data``; all failures are returned as problems, never raised."""

    def problem(rule: str, message: str, hint: str, **details: Any) -> ParseResult:
        return ParseResult(None, [Problem(file, "", rule, message, hint, details=details)])

    for bom, name in _BOMS:
        if data.startswith(bom):
            return problem(
                "json.bom",
                f"the file starts with a {name} byte-order mark",
                "save the file as UTF-8 without a byte-order mark (BOM)",
            )
    nul = data.find(b"\x00")
    if nul >= 0:  # never valid in JSON text (strings escape it as \u0000); typical of UTF-16/32
        return problem(
            "json.encoding",
            f"the file contains a NUL byte at offset {nul}: it looks like UTF-16 or UTF-32 text "
            "(or binary data), but artifact files must be UTF-8",
            "re-encode the file as UTF-8 without a byte-order mark",
            offset=nul,
        )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line, col = line_col(data[: exc.start].decode("utf-8", "replace"), exc.start)
        return problem(
            "json.encoding",
            f"the file is not valid UTF-8: byte 0x{data[exc.start]:02x} at offset {exc.start} "
            f"(line {line}, column {col}) cannot be decoded",
            "re-encode the file as UTF-8",
            offset=exc.start,
            line=line,
            column=col,
        )
    if not text.strip():
        what = "the file is empty" if not text else f"the file holds only whitespace ({len(data)} bytes)"
        return problem("json.empty", what, "write a JSON object into the file")
    try:
        value = json.loads(text, object_pairs_hook=_pairs_hook, parse_constant=_reject_constant,
                           parse_float=_parse_float, parse_int=_parse_int)
    except _StrictJSONError as exc:
        located = _locate(text, exc.needle, exc.occurrence)
        where = f" (line {located[0]}, column {located[1]})" if located else ""
        details = {"line": located[0], "column": located[1]} if located else {}
        return problem(exc.rule, exc.message + where, exc.hint, **details)
    except json.JSONDecodeError as exc:
        return problem(
            "json.syntax",
            f"invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}",
            "fix the JSON syntax at that position (check for missing commas, quotes or brackets)",
            line=exc.lineno,
            column=exc.colno,
        )
    except RecursionError:
        return problem(
            "json.depth",
            f"the JSON is nested too deeply (more than {max_depth} levels)",
            f"flatten the structure to at most {max_depth} levels of objects/arrays",
        )
    depth = _depth(text)
    if depth > max_depth:
        return problem(
            "json.depth",
            f"the JSON is nested {depth} levels deep; the limit is {max_depth}",
            f"flatten the structure to at most {max_depth} levels of objects/arrays",
        )
    # Each walk only where the text can hold what it looks for: an integer beyond 64 bits has 19 digits or
    # more, and an unpaired surrogate can only come from a \uD800-\uDFFF escape (UTF-8 cannot encode one).
    huge = _out_of_range(value) if _LONG_DIGITS.search(text) else None
    if huge is not None:
        shown = str(huge[1])
        shown = shown if len(shown) <= 30 else f"{shown[:12]}...{shown[-6:]} ({len(shown.lstrip('-'))} digits)"
        return ParseResult(None, [Problem(
            file, huge[0], "json.integer_out_of_range",
            f"the integer {shown} does not fit in 64 bits (from {INT64_MIN} to {INT64_MAX})",
            "use a smaller number, a float (e.g. 1.5e30) or a string if the exact digits matter",
        )])
    bad = _lone_surrogate(value) if _SURROGATE_ESCAPE.search(text) else None
    if bad is not None:
        # json accepts "\ud800" escapes that pair with nothing; such a string cannot be stored as UTF-8
        code = ord(_SURROGATE.findall(bad)[0])
        escape = re.search(rf"\\u{code:04x}", text, re.IGNORECASE)
        located = line_col(text, escape.start()) if escape else None
        where = f" (line {located[0]}, column {located[1]})" if located else ""
        return problem(
            "json.invalid_unicode",
            f"the escape \\u{code:04x}{where} is an unpaired UTF-16 surrogate, which is not a Unicode "
            "character",
            "write the character itself (the file is UTF-8), or a complete surrogate pair such as "
            "\\ud83d\\ude00, or remove the escape",
            **({"line": located[0], "column": located[1]} if located else {}),
        )
    return ParseResult(value, [])
