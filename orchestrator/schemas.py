"""The JSON Schema registry: validates artifacts and internal documents into :class:`Problem` lists.

Agents fix their files from our messages alone, so every schema error is translated into
a problem that points at the offending object and says, in terms of the file, what to
write instead. Schemas are loaded, checked and compiled once per process.
"""

from __future__ import annotations

import difflib
import json
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, ClassVar
from urllib.parse import urljoin

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError, ValidationError, best_match
from referencing import Registry, Resource
from referencing.exceptions import Unresolvable
from referencing.jsonschema import DRAFT202012

from orchestrator.errors import ConfigError
from orchestrator.paths import resource_dir
from orchestrator.problems import Problem, pointer_join

SCHEMA_SUFFIX = ".schema.json"
#: Holds shared ``$defs`` only; it is never a document schema.
COMMON_SCHEMA = "common"
#: Schemas chosen by an artifact's file name (``claims.json`` -> ``claims``).
ARTIFACT_SCHEMAS = frozenset(
    {
        "completion", "sources", "entities", "claims", "relationships", "gaps", "plan",
        "key-findings", "confidence-scores", "coverage", "contradictions", "report-outline",
    }
)
PREVIEW_CHARS = 60

_FORMAT_EXAMPLES = {
    "uri": "an absolute URI with a scheme, e.g. 'https://example.org/paper.pdf'",
    "date-time": "an RFC 3339 date-time with a time zone, e.g. '2026-11-22T09:30:00Z'",
    "date": "a full date YYYY-MM-DD, e.g. '2026-11-22'",
}
_JSON_TYPES: tuple[tuple[type, str], ...] = (
    (bool, "boolean"), (int, "integer"), (float, "number"), (str, "string"),
    (list, "array"), (dict, "object"), (type(None), "null"),
)
_TYPE_WORDS = {
    "string": "a string", "integer": "an integer", "number": "a number", "boolean": "true or false",
    "array": "a list", "object": "an object", "null": "null",
}

_Located = tuple[tuple[tuple[int, int, str], ...], Problem]
_Explained = tuple[str, str, dict[str, Any]]
_Explainer = Callable[["SchemaRegistry", ValidationError, str], Iterator[_Explained]]


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


def _article(word: str) -> str:
    return ("an " if word[:1].lower() in "aeiou" else "a ") + word


def _value_at(pointer: str) -> str:
    return f"the value at {pointer}" if pointer else "the document"


def _path_key(path: Sequence[str | int]) -> tuple[tuple[int, int, str], ...]:
    """Sort key that orders array indexes numerically (/claims/2 before /claims/10)."""
    return tuple((0, part, "") if isinstance(part, int) else (1, 0, part) for part in path)


def _quote_all(values: Sequence[Any]) -> str:
    return ", ".join(json.dumps(v, ensure_ascii=False) for v in values)


class SchemaRegistry:
    """All schemas of one folder, cross-referenced and compiled into validators."""

    _default: ClassVar[SchemaRegistry | None] = None
    _default_lock: ClassVar[threading.Lock] = threading.Lock()

    def __init__(self, directory: Path) -> None:
        self._directory = directory
        schemas = self._load(directory)
        missing = sorted(ARTIFACT_SCHEMAS - schemas.keys())
        if missing:
            raise ConfigError(
                f"the schema folder {directory} lacks {', '.join(m + SCHEMA_SUFFIX for m in missing)}; "
                "reinstall cconductor or restore the files from the repository"
            )
        resources: list[tuple[str, Resource[Any]]] = [
            (schema["$id"], DRAFT202012.create_resource(schema)) for schema in schemas.values()
        ]
        self._registry: Registry[Any] = Registry().with_resources(resources)
        self._base_of: dict[int, str] = {}
        for schema in schemas.values():
            self._index_bases(schema, schema["$id"])
        self._validators = {
            name: Draft202012Validator(
                schema, registry=self._registry, format_checker=Draft202012Validator.FORMAT_CHECKER
            )
            for name, schema in schemas.items()
            if name != COMMON_SCHEMA
        }

    @classmethod
    def default(cls) -> SchemaRegistry:
        """The process-wide registry over the packaged schemas, built on first use."""
        with cls._default_lock:
            if cls._default is None:
                cls._default = cls(resource_dir("schemas"))
            return cls._default

    @staticmethod
    def _load(directory: Path) -> dict[str, dict[str, Any]]:
        schemas: dict[str, dict[str, Any]] = {}
        for path in sorted(directory.glob("*" + SCHEMA_SUFFIX)):
            try:
                schema = json.loads(path.read_text(encoding="utf-8"))
                Draft202012Validator.check_schema(schema)
            except (OSError, ValueError, SchemaError) as exc:
                raise ConfigError(
                    f"schema file {path} is unusable: {exc}; restore it from the repository"
                ) from exc
            if not isinstance(schema.get("$id"), str):
                raise ConfigError(f"schema file {path} has no '$id'; add one so references resolve")
            schemas[path.name.removesuffix(SCHEMA_SUFFIX)] = schema
        return schemas

    def _index_bases(self, node: Any, base: str) -> None:
        """Remember which schema file each sub-schema belongs to, to resolve its ``$ref`` later."""
        if isinstance(node, dict):
            self._base_of[id(node)] = base
            for child in node.values():
                self._index_bases(child, base)
        elif isinstance(node, list):
            for child in node:
                self._index_bases(child, base)

    # -- public API ---------------------------------------------------------------------

    def schema_name_for(self, filename: str) -> str | None:
        """The artifact schema for a file name (``claims.json`` -> ``claims``), or None."""
        name = filename.removesuffix(".json")
        return name if filename.endswith(".json") and name in ARTIFACT_SCHEMAS else None

    def artifact_file_names(self) -> list[str]:
        return sorted(name + ".json" for name in ARTIFACT_SCHEMAS)

    def validate_artifact(self, filename: str, data: Any, file: str) -> list[Problem]:
        """Check an artifact against the schema its name selects; unknown names need only be objects."""
        name = self.schema_name_for(filename)
        if name is not None:
            return self._validate(name, data, file)
        if isinstance(data, dict):
            return []
        return [
            Problem(
                file,
                "",
                "artifact.not_object",
                f"{filename} holds {_TYPE_WORDS[_json_type(data)]} ({_preview(data)}); "
                "artifact files must hold one JSON object",
                f"wrap the content in an object, e.g. {{\"items\": ...}}, or use one of the known "
                f"file names: {', '.join(self.artifact_file_names())}",
            )
        ]

    def validate_document(self, schema_name: str, data: Any, file: str | None) -> list[Problem]:
        """Check an internal document (session, event, retry-instructions, knowledge-graph, ...)."""
        if schema_name not in self._validators:
            raise ConfigError(
                f"there is no schema named {schema_name!r} in {self._directory} (expected "
                f"{schema_name}{SCHEMA_SUFFIX}); known schemas: {', '.join(sorted(self._validators))}"
            )
        return self._validate(schema_name, data, file)

    # -- errors to problems -------------------------------------------------------------

    def _validate(self, name: str, data: Any, file: str | None) -> list[Problem]:
        located: list[_Located] = []
        seen: set[tuple[str, str, str]] = set()
        for error in self._validators[name].iter_errors(data):
            for key, problem in self._explain(error, file):
                identity = (problem.pointer, problem.rule, problem.message)
                if identity not in seen:
                    seen.add(identity)
                    located.append((key, problem))
        located.sort(key=lambda item: item[0])
        return [problem for _, problem in located]

    def _explain(self, error: ValidationError, file: str | None) -> Iterator[_Located]:
        if error.validator in ("anyOf", "oneOf") and error.context:
            # best_match descends into error.context itself, preferring the branch whose type
            # fits the value; it returns ``error`` when no branch stands out.
            best = best_match([error])
            if best is not None and best is not error:
                yield from self._explain(best, file)
                return
        pointer = pointer_join(*error.absolute_path)
        key = _path_key(error.absolute_path)
        explain = self._EXPLAINERS.get(str(error.validator), SchemaRegistry._explain_other)
        for message, hint, details in explain(self, error, pointer):
            yield key, Problem(
                file,
                pointer,
                f"schema.{error.validator}",
                message,
                hint,
                details={"schema_path": pointer_join(*error.absolute_schema_path), **details},
            )

    def _explain_required(self, error: ValidationError, pointer: str) -> Iterator[_Explained]:
        properties = error.schema.get("properties", {}) if isinstance(error.schema, dict) else {}
        instance: Any = error.instance
        required: Any = error.validator_value
        for field in required:
            if isinstance(instance, dict) and field not in instance:
                described = self._describe(properties.get(field, True))
                yield (
                    f"{_object_at(pointer)} is missing the required field '{field}'",
                    f"add the field '{field}' ({described}) to {_object_at(pointer)}",
                    {"field": field},
                )

    def _explain_additional(self, error: ValidationError, pointer: str) -> Iterator[_Explained]:
        schema = error.schema if isinstance(error.schema, dict) else {}
        allowed = sorted(schema.get("properties", {}))
        instance: Any = error.instance
        for field in sorted(instance):
            if field in allowed:
                continue
            close = difflib.get_close_matches(field, allowed, n=1)
            fix = f"rename '{field}' to '{close[0]}'" if close else f"remove '{field}'"
            if "extra" in allowed:
                fix += " or move it under 'extra' (a free-form object)"
            yield (
                f"{_object_at(pointer)} has the field '{field}', which is not allowed there",
                f"{fix}; the allowed fields are: {', '.join(allowed) or '(none)'}",
                {"field": field},
            )

    def _explain_enum(self, error: ValidationError, pointer: str) -> Iterator[_Explained]:
        values: Any = error.validator_value
        allowed = list(values)
        close = difflib.get_close_matches(str(error.instance).lower(), [str(v) for v in allowed], n=1)
        suggestion = f" (did you mean {json.dumps(close[0])}?)" if close else ""
        yield (
            f"{_preview(error.instance)} at {_at(pointer)} is not one of {_quote_all(allowed)}",
            f"use one of {_quote_all(allowed)}{suggestion}",
            {},
        )

    def _explain_type(self, error: ValidationError, pointer: str) -> Iterator[_Explained]:
        wanted = self._describe(error.schema)
        found = _TYPE_WORDS[_json_type(error.instance)]
        yield (
            f"{_value_at(pointer)} is {found} ({_preview(error.instance)}) but must be {wanted}",
            f"change {_value_at(pointer)} to {wanted}",
            {},
        )

    def _explain_format(self, error: ValidationError, pointer: str) -> Iterator[_Explained]:
        fmt = str(error.validator_value)
        yield (
            f"{_preview(error.instance)} at {_at(pointer)} is not a valid {fmt}",
            f"write {_FORMAT_EXAMPLES.get(fmt, f'a valid {fmt}')}",
            {},
        )

    def _explain_bound(self, error: ValidationError, pointer: str) -> Iterator[_Explained]:
        side = "below the minimum" if "inimum" in str(error.validator) else "above the maximum"
        yield (
            f"{_preview(error.instance)} at {_at(pointer)} is {side} {error.validator_value}",
            f"use {self._describe(error.schema)}",
            {},
        )

    def _explain_length(self, error: ValidationError, pointer: str) -> Iterator[_Explained]:
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

    def _explain_items_count(self, error: ValidationError, pointer: str) -> Iterator[_Explained]:
        limit = error.validator_value
        bound = "at least" if error.validator == "minItems" else "at most"
        instance: Any = error.instance
        yield (
            f"the list at {_at(pointer)} has {len(instance)} item(s); "
            f"{bound} {limit} required",
            f"give {bound} {limit} items in the list at {_at(pointer)}",
            {},
        )

    def _explain_pattern(self, error: ValidationError, pointer: str) -> Iterator[_Explained]:
        wanted = self._describe(error.schema)
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

    def _explain_alternatives(self, error: ValidationError, pointer: str) -> Iterator[_Explained]:
        wanted = self._describe(error.schema)
        yield (
            f"{_preview(error.instance)} at {_at(pointer)} matches none of the allowed forms ({wanted})",
            f"change {_value_at(pointer)} to {wanted}",
            {},
        )

    def _explain_other(self, error: ValidationError, pointer: str) -> Iterator[_Explained]:
        wanted = self._describe(error.schema)
        yield (
            f"{_preview(error.instance)} at {_at(pointer)} violates '{error.validator}': "
            f"{_preview(error.message)}",
            f"change {_value_at(pointer)} to {wanted}",
            {},
        )

    _EXPLAINERS: ClassVar[dict[str, _Explainer]] = {
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

    # -- describing what a schema wants -------------------------------------------------

    def _resolve(self, schema: dict[str, Any]) -> dict[str, Any]:
        """Follow ``$ref`` chains; keywords next to a ``$ref`` override the referenced ones."""
        layers = []
        current: Any = schema
        while isinstance(current, dict) and "$ref" in current:
            layers.append(current)
            uri = urljoin(self._base_of[id(current)], current["$ref"])
            try:
                current = self._registry.resolver().lookup(uri).contents
            except Unresolvable as exc:
                raise ConfigError(f"schema reference {uri!r} cannot be resolved: {exc}") from exc
        merged = dict(current) if isinstance(current, dict) else {}
        for layer in reversed(layers):
            merged.update((k, v) for k, v in layer.items() if k != "$ref")
        return merged

    def _describe(self, schema: Any) -> str:
        """A short phrase for what a value must be, e.g. 'a number between 0 and 1'."""
        if not isinstance(schema, dict):
            return "any value"
        resolved = self._resolve(schema)
        if "enum" in resolved:
            return f"one of {_quote_all(resolved['enum'])}"
        if "const" in resolved:
            return json.dumps(resolved["const"], ensure_ascii=False)
        alternatives = resolved.get("anyOf") or resolved.get("oneOf")
        if alternatives:
            return " or ".join(self._describe(alt) for alt in alternatives)
        types = resolved.get("type", [])
        types = [types] if isinstance(types, str) else types
        if not types:
            return "any value"
        return " or ".join(self._describe_type(kind, resolved) for kind in types)

    def _describe_type(self, kind: str, schema: dict[str, Any]) -> str:
        if kind == "string":
            return self._describe_string(schema)
        if kind in ("number", "integer"):
            return _TYPE_WORDS[kind] + _describe_bounds(schema)
        if kind == "array":
            items = self._resolve(schema["items"]) if isinstance(schema.get("items"), dict) else {}
            if items.get("type") == "object" and "title" in items:
                text = f"a list of {items['title']} objects"
            else:
                text = f"a list, each item {self._describe(schema.get('items', True))}"
            if "minItems" in schema:
                text += f", at least {schema['minItems']} item(s)"
            return text
        if kind == "object" and "title" in schema:
            return f"{_article(schema['title'])} object"
        return _TYPE_WORDS.get(kind, kind)

    @staticmethod
    def _describe_string(schema: dict[str, Any]) -> str:
        if "format" in schema:
            return _FORMAT_EXAMPLES.get(schema["format"], f"a {schema['format']} string")
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

