"""Materialized views of the committed graph: ``knowledge-graph.json`` and ``.trig``.

Always complete, parseable committed states (atomic replace), lagging the last commit
by at most about a flush interval under load, and flushed before a processor exits.
A marker records which commit the files show, so a slower process never replaces
newer views with older ones. A processor owns one :class:`Views`, which keeps what a flush
may reuse at the next one (each agent's TriG block and JSON namespace, its unified parts, the
contradiction search, the archive folders present), keyed by the agent's committed record.
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import json
import os
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, Protocol

import orjson

from orchestrator.commit import trig_bytes
from orchestrator.commit.archive import Archive
from orchestrator.commit.context import JudgingContext
from orchestrator.commit.json_view import JsonFragments, whole
from orchestrator.commit.view_blocks import TrigBlocks
from orchestrator.commit.vouched import vouch
from orchestrator.contradictions import RULES_VERSION, ConflictCache
from orchestrator.contradictions.summary import emit_contradiction_events
from orchestrator.graph.unified import Recheck
from orchestrator.graph.unified_cache import UnifiedCache, overrides, segments
from orchestrator.model.clock import iso_timestamp
from orchestrator.model.layout import SessionPaths
from orchestrator.model.records import Record
from orchestrator.rdf.contradictions import contradiction_graph
from orchestrator.rdf.write import trig_block
from orchestrator.session.atomic import atomic_write_bytes, atomic_write_json
from orchestrator.session.mutex import SessionMutex

__all__ = ["Views", "conflict_rows_kind", "flush_views", "text_rechecker", "views_intact", "views_seq"]

_REPLACED = itertools.count()


class Views:
    """The views of one processor's graph, and what each flush keeps for the next one."""

    def __init__(self, context: JudgingContext, lock: threading.RLock) -> None:
        self.context = context
        self.lock = lock  # the processor's: held while the graph is read
        self.trig_blocks = TrigBlocks(context)
        self.json_fragments = JsonFragments(context.ledger)
        self.archive = Archive(context.paths)
        #: the contradiction search, kept between flushes (loaded from the last process's at the first)
        self.conflicts: ConflictCache | None = None
        #: each agent's unified claims and relationships as the last flush built them (None before the first)
        self.unified: UnifiedCache | None = None
        self._flushed = False

    def flush(self, *, force: bool = False, rewrite: bool = False) -> bool:
        """Write both views if they are behind the in-memory graph. Returns True if written.

        ``rewrite``: write them even if they look current (a reader found bytes the ledger does not vouch
        for), but, unlike ``force``, never over newer views another process wrote.
        """
        context, paths, graph_now = self.context, self.context.paths, self.context.graph
        if not (force or rewrite) and views_seq(paths) >= graph_now.head_seq and views_intact(paths) \
                and _marker(paths).get("contradiction_rules") == RULES_VERSION:
            return False  # before reading the records: a processor starts with none loaded
        with self.lock:
            seq = graph_now.head_seq
            records = graph_now.state.records.load_all()
        conflicts = self.conflicts if self.conflicts is not None else _load_conflicts(context)
        recheck = _rechecker(context)
        text_ready = texts_intact(context)
        # Namespaces deferred: each is written from its rendering kept for the record (JsonFragments).
        unified = self.unified = self.unified or UnifiedCache()
        graph = unified.build(records, context.session_id, seq, iso_timestamp(), recheck=recheck,
                              conflicts=conflicts, text_ready=text_ready, namespaces=False)
        # a processor's first flush (a one-shot run's only one) keeps no rendered segments: nothing reuses them
        kept = segments(unified) if self._flushed else None
        self._flushed = True
        self.conflicts = conflicts
        self.archive.write_missing(records, context.events)  # before the views
        body = self.json_fragments.pieces(graph, records, kept) or _whole_body(graph, records)
        with self.lock:  # the blocks read the graph state; joining them needs no lock
            blocks = self.trig_blocks.keyed_blocks(records, overrides(unified))
        derived = contradiction_graph(graph["contradictions"])  # derived like the JSON view, never stored
        if derived.triples:
            blocks.append((str(derived.graph_iri), trig_block(derived).encode()))
        trig = trig_bytes.pieces(context.session_id, blocks)
        detected = {c["id"]: c for c in graph["contradictions"] if c.get("detected")}
        with SessionMutex(paths.state / "views.mutex"):
            if not force and views_seq(paths) > seq:
                return False
            shown_before = _marker(paths).get("contradictions")
            try:
                digests = _write_views(paths, body, trig)
            except TypeError:  # a value orjson cannot write, met while streaming the pieces: both again, whole
                digests = _write_views(paths, _whole_body(graph, records), trig)
            vouch(context.ledger, paths, seq, digests, graph["sources"], text_ready)
            atomic_write_json(paths.view_marker, {"commit_seq": seq, "written_at": iso_timestamp(),
                                                  "contradiction_rules": RULES_VERSION,
                                                  "files": _fingerprints(paths), "contradictions": sorted(detected)},
                              root=paths.root)
        _save_conflicts(context, conflicts, records)
        emit_contradiction_events(context.events, shown_before if isinstance(shown_before, list) else [], detected)
        return True


class ViewsOwner(Protocol):
    """A processor, as far as writing its views goes."""

    views: Views


def flush_views(processor: ViewsOwner, *, force: bool = False, rewrite: bool = False) -> bool:
    """Write the processor's views if they are behind its graph (:meth:`Views.flush`). Returns True if written."""
    return processor.views.flush(force=force, rewrite=rewrite)


def _marker(paths: SessionPaths) -> dict[str, object]:
    try:
        data = json.loads(paths.view_marker.read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def views_seq(paths: SessionPaths) -> int:
    """The commit the views on disk show (-1: none, or unknown)."""
    try:
        return int(_marker(paths)["commit_seq"])  # type: ignore[call-overload]
    except (KeyError, TypeError, ValueError):
        return -1


def _fingerprints(paths: SessionPaths) -> list[list[int] | None]:
    """(size, mtime) of each view file: a view changed by anyone but the flush is rebuilt."""
    found: list[list[int] | None] = []
    for view in (paths.kg_json, paths.kg_trig):
        try:
            info = view.stat()
        except OSError:
            found.append(None)
            continue
        found.append([info.st_size, info.st_mtime_ns])
    return found


def views_intact(paths: SessionPaths) -> bool:
    """The view files are the ones the last flush wrote (nobody changed them since)."""
    return _marker(paths).get("files") == _fingerprints(paths)


def _rechecker(context: JudgingContext) -> Recheck:
    return text_rechecker(context.texts.text)


def text_rechecker(text_of: Callable[[str], str | None]) -> Recheck:
    """Check a snippet again against a source's new text (the evidence rules of graph/evidence.py);
    ``text_of``: the stored text of a sha256, None when it cannot be read (a flush's text store, the viewer's)."""
    from orchestrator.graph.evidence import verify_snippet

    def recheck(evidence: dict[str, Any], sha: str) -> dict[str, Any] | None:
        text = text_of(sha)
        if text is None:
            return None
        page = (evidence.get("locator") or {}).get("page")
        result = verify_snippet(str(evidence.get("snippet", "")), text, page if isinstance(page, int) else None)
        return {**result.to_dict(), "text_sha256": sha}

    return recheck


#: The contradiction search as a new process needs it, by agent record, in the ledger's ``derived`` table.
def conflict_rows_kind() -> str:
    """The rows' kind, with the rules' version in it: rows another version's rules wrote are not read back."""
    return f"conflict-topics-v{RULES_VERSION}"


def texts_intact(context: JudgingContext) -> Callable[[str], bool]:
    """Whether a stored text is there and matches its name now (a verification resting on one that is not
    stops counting)."""
    def intact(sha: str) -> bool:
        return context.texts.text(sha) is not None

    return intact


def _load_conflicts(context: JudgingContext) -> ConflictCache:
    """A new process's search, seeded with what the views kept beside each record: it analyses and
    compares only the claims whose record or entities changed since (orchestrator/contradictions/search.py)."""
    cache = ConflictCache()
    for _, body in context.ledger.derived(conflict_rows_kind()).values():
        with contextlib.suppress(orjson.JSONDecodeError, TypeError, ValueError):
            saved = orjson.loads(body)
            if isinstance(saved, dict):
                cache.seed_from(saved)
    return cache


def _save_conflicts(context: JudgingContext, conflicts: ConflictCache, records: Mapping[str, Record]) -> None:
    """Keep beside each agent's record what the search saw of its claims, when that changed; and forget it
    for the agents no longer in the graph: a rollback may bring a record back, but not what the others
    found with it since."""
    rows = [(agent, int(seq), orjson.dumps(row).decode())
            for agent, row in conflicts.take_saved().items()
            if agent in records and isinstance(seq := records[agent].get("seq"), int)]
    if rows:
        context.ledger.put_derived(conflict_rows_kind(), rows, drop_absent=True)


#: Bytes joined before hashing: hashlib holds the GIL on a piece under 2 KiB (most of a view's pieces), so
#: hashing them one by one kept the two files' writers from hashing side by side on two cores.
_HASH_CHUNK = 1 << 20


def _hashed(pieces: bytes | Iterable[bytes], digest: Any) -> Iterator[bytes]:
    """The pieces joined into chunks of about :data:`_HASH_CHUNK` bytes, each added to ``digest`` as it goes."""
    chunk: list[bytes] = []
    size = 0
    for piece in [pieces] if isinstance(pieces, bytes) else pieces:
        chunk.append(piece)
        size += len(piece)
        if size >= _HASH_CHUNK:
            joined = b"".join(chunk)
            chunk, size = [], 0
            digest.update(joined)
            yield joined
    if chunk:
        joined = b"".join(chunk)
        digest.update(joined)
        yield joined


def _write_views(paths: SessionPaths, body: bytes | Iterable[bytes], trig: bytes | list[bytes]) -> dict[str, str]:
    """Both files at once: copying and fsyncing 50 MB release the GIL, so two cores write them side by
    side. The replaced files are kept as a link and unlinked by a background thread afterwards: freeing
    the old file's blocks inside the replace was ~25 ms of a 50 MB flush."""
    for stale in paths.state.glob(".replaced-*"):  # left by a process that stopped before its thread ran
        with contextlib.suppress(OSError):
            stale.unlink()
    replaced = []
    for view in (paths.kg_json, paths.kg_trig):
        kept = paths.state / f".replaced-{os.getpid()}-{next(_REPLACED)}-{view.name}"
        with contextlib.suppress(OSError):  # no such file yet, or no hard links here: replaced in place
            os.link(view, kept)
            replaced.append(kept)
    failed: list[BaseException] = []
    digests = {"json": hashlib.sha256(), "trig": hashlib.sha256()}

    def write_trig() -> None:
        try:
            atomic_write_bytes(paths.kg_trig, _hashed(trig, digests["trig"]), shared=True, root=paths.root)
        except BaseException as exc:  # raised in the flushing thread below
            failed.append(exc)

    worker = threading.Thread(target=write_trig, name="cconductor-trig")
    worker.start()
    try:
        atomic_write_bytes(paths.kg_json, _hashed(body, digests["json"]), shared=True, root=paths.root)
    finally:
        worker.join()
        threading.Thread(target=_unlink, args=(replaced,), name="cconductor-unlink", daemon=True).start()
    if failed:
        raise failed[0]
    return {name: digest.hexdigest() for name, digest in digests.items()}


def _unlink(files: list[Path]) -> None:
    for path in files:
        with contextlib.suppress(OSError):
            path.unlink()


def _whole_body(graph: dict[str, Any], records: Mapping[str, Record]) -> bytes:
    """The view in one piece. orjson: the same indented, UTF-8 JSON as the json module, ~30x faster
    (the C encoder json uses is bypassed as soon as indent is set)."""
    complete = whole(graph, records)
    try:
        return orjson.dumps(complete, option=orjson.OPT_INDENT_2) + b"\n"
    except TypeError:  # a value orjson cannot write (an integer beyond 64 bits merged by an older version)
        return json.dumps(complete, indent=2, ensure_ascii=False).encode() + b"\n"
