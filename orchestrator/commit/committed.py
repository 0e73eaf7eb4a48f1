"""The committed state as every reader gets it: a view the ledger vouches for, or none.

``knowledge-graph.json`` and ``.trig`` are files anyone who can write the session folder can edit:
a claim turned ``"verified": true`` there must never be cited, scored or reported. So each views
flush records in the ledger the sha256 of both files as written, the ledger seq they show, and the
file keys of the stored texts the sources name (:mod:`orchestrator.commit.vouched`).
:func:`read_committed`, the one way ``ask``, ``report``, ``status``, a run and its agents read the
graph, trusts a view only when the ledger vouches for those bytes at the ledger's head and every
stored text is as it was (a text whose key moved is hashed: a copy is fine, a change is not).
Anything else (an edited or deleted view, one behind the ledger, a stored text deleted or altered
after its claims merged) is rebuilt from the ledger, the event log saying why; where the folder
cannot be written, it is refused with a message that says what to run.
"""

from __future__ import annotations

import contextlib
import hashlib
import sqlite3
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from orchestrator.commit.vouched import KIND, file_key, vouched
from orchestrator.contract.sourcetexts import TextStore
from orchestrator.model.errors import SessionDamaged, StoreError, UsageError
from orchestrator.model.layout import SessionPaths
from orchestrator.session.ledger import Ledger

if TYPE_CHECKING:
    from orchestrator.commit.processor import Processor

ATTEMPTS = 3


@dataclass(frozen=True)
class CommittedView:
    """The graph as committed, and what vouches for it."""

    graph: dict[str, Any]
    commit_seq: int
    sha256: str  # of knowledge-graph.json as read
    trig: bytes | None = None  # knowledge-graph.trig as read, when asked for
    rebuilt: str | None = None  # why the view was rebuilt before it was read, if it was
    data: bytes = b""  # knowledge-graph.json as read (the bytes the ledger vouches for)


def moved_texts(paths: SessionPaths, texts: Mapping[str, Any]) -> tuple[list[str], bool]:
    """Stored texts no longer as the view found them (deleted, altered, or restored since), and whether some
    kept their state under another file key (a copied folder: vouched for again as they are)."""
    moved, rekeyed = [], False
    store = TextStore(paths)
    for sha, found in texts.items():
        key, was_intact = (found[0], bool(found[1])) if isinstance(found, list) and len(found) == 2 else (None, None)
        if file_key(paths.source_text(sha)) == key and was_intact is not None:
            continue
        if (store.text(sha) is not None) == was_intact:  # as the flush judges it (commit/views.py)
            rekeyed = True
        else:
            moved.append(sha)
    return moved, rekeyed


def _check(paths: SessionPaths, store: Ledger, want_trig: bool) -> tuple[CommittedView | None, str]:
    """The view if the ledger vouches for it as it is now, else None and why not."""
    head = store.head()
    row = vouched(store, head)
    if row is None:
        return None, f"the ledger vouches for no view of its head (entry {head}): the views lag behind or were " \
                     "written by an older version"
    try:
        data = paths.kg_json.read_bytes()
        trig = paths.kg_trig.read_bytes() if want_trig else None
    except OSError as exc:
        return None, f"{exc.filename or 'a view'} cannot be read ({exc.strerror or exc})"
    sha = hashlib.sha256(data).hexdigest()
    if sha != row.get("json"):
        return None, f"{paths.kg_json.name} is not the view the ledger recorded (it was changed outside cconductor)"
    if not _trig_intact(paths, row, trig):
        return None, f"{paths.kg_trig.name} is not the view the ledger recorded (it was changed outside cconductor)"
    texts: dict[str, Any] = row["texts"] if isinstance(row.get("texts"), dict) else {}
    moved, rekeyed = moved_texts(paths, texts)
    if moved:
        return None, "stored text(s) " + ", ".join(f"sources/{s}.txt" for s in moved) + \
                     " were deleted, altered or restored since the view was written: the evidence resting on them " \
                     "must be counted again"
    keys = {"json": file_key(paths.kg_json), "trig": file_key(paths.kg_trig)}
    if rekeyed or keys != row.get("keys"):  # the same files under other keys (a copied folder): vouched as they are
        with contextlib.suppress(OSError, sqlite3.Error):
            store.put_derived(KIND, [("", head, orjson.dumps({
                **row, "keys": keys, "texts": {sha: [file_key(paths.source_text(sha)), bool(state[1])]
                                               for sha, state in texts.items() if isinstance(state, list)}}).decode())])
    try:
        graph = orjson.loads(data)
    except orjson.JSONDecodeError:
        return None, f"{paths.kg_json.name} is not valid JSON"
    if not isinstance(graph, dict):
        return None, f"{paths.kg_json.name} does not hold a JSON object"
    return CommittedView(graph, head, sha, trig, data=data), ""


def _trig_intact(paths: SessionPaths, row: Mapping[str, Any], trig: bytes | None) -> bool:
    """The TriG view is the one the ledger vouches for: its bytes when read, else its file key as written (a
    reader of the JSON view must not leave an edited TriG file in place either); hashed when the key moved."""
    if trig is not None:
        return hashlib.sha256(trig).hexdigest() == row.get("trig")
    keys = row.get("keys")
    if isinstance(keys, dict) and keys.get("trig") is not None and file_key(paths.kg_trig) == keys["trig"]:
        return True
    try:
        return _file_sha(paths.kg_trig) == row.get("trig")
    except OSError:
        return False


def _file_sha(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _rebuild(paths: SessionPaths, why: str, processor: Processor | None) -> None:
    from orchestrator.commit.processor import Processor
    from orchestrator.commit.views import flush_views

    own = processor is None
    processor = processor if processor is not None else Processor(paths)
    try:
        processor.events.emit("views.rebuilt", f"graph views rebuilt from the ledger before reading them: {why}",
                              reason=why)
        flush_views(processor, rewrite=True)
    finally:
        if own:
            processor.close()


def read_committed(paths: SessionPaths, *, trig: bool = False, rebuild: bool = True,
                   processor: Processor | None = None, empty: bool = False) -> CommittedView:
    """The committed graph (and TriG bytes with ``trig``), rebuilt from the ledger when the view on disk
    is not the one the ledger vouches for; ``processor``: the caller's own, to rebuild with; ``empty``:
    a graph nothing was merged into yet is read too (else it is a usage error: there is nothing to ask)."""
    if not paths.store_db.is_file() and not (empty and processor is not None):
        raise UsageError(f"{paths.root.name} has no knowledge graph yet: run research into it first "
                         "(`cconductor run` or `cconductor process`)")
    try:
        store = Ledger(paths.store_db)
    except (OSError, StoreError) as exc:
        raise SessionDamaged(f"the session's ledger {paths.store_db} cannot be opened ({exc}); the graph can only "
                             "be read from a session folder cconductor may write") from None
    try:
        if store.head() == 0 and not empty:
            raise UsageError(f"{paths.root.name} has no knowledge graph yet: nothing has been merged into it "
                             "(`cconductor run` or `cconductor process`)")
        reasons: list[str] = []
        for _ in range(ATTEMPTS):
            view, why = _check(paths, store, trig)
            if view is not None:
                return CommittedView(view.graph, view.commit_seq, view.sha256, view.trig,
                                     "; ".join(reasons) or None, view.data)
            if not rebuild:
                break
            reasons.append(why)
            try:
                _rebuild(paths, why, processor)
            except OSError as exc:
                raise SessionDamaged(
                    f"{why}; it cannot be rebuilt here ({exc.strerror or exc}): run `cconductor process "
                    f"{paths.root.name}` where the session folder can be written") from None
        raise SessionDamaged(f"{why}; refusing to read it: run `cconductor process {paths.root.name}` to rebuild "
                             "the views from the ledger")
    finally:
        store.close()
