"""Session-independent signatures of rejections, so that one defect is recognised in any session.

A signature keeps what names the broken rule and the kind of file, never what an agent wrote:
for SHACL the shape, property path, constraint components and the shape's datatype / class /
node kind; for JSON Schema the schema path and keyword (and the missing field of ``required``);
for the other merge checks the rule and the field path with array indices removed, keeping only
the keys the file's schema names (:mod:`orchestrator.memory.vocabulary`). Ids, values, snippets,
the agent's name and its own keys never enter it; a problem whose signature would hold anything
else has none.
"""

from __future__ import annotations

import hashlib
import posixpath
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

from orchestrator.memory.vocabulary import field_path, signature_allowed
from orchestrator.model.problems import Problem

#: Rule prefixes whose problems can be learnt from: the artifact parsed, so a diff is possible.
_GENERIC_PREFIXES = ("reference.", "source_text.", "merge.", "citation.", "report.")

#: ``shape IRI -> "datatype=...;class=...;nodeKind=..."`` (empty when the shape has none).
ConstraintLookup = Callable[[str], str]


@dataclass(frozen=True)
class Signature:
    """The generalised identity of a problem; ``key`` is its canonical text, ``id`` its short hash."""

    kind: str  # shacl | schema | rule
    file: str  # artifact file name, e.g. claims.json
    rule: str
    parts: tuple[tuple[str, str], ...]  # the kind-specific fields, in a fixed order

    @property
    def key(self) -> str:
        return "|".join([self.kind, self.file, self.rule, *(f"{k}={v}" for k, v in self.parts)])

    @property
    def id(self) -> str:
        return hashlib.sha256(self.key.encode()).hexdigest()[:16]

    def describe(self) -> str:
        """Short human label, e.g. ``claims.json SHACL ClaimShape-confidence (MaxInclusiveConstraintComponent)``."""
        fields = dict(self.parts)
        if self.kind == "shacl":
            return f"{self.file} SHACL {fields.get('shape', '')} ({fields.get('components', '')})"
        if self.kind == "schema":
            extra = f" '{fields['field']}'" if fields.get("field") else ""
            return f"{self.file} schema {fields.get('keyword', '')}{extra} at {fields.get('at', '')}"
        return f"{self.file} {self.rule} at {fields.get('at', '')}"


def _local(iri: str) -> str:
    return iri.rsplit("#", 1)[-1].rsplit("/", 1)[-1]


def signature_of(problem: Problem, constraint: ConstraintLookup | None = None,
                 shape_paths: frozenset[str] | None = None) -> Signature | None:
    """The signature of an error ``problem``, or None when it cannot be learnt from (syntax, size, a file
    that is no artifact file, anything that is not our schemas', shapes' or rules' own names)."""
    if not problem.is_error or not problem.file:
        return None
    file = posixpath.basename(problem.file)
    details: Mapping[str, Any] = problem.details or {}
    found: Signature | None = None
    if problem.rule.startswith("shacl."):
        shape = str(details.get("shape") or "")
        path = details.get("path")
        # A complex path (sh:alternativePath ...) is a blank node whose label changes every run.
        path_text = str(path) if isinstance(path, str) and re.match(r"^[a-z][a-z0-9+.-]*:", path) else ""
        components = details.get("components") or [problem.rule.removeprefix("shacl.")]
        parts = [("shape", _local(shape)), ("path", path_text),
                 ("components", "+".join(sorted(str(c) for c in components)))]
        if constraint is not None and shape:
            parts.append(("constraint", constraint(shape)))
        found = Signature("shacl", file, problem.rule, tuple(parts))
    elif problem.rule.startswith("schema."):
        parts = [("keyword", problem.rule.removeprefix("schema.")),
                 ("schema_path", str(details.get("schema_path") or "")), ("at", field_path(file, problem.pointer))]
        if problem.rule == "schema.required" and details.get("field"):
            parts.append(("field", str(details["field"])))
        found = Signature("schema", file, problem.rule, tuple(parts))
    elif problem.rule.startswith(_GENERIC_PREFIXES):
        found = Signature("rule", file, problem.rule, (("at", field_path(file, problem.pointer)),))
    if found is None or not signature_allowed(found.kind, found.file, found.rule, found.parts, shape_paths):
        return None
    return found


@cache
def shape_paths() -> frozenset[str]:
    """The property paths (IRIs) the packaged SHACL shapes name: the only ones a signature may hold."""
    from rdflib import URIRef

    from orchestrator.rdf.shacl import SH, shapes

    graph = shapes().graph
    return frozenset(str(p) for p in graph.objects(None, SH.path) if isinstance(p, URIRef))


def shapes_constraint_lookup() -> ConstraintLookup:
    """Read sh:datatype / sh:class / sh:nodeKind of a shape from the packaged shapes graph."""
    from orchestrator.rdf.shacl import SH, shapes

    graph = shapes().graph
    cache: dict[str, str] = {}

    def lookup(shape: str) -> str:
        if shape not in cache:
            from rdflib import URIRef

            node = URIRef(shape)
            found = []
            for name in ("datatype", "class", "nodeKind"):
                values = sorted(_local(str(v)) for v in graph.objects(node, SH[name]))
                if values:
                    found.append(f"{name}={','.join(values)}")
            cache[shape] = ";".join(found)
        return cache[shape]

    return lookup
