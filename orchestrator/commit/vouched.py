"""The ledger's word for a view: which bytes of ``knowledge-graph.json`` and ``.trig`` show which commit.

Each views flush records, in the store's ``derived`` table (kind :data:`KIND`, agent "", seq: the
commit the views show), the sha256 of both files as written and, for each stored text the sources
name, its file key and whether it was intact then (:func:`vouch`), and the file keys of both views (a
reader that reads one of them checks the other by its key, hashing it only when the key moved).
Readers compare what they read
with it (orchestrator/commit/committed.py).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import orjson

from orchestrator.contradictions import RULES_VERSION
from orchestrator.model.layout import SessionPaths
from orchestrator.session.ledger import Ledger

KIND = "views"


def file_key(path: os.PathLike[str] | str) -> list[int] | None:
    """(size, mtime, inode, ctime) of a file, None when there is none: a rewrite moves the ctime."""
    try:
        info = os.lstat(path)
    except OSError:
        return None
    return [info.st_size, info.st_mtime_ns, info.st_ino, info.st_ctime_ns]


def text_shas(sources: Iterable[Any]) -> list[str]:
    found = {s.get("content_sha256") for s in sources if isinstance(s, Mapping)}
    return sorted(sha for sha in found if isinstance(sha, str) and len(sha) == 64)


def vouch(store: Ledger, paths: SessionPaths, seq: int, digests: Mapping[str, str], sources: Iterable[Any],
          intact: Callable[[str], bool]) -> None:
    """Record that the views just written show commit ``seq``: their sha256, and each stored text the sources
    name with its file key and whether it was intact (``intact``: as the flush found it).

    Called by the flush inside the views mutex, after both files are in place.
    """
    texts = {sha: [file_key(paths.source_text(sha)), intact(sha)] for sha in text_shas(sources)}
    keys = {"json": file_key(paths.kg_json), "trig": file_key(paths.kg_trig)}  # a reader of one checks the other
    body = orjson.dumps({"commit_seq": seq, **digests, "texts": texts, "keys": keys,
                         "contradiction_rules": RULES_VERSION}).decode()
    store.put_derived(KIND, [("", seq, body)])


def vouched(store: Ledger, head: int) -> dict[str, Any] | None:
    """What the ledger says of the views of commit ``head``, or None when it says nothing of them (or of views
    whose contradictions other detection rules found: :data:`~orchestrator.contradictions.RULES_VERSION`)."""
    body = store.derived_of(KIND, "", head)
    try:
        found = orjson.loads(body) if body is not None else None
    except orjson.JSONDecodeError:
        return None
    if not isinstance(found, dict) or found.get("commit_seq") != head:
        return None
    return found if found.get("contradiction_rules") == RULES_VERSION else None  # the old rules' findings
