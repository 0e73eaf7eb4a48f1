"""The archive is written with the views, from the ledger: whole folders, what is missing, never twice."""

from __future__ import annotations

import json
import os
from pathlib import Path

from orchestrator.commit.archive import Archive, folder_name
from orchestrator.commit.processor import Processor
from orchestrator.commit.views import flush_views
from orchestrator.model.layout import SessionPaths
from orchestrator.session.events import EventLog, read_events
from tests.conftest import sample_claim, sample_source, write_artifacts

FILES = {"sources.json": {"sources": [sample_source("S1", url="https://x.org/a")]},
         "claims.json": {"claims": [sample_claim("C1", "S1")]}}


def _merge(session: SessionPaths, *agents: str) -> Processor:
    for agent in agents:
        write_artifacts(session, agent, FILES)
    proc = Processor(session)
    assert {o.status for o in proc.process_pending()} == {"merged"}
    return proc


def test_a_merge_is_archived_by_the_views_flush_as_its_files_hold_it(session: SessionPaths) -> None:
    proc = _merge(session, "alpha")
    try:
        assert not session.archive.exists() or not any(session.archive.iterdir())  # not on the commit path
        assert flush_views(proc)
        seq = proc.state.records["alpha"]["seq"]
    finally:
        proc.close()
    folder = session.archive / folder_name(seq, "alpha")
    assert sorted(p.name for p in folder.iterdir()) == ["claims.json", "sources.json"]
    for name, content in FILES.items():
        assert json.loads((folder / name).read_text(encoding="utf-8")) == content


def test_a_folder_lost_or_never_written_is_written_by_the_next_process(session: SessionPaths) -> None:
    proc = _merge(session, "alpha", "beta")  # a crash after the commit: no flush, no archive
    proc.close()
    proc = Processor(session)
    try:
        flush_views(proc, force=True)
        names = sorted(p.name for p in session.archive.iterdir())
        assert [n.split("-", 1)[1] for n in names] == ["alpha", "beta"]
        kept = session.archive / names[0]
        before = os.stat(kept / "claims.json").st_mtime_ns
        for path in (session.archive / names[1]).iterdir():
            path.unlink()
        (session.archive / names[1]).rmdir()
    finally:
        proc.close()
    proc = Processor(session)
    try:
        flush_views(proc, force=True)
    finally:
        proc.close()
    assert sorted(p.name for p in session.archive.iterdir()) == names
    assert os.stat(kept / "claims.json").st_mtime_ns == before  # what is there is never written again


def test_a_folder_another_process_wrote_first_stands(session: SessionPaths, tmp_path: Path) -> None:
    record = {"seq": 7, "raw": {"claims.json": {"claims": []}}}
    first, second = Archive(session), Archive(session)
    first._listed(), second._listed()  # both listed the folder before either wrote
    events = EventLog(session.events, session.events_mutex)
    assert first.write_missing({"alpha": record}, events) == 1
    assert second.write_missing({"alpha": {**record, "raw": {"claims.json": {"claims": [1]}}}}, events) == 1
    folder = session.archive / folder_name(7, "alpha")
    assert json.loads((folder / "claims.json").read_text(encoding="utf-8")) == {"claims": []}
    assert [p.name for p in session.archive.iterdir()] == [folder.name]  # no staging folder left behind
    assert not [e for e in read_events(session.events) if e["type"] == "archive.failed"]


def test_a_staging_folder_left_by_a_stopped_process_is_removed_once_stale(session: SessionPaths) -> None:
    session.archive.mkdir(parents=True)
    stale, fresh = session.archive / ".000001-alpha-dead", session.archive / ".000002-beta-busy"
    for folder in (stale, fresh):
        folder.mkdir()
        (folder / "claims.json").write_text("{}", encoding="utf-8")
    os.utime(stale, (1, 1))
    Archive(session)._listed()
    assert not stale.exists() and fresh.exists()  # another process may still be writing the fresh one
