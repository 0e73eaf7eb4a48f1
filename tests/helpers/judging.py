"""Judging a session two ways, with the read-ahead helpers and without, to compare what each leaves.

Helpers on: every batch read and judged ahead (``readahead.MIN_BATCH=1``, every read waited for);
off: ``MIN_BATCH=10_000``. The clock is stopped and each way has its own repair memory, so the two
runs' outcomes, events, ledger, views, retry files, archive and error locks must be byte-identical.
``between``: a change after the helpers judged and before the batch; ``during(paths, name)``: a hook
run when the processor starts judging ``name``; ``batches``/``before_batch``: several batches.
"""

from __future__ import annotations

import datetime as dt
import difflib
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest

from orchestrator.commit import evaluation, readahead
from orchestrator.commit.processor import Processor
from orchestrator.commit.views import flush_views
from orchestrator.memory import MEMORY_DIR_ENV
from orchestrator.model import clock
from orchestrator.model.layout import SessionPaths
from orchestrator.session.ledger import Store
from orchestrator.session.record import create_session
from tests.conftest import sample_claim, sample_source

FIXED = dt.datetime(2026, 1, 2, 3, 4, 5, 678000, tzinfo=dt.UTC)
TEXT = ("Page one. Knowledge graphs merged under per-agent namespaces keep every contribution apart, "
        "and 52 percent of merges needed no retry.\fPage two. The ledger did not lose a record.")
QUOTE = "merged under per-agent namespaces keep every contribution apart"
KEYS = ("outcomes", "events", "ledger", "json", "trig", "retries", "archive", "errors")

Hook = Callable[[SessionPaths, str], None]


def alone_files(agent: str, sha: str | None = None, **claim: Any) -> dict[str, Any]:
    source = sample_source("S1", url=f"https://x.org/{agent}")
    if sha:
        source["content_sha256"] = sha
    claims = [sample_claim("C1", "S1", QUOTE, **claim)]
    return {"sources.json": {"sources": [source]}, "claims.json": {"claims": claims}}


def plan_files(*ids: str) -> dict[str, Any]:
    return {"plan.json": {"query": "How?", "sub_questions": [
        {"id": i, "question": f"Why {i}?", "priority": "high"} for i in ids]}}


def commit_pending(session: SessionPaths) -> list[tuple[str, str]]:
    proc = Processor(session)
    try:
        return [(o.agent, o.status) for o in proc.process_pending()]
    finally:
        proc.close()


def run_session(root: Path, monkeypatch: pytest.MonkeyPatch, *, helpers: bool,
         between: Callable[[SessionPaths], None] | None = None, during: Hook | None = None,
         batches: int = 1, before_batch: Callable[[SessionPaths, int], None] | None = None) -> dict[str, Any]:
    paths = SessionPaths(root)
    with monkeypatch.context() as patch:
        patch.setattr(clock, "utc_now", lambda: FIXED)
        patch.setattr(readahead, "MIN_BATCH", 1 if helpers else 10_000)
        patch.setattr(readahead, "WAIT", 60.0)
        patch.setenv(MEMORY_DIR_ENV, str(root.parent.parent / f"memory-{'helpers' if helpers else 'alone'}"))
        adopted = count_adoptions(patch)
        if during is not None:
            stage = evaluation.Evaluation.stage

            def hooked(self: evaluation.Evaluation, name: str) -> Any:
                during(paths, name)
                return stage(self, name)

            patch.setattr(evaluation.Evaluation, "stage", hooked)
        proc = Processor(paths)
        outcomes: list[Any] = []
        try:
            for n in range(batches):
                if before_batch is not None:
                    before_batch(paths, n)
                if between is not None and n == 0:
                    _judge_ahead_then(proc, between, patch)
                outcomes += proc.process_pending()
            flush_views(proc, force=True)
        finally:
            proc.close()
    return {
        "outcomes": [(o.agent, o.status, o.attempt, o.seq, [p.to_dict() for p in o.problems]) for o in outcomes],
        "events": paths.events.read_bytes(),
        "ledger": ledger_bytes(paths),
        "json": paths.kg_json.read_bytes(),
        "trig": paths.kg_trig.read_bytes(),
        "retries": {p.name: p.read_bytes() for p in sorted(root.glob("*.retry-instructions.json"))},
        "archive": sorted(p.name for p in paths.archive.iterdir()) if paths.archive.is_dir() else [],
        "errors": sorted(p.name for p in root.glob("*.kg.lock.error")),
        "adopted": adopted,
    }


def _judge_ahead_then(proc: Processor, between: Callable[[SessionPaths], None], patch: pytest.MonkeyPatch) -> None:
    """The helpers judge the pending locks, then ``between`` changes the session; the next batch uses those reads."""
    names = sorted(p.name.removesuffix(".kg.lock") for p in proc.paths.root.glob("*.kg.lock"))
    proc.readahead.start(names, proc._attempt_bases)
    for future in list(proc.readahead._pending.values()):
        future.result(timeout=300)
    between(proc.paths)
    start = proc.readahead.start
    first = [True]

    def once(names: list[str], bases: Any = None) -> None:
        if first[0]:  # the batch about to start takes the reads made above
            first[0] = False
            return
        start(names, bases)

    patch.setattr(proc.readahead, "start", once)


def _diff(key: str, got: Any, want: Any) -> str:
    if isinstance(got, bytes) and isinstance(want, bytes):
        lines = difflib.unified_diff(want.decode(errors="replace").splitlines(),
                                     got.decode(errors="replace").splitlines(), "without", "with", lineterm="", n=0)
        return f"--- {key}:\n" + "\n".join(list(lines)[:40])
    return f"--- {key}:\n without: {want!r}\n with:    {got!r}"


def both_ways(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, stage: Callable[[SessionPaths], None],
               **options: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    session = create_session(tmp_path / "helpers", "How do agents merge?", "test-mission")
    stage(session)
    copy = tmp_path / "alone" / session.root.name
    shutil.copytree(session.root, copy)
    got = run_session(session.root, monkeypatch, helpers=True, **options)
    want = run_session(copy, monkeypatch, helpers=False, **options)
    differing = [k for k in KEYS if got[k] != want[k]]
    assert not differing, f"adopted={got['adopted']}\n" + "\n".join(_diff(k, got[k], want[k]) for k in differing)
    assert want["adopted"] == []
    return got, want



def ledger_bytes(paths: SessionPaths) -> bytes:
    store = Store(paths.store_db)
    try:
        return orjson.dumps(store.ledger(), default=str)
    finally:
        store.close()


def count_adoptions(patch: pytest.MonkeyPatch) -> list[str]:
    """The agents whose helper judging the processor adopts from now on (evaluation.Evaluation.adopt)."""
    adopted: list[str] = []
    adopt = evaluation.Evaluation.adopt

    def counting(self: evaluation.Evaluation, name: str, *args: Any) -> Any:
        found = adopt(self, name, *args)
        if found is not None:
            adopted.append(name)
        return found

    patch.setattr(evaluation.Evaluation, "adopt", counting)
    return adopted
