"""A document's stored objects: figure images (``sources/<sha256>.png``) and table cells (``sources/<sha256>.json``).

Like the source texts, they are named by the SHA-256 of their bytes and refused when they are not:
a table's cells are what a quoted value is checked against, and a figure's image is what a
report shows and a vision model describes. The cells are a JSON object ``{"label": str,
"header": [str], "rows": [[str]]}`` (:func:`parse_table`).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from orchestrator.contract.artifacts import ArtifactSet
from orchestrator.contract.safe_read import UnsafeFile, read_agent_file
from orchestrator.contract.sourcetexts import TextStore
from orchestrator.model.inputs import InputFile
from orchestrator.model.layout import SessionPaths
from orchestrator.model.problems import Problem, pointer_join

__all__ = ["MAX_IMAGE_BYTES", "MAX_TABLE_BYTES", "TableData", "object_reader", "parse_table",
           "stored_object_problems"]

MAX_IMAGE_BYTES = 16 * 1024 * 1024
MAX_TABLE_BYTES = 2 * 1024 * 1024
#: Image formats a report can show and a vision model can read, by their first bytes.
IMAGE_SIGNATURES = {b"\x89PNG\r\n\x1a\n": "image/png", b"\xff\xd8\xff": "image/jpeg"}
_CELLS_HINT = '; the cells are {"label": str, "header": [str], "rows": [[str]]}'
#: (collection, field, suffix) of each stored object an item names.
_FIELDS = (("figures", "image_sha256", ".png"), ("tables", "data_sha256", ".json"))


class TableData:
    """A table's cells as stored: its header row and its body rows (every cell a string)."""

    def __init__(self, label: str, header: list[str], rows: list[list[str]]):
        self.label, self.header, self.rows = label, header, rows

    def lines(self) -> list[str]:
        """Row 0 is the header, then each body row: its cells joined by " | " (what a snippet quotes)."""
        return [" | ".join(self.header)] + [" | ".join(row) for row in self.rows]


def parse_table(text: str) -> TableData:
    """The cells of a stored table; raises ValueError saying what is wrong with the JSON."""
    data = json.loads(text)
    if not isinstance(data, dict):
        raise ValueError("it is not a JSON object")
    header, rows = data.get("header"), data.get("rows")
    if not isinstance(header, list) or not all(isinstance(c, str) for c in header):
        raise ValueError("'header' is not a list of strings")
    if not isinstance(rows, list) or not all(isinstance(r, list) and all(isinstance(c, str) for c in r)
                                             for r in rows):
        raise ValueError("'rows' is not a list of lists of strings")
    return TableData(str(data.get("label") or ""), header, rows)


def _named(artifact_set: ArtifactSet) -> Iterator[tuple[InputFile, str, int, str, str, Mapping[str, Any]]]:
    for art in artifact_set.files:
        for collection, key, suffix in _FIELDS:
            values = art.data.get(collection)
            for position, item in enumerate(values if isinstance(values, list) else []):
                sha = item.get(key) if isinstance(item, Mapping) else None
                if isinstance(sha, str):
                    yield art, collection, position, key, suffix, item


def _image_problem(texts: TextStore, sha: str) -> str | None:
    shown = f"sources/{sha}.png"
    try:
        data = read_agent_file(texts.paths.root, texts.paths.stored_object(sha, ".png"), MAX_IMAGE_BYTES, shown=shown)
    except UnsafeFile as exc:
        return f"{exc} ({exc.hint})"
    if len(data) > MAX_IMAGE_BYTES:
        return f"{shown} is larger than {MAX_IMAGE_BYTES // (1024 * 1024)} MiB; store a smaller rendering"
    if hashlib.sha256(data).hexdigest() != sha:
        return f"{shown} does not match its name: its content's sha256 differs"
    if not any(data.startswith(sig) for sig in IMAGE_SIGNATURES):
        return f"{shown} is not a PNG or JPEG image"
    return None


def _table_problem(texts: TextStore, sha: str) -> str | None:
    text, reason = texts.stored(sha, ".json")
    if text is None:
        return reason
    if len(text.encode("utf-8")) > MAX_TABLE_BYTES:
        return f"sources/{sha}.json is larger than {MAX_TABLE_BYTES // (1024 * 1024)} MiB"
    try:
        parse_table(text)
    except ValueError as exc:
        return f"sources/{sha}.json does not hold a table ({exc})"
    return None


def stored_object_problems(artifact_set: ArtifactSet, texts: TextStore) -> list[Problem]:
    """A problem for each figure image or table data that is missing, misnamed or malformed."""
    problems = []
    for art, collection, position, key, suffix, item in _named(artifact_set):
        sha = str(item[key])
        reason = _image_problem(texts, sha) if suffix == ".png" else _table_problem(texts, sha)
        if reason:
            what = "image" if suffix == ".png" else "cells"
            problems.append(Problem(
                art.rel, pointer_join(collection, position, key), "stored_object.invalid",
                f"{key} of {collection[:-1]} {item.get('id')!r} is unusable: {reason}",
                f"write the {collection[:-1]}'s {what} to sources/<sha256 of its bytes>{suffix} (beside, then rename "
                f"into place) and put that sha256 in {key}, or drop {key}"
                + (_CELLS_HINT if suffix == ".json" else ""),
            ))
    return problems


def object_reader(paths: SessionPaths) -> Callable[[str, str], bytes | None]:
    """``read(sha256, suffix)``: a stored image or table's bytes, only when they match their name (else None)."""

    def read(sha: str, suffix: str) -> bytes | None:
        if not (len(sha) == 64 and all(c in "0123456789abcdef" for c in sha)):
            return None
        try:
            data = read_agent_file(paths.root, paths.stored_object(sha, suffix), MAX_IMAGE_BYTES)
        except UnsafeFile:
            return None
        return data if hashlib.sha256(data).hexdigest() == sha else None

    return read
