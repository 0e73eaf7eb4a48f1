"""A real Watcher in a thread, waiting for what it should bring about, and the ledger it writes.

Shared by the watcher, concurrency and malformed-corpus tests:

    with running_watcher(processor, rescan_interval=3600) as (watcher, thread):
        ...
        wait_for(lambda: "agent" in merged(session), "the agent to merge")
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from orchestrator.commit.processor import Processor
from orchestrator.commit.watcher import Watcher
from orchestrator.model.layout import SessionPaths

TIMEOUT = 30.0


def wait_for(predicate: Callable[[], bool], what: str, timeout: float = TIMEOUT, *, poll: float = 0.02) -> None:
    """Return once ``predicate()`` holds; fail naming ``what`` after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(poll)


@contextmanager
def running_watcher(
    processor: Processor, *, stop_timeout: float = TIMEOUT, **options: Any
) -> Iterator[tuple[Watcher, threading.Thread]]:
    """``Watcher(processor, **options)`` running in a thread, ready; stopped and joined on leaving."""
    watcher = Watcher(processor, **options)
    thread = threading.Thread(target=watcher.run, name="test-watcher", daemon=True)
    thread.start()
    try:
        assert watcher.ready.wait(TIMEOUT), "the watcher did not start"
        yield watcher, thread
    finally:
        watcher.stop()
        thread.join(stop_timeout)
    assert not thread.is_alive(), "the watcher thread did not stop (observer or flusher hanging)"


def ledger(paths: SessionPaths) -> list[tuple[str, str]]:
    """(agent, action) of every ledger entry, in commit order."""
    with sqlite3.connect(paths.store_db, timeout=30) as db:
        return db.execute("SELECT agent, action FROM ledger ORDER BY seq").fetchall()


def merged(paths: SessionPaths) -> set[str]:
    """The agents the ledger records a merge for."""
    return {agent for agent, action in ledger(paths) if action == "merge"}
