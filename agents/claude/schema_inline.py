"""Our artifact JSON Schemas made self-contained for the Messages API.

The schemas in ``schemas/`` share definitions through ``$ref``s to ``common.schema.json``; the API
accepts only a self-contained ``input_schema``, so every ``$ref`` is replaced by its target here
(recursion refused, ``$schema``/``$id``/``$defs``/``examples`` dropped). The result is built once
per schema and every caller gets its own copy, because an output tool's schema is edited per call.
"""

from __future__ import annotations

import json
from functools import cache
from typing import Any

from orchestrator.model.layout import resource_dir

__all__ = ["inlined_schema"]

_DROP_KEYS = frozenset({"$schema", "$id", "$defs", "examples"})


@cache
def _schema_file(name: str) -> dict[str, Any]:
    path = resource_dir("schemas") / name
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def _pointer_get(document: Any, pointer: str) -> Any:
    for part in pointer.lstrip("/").split("/") if pointer.strip("/") else []:
        document = document[part.replace("~1", "/").replace("~0", "~")]
    return document


def _inline(node: Any, base: str, seen: tuple[str, ...]) -> Any:
    if isinstance(node, list):
        return [_inline(item, base, seen) for item in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    ref = node.get("$ref")
    if isinstance(ref, str):
        file, _, pointer = ref.partition("#")
        file = file or base
        key = f"{file}#{pointer}"
        if key in seen:
            raise ValueError(f"recursive $ref {key} cannot be inlined")
        out.update(_inline(_pointer_get(_schema_file(file), pointer), file, (*seen, key)))
    for key, value in node.items():
        if key != "$ref" and key not in _DROP_KEYS:
            out[key] = _inline(value, base, seen)
    return out


@cache
def _inlined(name: str) -> str:
    return json.dumps(_inline(_schema_file(f"{name}.schema.json"), f"{name}.schema.json", ()))


def inlined_schema(name: str) -> dict[str, Any]:
    """``schemas/<name>.schema.json`` with every ``$ref`` replaced by its target (a fresh copy)."""
    data: dict[str, Any] = json.loads(_inlined(name))
    return data
