"""What may cross sessions in the repair memory: the schemas' own field paths and a fixed list of edit kinds.

The memory is shared by every session of a user, and what it holds is quoted in later retry
instructions, to LLM agents among others. So nothing an agent wrote may enter it: a field path keeps
only the keys the artifact's JSON Schema names (``claims[].evidence[].page``); a key the schema does
not name (anything under the free-form ``extra``, an injected ``SYSTEM_OVERRIDE_...``) becomes ``*``
and nothing under it is kept. An edit is one of :data:`EDIT_KINDS`. :func:`repair_allowed` and
:func:`signature_allowed` check a stored item against these rules again when it is read, so an item
written by an older version, or by hand, is never quoted unless it passes them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from functools import cache
from typing import Any

from orchestrator.contract.schemas import ARTIFACT_SCHEMAS
from orchestrator.model.layout import resource_dir

#: Artifact file names the memory may name.
ARTIFACT_FILES = frozenset(f"{name}.json" for name in ARTIFACT_SCHEMAS)
JSON_TYPES = ("null", "boolean", "integer", "number", "string", "array", "object")
#: Every kind of edit a repair may describe (orchestrator/memory/diff.py makes no other).
EDIT_KINDS = frozenset(
    {"added", "removed", "item added", "item removed", "filled in", "emptied", "whitespace trimmed", "case changed",
     "prefix removed", "suffix removed", "shortened to a part", "prefix added", "suffix added", "replaced", "flipped",
     "value lowered", "value raised"}
    | {f"type changed ({a} to {b})" for a in JSON_TYPES for b in JSON_TYPES if a != b})
#: The word that stands for a key the schema does not name (and everything under it).
UNNAMED = "*"
_RULE = re.compile(r"^[a-z][a-z0-9_]{0,40}(?:\.[A-Za-z][A-Za-z0-9_]{0,63}){1,3}$")
_SCHEMA_PATH = re.compile(r"^(?:/[A-Za-z0-9_$]{1,64}){0,24}$")
_SHAPE = re.compile(r"^[A-Za-z][A-Za-z0-9_-]{0,63}$")
_COMPONENTS = re.compile(r"^[A-Za-z]{1,64}ConstraintComponent(?:\+[A-Za-z]{1,64}ConstraintComponent){0,7}$")
_CONSTRAINT = re.compile(r"^(?:(?:datatype|class|nodeKind)=[A-Za-z0-9_,#:-]{1,120})?(?:;(?:datatype|class|nodeKind)="
                         r"[A-Za-z0-9_,#:-]{1,120}){0,2}$")
_IRI = re.compile(r"^[a-z][a-z0-9+.-]{0,20}:[A-Za-z0-9/#._~:-]{1,200}$")


@cache
def _schemas() -> dict[str, dict[str, Any]]:
    folder = resource_dir("schemas")
    return {path.name: json.loads(path.read_text(encoding="utf-8")) for path in sorted(folder.glob("*.schema.json"))}


def _resolve(node: Any, file: str) -> tuple[Any, str]:
    """Follow ``$ref`` (within a file or to another schema file) to the schema that says what is allowed."""
    for _ in range(16):
        if not isinstance(node, dict) or "$ref" not in node:
            break
        target, _, fragment = str(node["$ref"]).partition("#")
        file = target or file
        node = _schemas().get(file, {})
        for part in fragment.strip("/").split("/") if fragment.strip("/") else ():
            node = node.get(part.replace("~1", "/").replace("~0", "~"), {}) if isinstance(node, dict) else {}
    return node, file


def _children(node: Any, file: str, key: str | None) -> list[tuple[Any, str]]:
    """The sub-schemas for property ``key`` (None: the items of an array), through oneOf / anyOf / allOf."""
    node, file = _resolve(node, file)
    if not isinstance(node, dict):
        return []
    found: list[tuple[Any, str]] = []
    if key is None and "items" in node:
        found.append(_resolve(node["items"], file))
    if key is not None and isinstance(node.get("properties"), dict) and key in node["properties"]:
        found.append(_resolve(node["properties"][key], file))
    for combinator in ("oneOf", "anyOf", "allOf"):
        for option in node.get(combinator) or ():
            found += _children(option, file, key)
    return found


def _root(file: str) -> list[tuple[Any, str]]:
    schema = f"{file.removesuffix('.json')}.schema.json"
    return [(_schemas()[schema], schema)] if file in ARTIFACT_FILES and schema in _schemas() else []


def _step(nodes: list[tuple[Any, str]], key: str | None) -> list[tuple[Any, str]]:
    return [child for node, base in nodes for child in _children(node, base, key)]


def field_path(file: str, pointer: str) -> str:
    """``/claims/3/evidence/0/snippet`` in ``claims.json`` -> ``claims[].evidence[].snippet``.

    Array indices become ``[]``; a key the file's schema does not name becomes :data:`UNNAMED`, and
    nothing under it is kept; so does any key of a file that is no artifact file.
    """
    nodes = _root(file)
    out = ""
    for raw in pointer.split("/")[1:] if pointer else []:
        part = raw.replace("~1", "/").replace("~0", "~")
        index = part.isascii() and part.isdigit()
        nodes = _step(nodes, None if index else part)
        if not nodes:
            return out + ("." if out else "") + UNNAMED
        out += "[]" if index else ("." if out else "") + part
    return out


def path_allowed(file: str, path: str) -> bool:
    """Whether ``path`` is one :func:`field_path` can give for ``file`` (``(file)``: the whole file)."""
    if path == "(file)":
        return True
    nodes = _root(file)
    segments = path.split(".")
    for n, segment in enumerate(segments):
        if segment == UNNAMED:
            return n == len(segments) - 1 and bool(nodes)
        arrays = 0
        while segment.endswith("[]"):
            segment, arrays = segment[:-2], arrays + 1
        if "[" in segment or "]" in segment or (not segment and n) or not nodes:
            return False
        if segment:
            nodes = _step(nodes, segment)
        for _ in range(arrays):
            nodes = _step(nodes, None)
        if not nodes:
            return False
    return True


def repair_allowed(file: str, repair: str) -> bool:
    """Whether a stored repair is made only of ``file``'s schema paths and edit kinds of the fixed list."""
    parts = repair.split("; ")
    if not 1 <= len(parts) <= 3:
        return False
    for part in parts:
        path, sep, kind = part.partition(": ")
        if not sep or kind not in EDIT_KINDS or not path_allowed(file, path):
            return False
    return True


def signature_allowed(kind: str, file: str, rule: str, parts: Iterable[tuple[str, str]],
                      shape_paths: frozenset[str] | None = None) -> bool:
    """Whether a signature holds only what the memory may keep (names of our rules, schemas and shapes)."""
    if file not in ARTIFACT_FILES or not _RULE.fullmatch(rule):
        return False
    fields = dict(parts)
    if kind == "shacl":
        return (set(fields) <= {"shape", "path", "components", "constraint"} and bool(_SHAPE.fullmatch(fields["shape"]))
                and bool(_COMPONENTS.fullmatch(fields.get("components", "")))
                and (fields.get("path", "") == "" or (bool(_IRI.fullmatch(fields["path"]))
                                                      and (shape_paths is None or fields["path"] in shape_paths)))
                and bool(_CONSTRAINT.fullmatch(fields.get("constraint", ""))))
    if kind == "schema":
        field = fields.get("field")
        return (set(fields) <= {"keyword", "schema_path", "at", "field"} and rule == f"schema.{fields['keyword']}"
                and bool(_SCHEMA_PATH.fullmatch(fields.get("schema_path", ""))) and path_allowed(file, fields["at"])
                and (field is None or path_allowed(file, _join(fields["at"], field))))
    if kind == "rule":
        return set(fields) == {"at"} and path_allowed(file, fields["at"])
    return False


def _join(path: str, field: str) -> str:
    return f"{path}.{field}" if path else field
