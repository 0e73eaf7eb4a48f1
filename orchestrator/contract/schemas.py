"""The JSON Schema registry: validates artifacts and internal documents into :class:`Problem` lists.

Schemas are loaded, checked and compiled once per process; every reference between them is
resolved here. Turning a schema error into a message an agent can act on is
:mod:`orchestrator.contract.schema_messages`' job.

Two validators, one verdict. Nearly every document is valid, and the Python ``jsonschema`` spends
~1 ms on a small claims file (most of an agent's reading). So a document is first checked by
``jsonschema-rs`` (compiled, ~200x faster), given exactly our format rules (formats.py); when it
says valid, the document is valid. Anything else (an error, or a value it cannot take, such as a
lone surrogate) goes to ``jsonschema``, which decides and explains every error with its JSON
pointer, as before. The fast check can only let through what is valid: tests/test_schema_fast.py
holds both validators to the same verdict on mutated artifacts. ``jsonschema`` itself is imported
only when a document is invalid (~50 ms a one-shot run need not pay).
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar
from urllib.parse import urljoin

from orchestrator.contract.formats import FORMATS, format_checker
from orchestrator.contract.patterns import extended
from orchestrator.model.errors import ConfigError
from orchestrator.model.layout import resource_dir
from orchestrator.model.problems import Problem

if TYPE_CHECKING:
    from jsonschema.protocols import Validator
    from referencing import Registry

SCHEMA_SUFFIX = ".schema.json"
#: Holds shared ``$defs`` only; it is never a document schema.
COMMON_SCHEMA = "common"
#: Schemas chosen by an artifact's file name (``claims.json`` -> ``claims``).
ARTIFACT_SCHEMAS = frozenset(
    {
        "completion", "sources", "entities", "claims", "relationships", "gaps", "plan",
        "key-findings", "confidence-scores", "coverage", "contradictions", "report-outline",
        "sections", "figures", "tables", "captions",
    }
)


class SchemaRegistry:
    """All schemas of one folder, cross-referenced and compiled into validators."""

    _default: ClassVar[SchemaRegistry | None] = None
    _default_lock: ClassVar[threading.Lock] = threading.Lock()

    def __init__(self, directory: Path, *, check: bool = True) -> None:
        self._directory = directory
        schemas = self._load(directory, check)
        missing = sorted(ARTIFACT_SCHEMAS - schemas.keys())
        if missing:
            raise ConfigError(
                f"the schema folder {directory} lacks {', '.join(m + SCHEMA_SUFFIX for m in missing)}; "
                "reinstall cconductor or restore the files from the repository"
            )
        self._schemas = {name: schema for name, schema in schemas.items() if name != COMMON_SCHEMA}
        self._fast: dict[str, Any] = {}  # jsonschema-rs validators, compiled on first use (:meth:`_fast_validator`)
        self._fast_registry: Any = None
        self._slow: dict[str, Validator] = {}
        self._registry: Registry[Any] | None = None
        self._base_of: dict[int, str] = {}
        self._lock = threading.Lock()
        self._all = schemas

    @classmethod
    def default(cls) -> SchemaRegistry:
        """The process-wide registry over the packaged schemas, built on first use."""
        with cls._default_lock:
            if cls._default is None:
                # The packaged schemas are checked against the meta-schema by the test suite
                # (tests/test_schemas.py); checking them again on every start cost ~80 ms.
                cls._default = cls(resource_dir("schemas"), check=False)
            return cls._default

    @staticmethod
    def _load(directory: Path, check: bool = True) -> dict[str, dict[str, Any]]:
        schemas: dict[str, dict[str, Any]] = {}
        for path in sorted(directory.glob("*" + SCHEMA_SUFFIX)):
            try:
                schema = json.loads(path.read_text(encoding="utf-8"))
                if check:
                    _check_schema(schema)
            except (OSError, ValueError) as exc:
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
        from orchestrator.contract.schema_messages import not_an_object

        return [not_an_object(filename, data, file, self.artifact_file_names())]

    def validate_document(self, schema_name: str, data: Any, file: str | None) -> list[Problem]:
        """Check an internal document (session, event, retry-instructions, knowledge-graph, ...)."""
        if schema_name not in self._schemas:
            raise ConfigError(
                f"there is no schema named {schema_name!r} in {self._directory} (expected "
                f"{schema_name}{SCHEMA_SUFFIX}); known schemas: {', '.join(sorted(self._schemas))}"
            )
        return self._validate(schema_name, data, file)

    def _validate(self, name: str, data: Any, file: str | None) -> list[Problem]:
        fast = self._fast_validator(name)
        if fast is not None:
            try:
                if fast.is_valid(data):
                    return []
            except Exception:  # a value it cannot take (a lone surrogate): jsonschema decides
                pass
        from orchestrator.contract.schema_messages import problems_for

        return problems_for(self._slow_validator(name).iter_errors(data), file, self._resolve)

    def _fast_validator(self, name: str) -> Any:
        """``jsonschema-rs``'s validator for ``name``, compiled on first use; None leaves it to jsonschema.

        Why on first use: a one-shot ``process`` validates two or three of the ~30 schemas, and
        compiling them all took ~15 ms of its start-up.
        """
        if name in self._fast:
            return self._fast[name]
        with self._lock:
            if name in self._fast:
                return self._fast[name]
            try:
                import jsonschema_rs

                if self._fast_registry is None:
                    self._fast_registry = jsonschema_rs.Registry(
                        [(schema["$id"], schema) for schema in self._all.values()])
                found = jsonschema_rs.Draft202012Validator(
                    self._schemas[name], registry=self._fast_registry, formats=dict(FORMATS), validate_formats=True,
                    offline=True)
            except Exception:  # not installed, or a schema it cannot compile: jsonschema alone validates it
                found = None
            self._fast[name] = found
            return found

    def _slow_validator(self, name: str) -> Validator:
        """``jsonschema``'s validator for ``name`` (with the reference registry), built on first need."""
        with self._lock:
            if name not in self._slow:
                from jsonschema import Draft202012Validator
                from referencing import Registry
                from referencing.jsonschema import DRAFT202012

                if self._registry is None:
                    self._registry = Registry().with_resources(
                        (schema["$id"], DRAFT202012.create_resource(schema)) for schema in self._all.values())
                    for schema in self._all.values():
                        self._index_bases(schema, schema["$id"])
                self._slow[name] = extended(Draft202012Validator)(self._schemas[name], registry=self._registry,
                                                                  format_checker=format_checker())
            return self._slow[name]

    def _resolve(self, schema: dict[str, Any]) -> dict[str, Any]:
        """Follow ``$ref`` chains; keywords next to a ``$ref`` override the referenced ones."""
        from referencing.exceptions import Unresolvable

        assert self._registry is not None  # built with the validator whose error is being explained
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


def _check_schema(schema: dict[str, Any]) -> None:
    """Raise ValueError if ``schema`` is not a valid Draft 2020-12 schema."""
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import SchemaError

    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as exc:
        raise ValueError(str(exc)) from exc
