"""Materialized views of the committed graph: ``knowledge-graph.json`` and ``.trig``.

Always complete, parseable committed states (atomic replace), lagging the last commit
by at most about a flush interval under load, and flushed before a processor exits.
A marker records which commit the files show, so a slower process never replaces
newer views with older ones.
"""

from __future__ import annotations

import contextlib
import gc
import itertools
import json
import os
import threading
import time
import weakref
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from orchestrator.commit import trig_bytes
from orchestrator.commit.archive import Archive
from orchestrator.commit.json_view import JsonFragments, whole
from orchestrator.commit.view_blocks import TrigBlocks
from orchestrator.graph.contradiction_summary import emit_contradiction_events
from orchestrator.graph.contradictions import ConflictCache
from orchestrator.graph.unified import Recheck, build_views
from orchestrator.graph.unified_cache import UnifiedCache, segments
from orchestrator.model.clock import iso_timestamp
from orchestrator.model.errors import SessionGone
from orchestrator.model.layout import SessionPaths
from orchestrator.rdf.contradictions import contradiction_graph
from orchestrator.rdf.write import trig_block
from orchestrator.session.atomic import atomic_write_bytes, atomic_write_json
from orchestrator.session.mutex import SessionMutex

if TYPE_CHECKING:
    from orchestrator.commit.processor import Processor


#: One TriG block cache per processor: each flush renders only the agents merged since the last one.
_TRIG_BLOCKS: weakref.WeakKeyDictionary[Processor, TrigBlocks] = weakref.WeakKeyDictionary()
#: And one conflict cache: each flush compares only the claims that changed since the last one.
_CONFLICT_CACHES: weakref.WeakKeyDictionary[Processor, ConflictCache] = weakref.WeakKeyDictionary()
#: And one cache of each agent's rendered namespace in ``knowledge-graph.json``.
_JSON_FRAGMENTS: weakref.WeakKeyDictionary[Processor, JsonFragments] = weakref.WeakKeyDictionary()
#: And one of each agent's unified claims and relationships, rebuilt when what they read changed.
_UNIFIED: weakref.WeakKeyDictionary[Processor, UnifiedCache] = weakref.WeakKeyDictionary()
#: Seconds a views flush waits, at most, for a burst of locks to be judged (ViewFlusher).
MAX_LAG = 5.0
#: The archive folders each processor knows are there (commit/archive.py).
_ARCHIVES: weakref.WeakKeyDictionary[Processor, Archive] = weakref.WeakKeyDictionary()


_REPLACED = itertools.count()


def _marker(processor: Processor) -> dict[str, object]:
    try:
        data = json.loads(processor.paths.view_marker.read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def views_seq(processor: Processor) -> int:
    try:
        return int(_marker(processor)["commit_seq"])  # type: ignore[call-overload]
    except (KeyError, TypeError, ValueError):
        return -1


def _fingerprints(processor: Processor) -> list[list[int] | None]:
    """(size, mtime) of each view file: a view changed by anyone but the flush is rebuilt."""
    found: list[list[int] | None] = []
    for view in (processor.paths.kg_json, processor.paths.kg_trig):
        try:
            info = view.stat()
        except OSError:
            found.append(None)
            continue
        found.append([info.st_size, info.st_mtime_ns])
    return found


def views_intact(processor: Processor) -> bool:
    return _marker(processor).get("files") == _fingerprints(processor)


def _rechecker(processor: Processor) -> Recheck:
    """Check a snippet again against a source's new text (the evidence rules of orchestrator/evidence.py)."""
    from orchestrator.graph.evidence import verify_snippet

    def recheck(evidence: dict[str, Any], sha: str) -> dict[str, Any] | None:
        text = processor.texts.text(sha)
        if text is None:
            return None
        page = (evidence.get("locator") or {}).get("page")
        result = verify_snippet(str(evidence.get("snippet", "")), text, page if isinstance(page, int) else None)
        return {**result.to_dict(), "text_sha256": sha}

    return recheck


def _load_conflicts(processor: Processor) -> ConflictCache:
    """The last process's contradiction search, so a new process compares only what changed since."""
    try:
        return ConflictCache.from_json(orjson.loads(processor.paths.conflict_cache.read_bytes()))
    except (OSError, orjson.JSONDecodeError):
        return ConflictCache()


def _write_views(paths: SessionPaths, body: bytes | Iterable[bytes], trig: bytes | list[bytes]) -> None:
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

    def write_trig() -> None:
        try:
            atomic_write_bytes(paths.kg_trig, trig, root=paths.root)
        except BaseException as exc:  # raised in the flushing thread below
            failed.append(exc)

    worker = threading.Thread(target=write_trig, name="cconductor-trig")
    worker.start()
    try:
        atomic_write_bytes(paths.kg_json, body, root=paths.root)
    finally:
        worker.join()
        threading.Thread(target=_unlink, args=(replaced,), name="cconductor-unlink", daemon=True).start()
    if failed:
        raise failed[0]


def _unlink(files: list[Path]) -> None:
    for path in files:
        with contextlib.suppress(OSError):
            path.unlink()


def _whole_body(graph: dict[str, Any], records: dict[str, Any]) -> bytes:
    """The view in one piece. orjson: the same indented, UTF-8 JSON as the json module, ~30x faster
    (the C encoder json uses is bypassed as soon as indent is set)."""
    complete = whole(graph, records)
    try:
        return orjson.dumps(complete, option=orjson.OPT_INDENT_2) + b"\n"
    except TypeError:  # a value orjson cannot write (an integer beyond 64 bits merged by an older version)
        return json.dumps(complete, indent=2, ensure_ascii=False).encode() + b"\n"


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    """A flush allocates a view's worth of objects (~500,000 at 50 MB) that all live until it ends:
    the cyclic collector would scan them two or three times for nothing (~60 ms of a 50 MB flush)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def flush_views(processor: Processor, *, force: bool = False) -> bool:
    """Write both views if they are behind the in-memory graph. Returns True if written."""
    with _collector_paused():
        return _flush(processor, force)


def _flush(processor: Processor, force: bool) -> bool:
    if not force and views_seq(processor) >= processor.state.head_seq and views_intact(processor):
        return False  # before reading the records: a processor starts with none loaded
    with processor.lock:
        seq = processor.state.head_seq
        records = processor.state.records.load_all()
    paths = processor.paths
    conflicts = _CONFLICT_CACHES.get(processor) or _load_conflicts(processor)
    unified = _UNIFIED.get(processor)
    # Namespaces deferred: each is written from its rendering kept for the record (JsonFragments).
    if unified is None:  # a processor's first flush (a one-shot run's only one) keeps no per-agent parts
        _UNIFIED[processor] = UnifiedCache()
        graph = build_views(records, processor.session_id, seq, iso_timestamp(), recheck=_rechecker(processor),
                            conflicts=conflicts, namespaces=False)
    else:
        graph = unified.build(records, processor.session_id, seq, iso_timestamp(), recheck=_rechecker(processor),
                              conflicts=conflicts, text_ready=lambda sha: processor.texts.text(sha) is not None,
                              namespaces=False)
    _CONFLICT_CACHES[processor] = conflicts
    _ARCHIVES.setdefault(processor, Archive(paths)).write_missing(records, processor.events)  # before the views
    fragments = _JSON_FRAGMENTS.get(processor) or _JSON_FRAGMENTS.setdefault(processor, JsonFragments(processor.store))
    body = fragments.pieces(graph, records, segments(unified) if unified is not None else None) \
        or _whole_body(graph, records)
    with processor.lock:  # the blocks read the graph state; joining them needs no lock
        blocks = _TRIG_BLOCKS.setdefault(processor, TrigBlocks()).keyed_blocks(processor, records)
    derived = contradiction_graph(graph["contradictions"])  # derived like the JSON view, never stored
    if derived.triples:
        blocks.append((str(derived.graph_iri), trig_block(derived).encode()))
    trig = trig_bytes.pieces(processor.session_id, blocks)
    detected = {c["id"]: c for c in graph["contradictions"] if c.get("detected")}
    with SessionMutex(paths.state / "views.mutex"):
        if not force and views_seq(processor) > seq:
            return False
        shown_before = _marker(processor).get("contradictions")
        try:
            _write_views(paths, body, trig)
        except TypeError:  # a value orjson cannot write, met while streaming the pieces: both again, whole
            _write_views(paths, _whole_body(graph, records), trig)
        # not fsynced: only a shortcut, checked claim by claim (a damaged file means a full search)
        atomic_write_bytes(paths.conflict_cache, orjson.dumps(conflicts.to_json()), durable=False,
                           root=paths.root)
        atomic_write_json(paths.view_marker, {"commit_seq": seq, "written_at": iso_timestamp(),
                                              "files": _fingerprints(processor), "contradictions": sorted(detected)},
                          root=paths.root)
    emit_contradiction_events(processor.events, shown_before if isinstance(shown_before, list) else [], detected)
    return True


class ViewFlusher:
    """Background thread: after a commit, refresh the views at most every ``interval`` seconds.

    ``busy()``: the processor has more locks in hand (a burst). A flush then waits until it is not,
    for at most :data:`MAX_LAG` seconds: a flush competes with judging for the interpreter and
    the processor's lock, and a burst is over sooner if its views are written once, at its end.
    """

    def __init__(self, processor: Processor, interval: float = 0.5, busy: Callable[[], bool] | None = None):
        self.processor = processor
        self.interval = interval
        self.busy = busy or (lambda: False)
        self._dirty = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="cconductor-views", daemon=True)
        self.error: BaseException | None = None

    def start(self) -> None:
        self._thread.start()

    def mark_dirty(self) -> None:
        self._dirty.set()

    def _run(self) -> None:
        while not self._stop.is_set():
            if not self._dirty.wait(timeout=0.2):
                continue
            lagging_since = time.monotonic()
            while self.busy() and time.monotonic() - lagging_since < MAX_LAG and not self._stop.wait(0.05):
                pass
            self._dirty.clear()
            started = time.monotonic()
            if not self.processor.paths.root.is_dir():
                continue  # the session folder is gone: never re-create it
            try:
                flush_views(self.processor)
            except SessionGone:
                continue  # the watcher stops (it checks the folder itself): nothing to write, nowhere to say it
            except Exception as exc:  # the watcher must keep running; the event log says why
                self.error = exc
                with contextlib.suppress(SessionGone):
                    self.processor.events.emit("views.failed", f"could not write graph views: {exc}",
                                               error=repr(exc))
            # Rate limit, but never delay stop(). A flush competes with merges for the interpreter,
            # so on a big graph wait at least as long as the flush took: merges keep >= half the time.
            self._stop.wait(max(self.interval, time.monotonic() - started))

    def abandon(self) -> None:
        """Stop without writing anything (the session folder is gone)."""
        self._stop.set()
        self._thread.join(timeout=30)

    def stop(self) -> None:
        """Stop the thread and write the final views synchronously."""
        self._stop.set()
        self._thread.join(timeout=30)
        flush_views(self.processor)
