"""Artifact files asked of the model as ONE output tool, and its answer split back into files.

An :class:`OutputSpec` turns one or more artifact files into a single tool whose ``input_schema``
is the union of the files' JSON Schemas (inlined by :mod:`agents.claude.schema_inline`). Each file
owns distinct top-level keys, so a JSON pointer means the same in the tool input and in the file,
and the answer is validated with the orchestrator's own :class:`SchemaRegistry`: what the agent
writes is exactly what the orchestrator will accept.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from agents.claude.schema_inline import inlined_schema
from orchestrator.contract.schemas import SchemaRegistry

__all__ = ["OutputSpec"]


@dataclass(frozen=True)
class OutputSpec:
    """Artifact files obtained together through one output tool."""

    tool_name: str
    files: tuple[str, ...]
    description: str
    required: tuple[str, ...] | None = None  # top-level keys the model must give (default: the schemas')

    def _schemas(self) -> list[tuple[str, dict[str, Any]]]:
        return [(f, inlined_schema(f.removesuffix(".json"))) for f in self.files]

    def keys_of(self, file: str) -> list[str]:
        schema = inlined_schema(file.removesuffix(".json"))
        return [k for k in schema.get("properties", {}) if k != "extra"]

    def input_schema(self) -> dict[str, Any]:
        properties: dict[str, Any] = {}
        required: list[str] = []
        for file, schema in self._schemas():
            for key, value in schema.get("properties", {}).items():
                if key != "extra":
                    properties[key] = {
                        **value,
                        "description": f"({file}) {value.get('description', '')}".strip(),
                    }
            required += [k for k in schema.get("required", []) if k not in required]
        if self.required is not None:
            required = list(self.required)
        return {
            "type": "object",
            "additionalProperties": False,
            "properties": properties,
            "required": required,
        }

    def tool(self, *, strict: bool = False) -> dict[str, Any]:
        tool: dict[str, Any] = {
            "name": self.tool_name,
            "description": self.description,
            "input_schema": self.input_schema(),
        }
        if strict:
            tool["strict"] = True
        return tool

    def split(self, data: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
        """The tool input as artifact files; a file none of whose keys was given is left out."""
        out = {}
        for file in self.files:
            part = {k: data[k] for k in self.keys_of(file) if k in data}
            if part:
                out[file] = part
        return out

    def validate(self, data: Any) -> list[str]:
        if not isinstance(data, dict):
            return [f"the input must be a JSON object, not {type(data).__name__}"]
        known = {k for f in self.files for k in self.keys_of(f)}
        problems = [
            f"the top-level key '{k}' is not allowed; use only: {', '.join(sorted(known))}"
            for k in sorted(set(data) - known)
        ]
        required = self.required if self.required is not None else self.input_schema()["required"]
        problems += [f"the required top-level key '{k}' is missing" for k in required if k not in data]
        registry = SchemaRegistry.default()
        for file, part in self.split(data).items():
            problems += [p.render() for p in registry.validate_artifact(file, part, file) if p.is_error]
        return problems
