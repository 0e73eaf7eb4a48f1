"""Session ids sort by time and never collide, even when created in a burst by many processes."""

from __future__ import annotations

import multiprocessing
from pathlib import Path

import pytest

from orchestrator.model.clock import SESSION_ID_RE, new_session_id
from orchestrator.session.record import create_session


def _make(args: tuple[str, int]) -> list[str]:
    root, count = args
    return [create_session(Path(root), "q").root.name for _ in range(count)]


@pytest.mark.slow
def test_thousand_sessions_created_in_parallel_processes_are_distinct(tmp_path: Path) -> None:
    with multiprocessing.get_context("spawn").Pool(8) as pool:
        batches = pool.map(_make, [(str(tmp_path), 125)] * 8)
    ids = [i for batch in batches for i in batch]
    assert len(ids) == 1000 and len(set(ids)) == 1000
    assert all(SESSION_ID_RE.match(i) for i in ids)
    assert len(list(tmp_path.iterdir())) == 1000


def test_ids_sort_by_creation_time() -> None:
    from datetime import UTC, datetime, timedelta

    start = datetime(2026, 1, 1, tzinfo=UTC)
    ids = [new_session_id(start + timedelta(milliseconds=n * 7)) for n in range(200)]
    assert sorted(ids) == ids
