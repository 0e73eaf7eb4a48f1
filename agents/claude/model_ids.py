"""What a Claude model id names: its family and version, and which row of a table speaks for it.

Prices and capabilities are tables keyed by model id, and the ids keep coming: a point release
(``claude-opus-5-6``), a new generation of a known family (``claude-fable-5-2``), a dated
snapshot (``claude-haiku-5-5-20261007``). Matching ids by prefix gave ``claude-fable-5-2`` the
row of ``claude-fable-5``; reading the id as family + version and comparing versions does not.
Both ``claude-<family>-<major>[-<minor>]`` and the older ``claude-<major>[-<minor>]-<family>`` are
read; an 8-digit date suffix is a snapshot of the same model.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Generic, TypeVar

__all__ = ["Match", "ModelId", "family_rows", "match_row", "parse_model_id"]

T = TypeVar("T")
_DATE = re.compile(r"^\d{8}$")
_WORD = re.compile(r"^[a-z]+$")


@dataclass(frozen=True, order=True)
class ModelId:
    family: str  # "opus", "sonnet", "haiku", "fable", "mythos", ... ("" when the id names none)
    version: tuple[int, ...]

    def at_or_below(self, other: ModelId) -> bool:
        return self.family == other.family and _padded(self.version) <= _padded(other.version)

    @property
    def label(self) -> str:
        return f"{self.family} {'.'.join(map(str, self.version)) or '?'}"


def _padded(version: tuple[int, ...]) -> tuple[int, ...]:
    return version + (0,) * (4 - len(version))


def parse_model_id(model: str) -> ModelId | None:
    """``claude-fable-5-2`` -> fable (5, 2); ``claude-3-5-haiku-20241022`` -> haiku (3, 5); else None."""
    text = re.sub(r"\[[^\]]*\]$", "", model.strip().lower())  # claude-haiku-5-5[1m]: the same model
    start = text.find("claude-")  # "anthropic.claude-...": a cloud platform's spelling of the same id
    if start < 0 or (start and text[start - 1] not in "./"):
        return None
    text = text[start:]
    words = [w for w in re.split(r"[-@:.]", text.removeprefix("claude-")) if w]
    family = next((w for w in words if _WORD.match(w) and w not in ("v", "latest")), "")
    version: list[int] = []
    for word in words:
        if word.isdigit() and not _DATE.match(word) and len(word) <= 3:
            version.append(int(word))
        elif word == family or _DATE.match(word):
            continue
        elif version and family:
            break  # a qualifier after the version ("-fast", "-v1"): the same model
    return ModelId(family, tuple(version)) if family and version else None


@dataclass(frozen=True)
class Match(Generic[T]):
    """The row a table gives for a model id, and how it was chosen."""

    key: str | None  # the table's row id (None: no row speaks for the id)
    value: T | None
    how: str  # "exact" | "newer" | "family" | "older" | "unknown"

    @property
    def exact(self) -> bool:
        return self.how == "exact"


def family_rows(rows: Mapping[str, T], family: str) -> list[tuple[ModelId, str]]:
    """The rows of ``family`` as (parsed id, key), oldest version first."""
    found = [(parsed, key) for key in rows if (parsed := parse_model_id(key)) and parsed.family == family]
    return sorted(found, key=lambda item: _padded(item[0].version))


def match_row(rows: Mapping[str, T], model: str, *, within_family: str = "nearest") -> Match[T]:
    """Exact id, then the id without its date suffix, then by family and version.

    ``within_family``: ``"nearest"`` (behaviour) takes the newest release at or below the id (the
    oldest release for an id older than all, "older"); ``"current"`` (prices) takes the family's
    newest release. An id newer than every known release always takes the newest ("newer"). An
    unknown family has no row.
    """
    for candidate in (model, re.sub(r"-\d{8}$", "", model)):
        if candidate in rows:
            return Match(candidate, rows[candidate], "exact")
    parsed = parse_model_id(model)
    known = family_rows(rows, parsed.family) if parsed else []
    if parsed is None or not known:
        return Match(None, None, "unknown")
    for other, key in known:
        if _padded(other.version) == _padded(parsed.version):
            return Match(key, rows[key], "exact")  # claude-opus-5-0 is claude-opus-5
    newest_id, newest = known[-1]
    if newest_id.at_or_below(parsed):
        return Match(newest, rows[newest], "newer")
    if within_family == "current":
        return Match(newest, rows[newest], "family")
    below = [key for other, key in known if other.at_or_below(parsed)]
    if not below:
        return Match(known[0][1], rows[known[0][1]], "older")
    return Match(below[-1], rows[below[-1]], "family")
