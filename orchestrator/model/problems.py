"""The single record type for every check result (syntax, size, schema, merge, SHACL, evidence)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

Severity = Literal["error", "warning", "info"]


@dataclass(frozen=True)
class Problem:
    """What is wrong, where, which rule, and how to fix it.

    ``file`` is relative to the session folder (e.g. ``artifacts/web/claims.json``) so
    a person or an agent can open it directly; ``pointer`` is an RFC 6901 JSON pointer
    into that file ("" means the whole document).
    """

    file: str | None
    pointer: str
    rule: str
    message: str
    hint: str
    severity: Severity = "error"
    details: Mapping[str, Any] = field(default_factory=dict)

    @property
    def is_error(self) -> bool:
        return self.severity == "error"

    def render(self) -> str:
        where = self.file or "(session)"
        if self.pointer:
            where += f" at {self.pointer}"
        return f"{where}: {self.message} [{self.rule}] Fix: {self.hint}"

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "file": self.file,
            "pointer": self.pointer,
            "rule": self.rule,
            "severity": self.severity,
            "message": self.message,
            "hint": self.hint,
        }
        if self.details:
            data["details"] = dict(self.details)
        return data


def errors(problems: Iterable[Problem]) -> list[Problem]:
    return [p for p in problems if p.is_error]


def pointer_join(*parts: str | int) -> str:
    """Build an RFC 6901 pointer from path parts, escaping ``~`` and ``/``."""
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts)


def quoted(value: object, limit: int = 80) -> str:
    """A value quoted in a message, Python-style: a newline, a tab or an invisible character is shown as its
    escape (``'10.1000/xyz\\n'``), never as whitespace the reader cannot see; cut to ``limit`` characters."""
    text = str(value)
    return repr(text if len(text) <= limit else text[: limit - 1] + "…")
