"""How a record is stored in and read back from the ledger's SQLite tables.

Kept apart from the store itself: these are the encoding rules (what a loaded record leaves in
the store, how it is written and parsed), the store is the transactions around them.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import orjson

#: Parts of a record left in the store when the graph is loaded, fetched when read.
LEFT_IN_STORE = ("raw", "namespace")
#: The derived kind holding each record without them, written with the record: loading reads it as
#: it is (``json_remove`` of the two, for records committed before, parses and writes every record).
CORE = "core"
#: SQL giving a record's core from ``records r`` and its ``derived d`` core row (when cached).
CORE_SQL = "COALESCE(d.body, json_remove(r.record, '$.raw', '$.namespace'))"


class StoredRecord(dict[str, Any]):
    """A current record read without ``raw`` (the artifact files as submitted) and ``namespace``
    (the agent's merged files, which only the JSON view shows): together half its size.

    Archiving and ``validate`` read ``raw``, and the view renders each namespace once per record
    (kept rendered in ``derived``): ``record["raw"]`` or ``record["namespace"]`` fetches it then.
    """

    def __init__(self, fetch: Callable[[int], dict[str, Any] | None], data: dict[str, Any]) -> None:
        super().__init__(data)
        self._fetch = fetch

    def __missing__(self, key: str) -> Any:
        full = self._fetch(self["seq"]) if key in LEFT_IN_STORE and "seq" in self else None
        if full is None or key not in full:
            raise KeyError(key)
        self[key] = full[key]
        return full[key]


def core_of(record: dict[str, Any]) -> bytes:
    return dumps({k: v for k, v in record.items() if k not in LEFT_IN_STORE})


def dumps(value: Any) -> bytes:
    """orjson writes a record ~10x faster; json writes what orjson refuses (integers beyond 64 bits)."""
    try:
        return orjson.dumps(value)
    except TypeError:
        return json.dumps(value, ensure_ascii=False).encode()


def loads(text: str | bytes) -> Any:
    """orjson parses a record ~3x faster; json reads what orjson refuses (NaN, integers beyond 64 bits)."""
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return json.loads(text)
