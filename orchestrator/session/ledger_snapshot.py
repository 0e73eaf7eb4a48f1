"""Reading the ledger without writing a byte into the session folder (the viewer's read path).

:class:`~orchestrator.session.ledger.Store` opens the database for writing: it takes the init
mutex, switches to WAL and creates missing tables. Even SQLite's ``mode=ro`` creates the
``-wal`` and ``-shm`` files of a WAL database that has none and leaves them behind. A reader
that must leave the folder exactly as it found it therefore opens the file as *immutable* when
no writer has it open (no ``-wal`` file: no locks, no side files), and read-only, joining the
writer's shared memory, when one has (the files exist already; WAL readers never block a writer).
"""

from __future__ import annotations

import json
import os
import sqlite3
import stat
import urllib.parse
from pathlib import Path
from typing import Any

from orchestrator.session.ledger_schema import LAST_DECISIONS, REJECTED_LAST
from orchestrator.session.record_rows import loads

_COLUMNS = ("seq", "agent", "action", "artifact_sha256", "attempt", "committed_at", "detail")


def _regular(path: Path) -> bool:
    """True for a regular file or nothing at all (no link followed)."""
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except FileNotFoundError:
        return True
    except OSError:
        return False


def _query(path: Path, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]] | None:
    """Rows of one query, read without a byte written; None when the store cannot be read now."""
    found = _queries(path, [(sql, params)])
    return None if found is None else found[0]


def _queries(path: Path, queries: list[tuple[str, tuple[Any, ...]]]) -> list[list[tuple[Any, ...]]] | None:
    """The rows of each query, read in one transaction (one state of the store) without a byte written."""
    if not all(_regular(p) for p in (path, Path(f"{path}-wal"), Path(f"{path}-shm"))):
        return None  # a FIFO in place of the store or its side files would block SQLite's open
    if not path.is_file():
        return None
    quoted = urllib.parse.quote(str(path.resolve()))
    active = Path(f"{path}-wal").exists()
    uri = f"file:{quoted}?mode=ro" if active else f"file:{quoted}?immutable=1"
    try:
        db = sqlite3.connect(uri, uri=True, timeout=0.5, isolation_level=None)
    except sqlite3.Error:
        return None
    try:
        db.execute("BEGIN")
        return [db.execute(sql, params).fetchall() for sql, params in queries]
    except sqlite3.Error:
        return None
    finally:
        db.close()


def read_ledger_snapshot(path: Path) -> list[dict[str, Any]] | None:
    """The ledger entries (as :meth:`Store.ledger` gives them), or None when it cannot be read now.

    None covers a missing store, one written by nothing yet, and a store that a writer
    checkpointed while an immutable read was under way (the caller shows what it had).
    """
    rows = _query(path, f"SELECT {', '.join(_COLUMNS)} FROM ledger ORDER BY seq")
    if rows is None:
        return None
    entries = []
    for row in rows:
        entry = dict(zip(_COLUMNS, row, strict=True))
        try:
            entry["detail"] = json.loads(row[6]) if row[6] else {}
        except ValueError:
            entry["detail"] = {}
        entries.append(entry)
    return entries


def read_derived_snapshot(path: Path, kind: str, agent: str = "") -> tuple[int, Any] | None:
    """The newest derived row of ``kind`` for ``agent`` as (seq, body), or None (none, or unreadable now)."""
    rows = _query(path, "SELECT seq, body FROM derived WHERE kind = ? AND agent = ? ORDER BY seq DESC LIMIT 1",
                  (kind, agent))
    return (int(rows[0][0]), rows[0][1]) if rows else None


def ledger_readable(path: Path) -> bool:
    """True when the store exists and its ledger can be read now (not missing, damaged or replaced)."""
    return _query(path, "SELECT MAX(seq) FROM ledger") is not None


def read_rejected_last(path: Path) -> set[str] | None:
    """The agents whose last merge or rejection is a rejection (:meth:`Ledger.rejected_last`), or None when
    the store cannot be read now."""
    rows = _query(path, REJECTED_LAST)
    return None if rows is None else {str(agent) for (agent,) in rows}


def read_last_decisions(path: Path) -> dict[str, tuple[int, str, int | None, dict[str, Any]]]:
    """Each agent's last merge or rejection (:meth:`Ledger.last_decisions`); empty when the store cannot be read."""
    found: dict[str, tuple[int, str, int | None, dict[str, Any]]] = {}
    for agent, seq, action, attempt, detail in _query(path, LAST_DECISIONS) or ():
        try:
            parsed = loads(detail)
        except ValueError:
            parsed = {}
        found[str(agent)] = (int(seq), str(action), attempt, parsed if isinstance(parsed, dict) else {})
    return found


def read_current_records(path: Path) -> tuple[int, dict[str, dict[str, Any]]] | None:
    """(the ledger's head, each agent's current record whole) as one state of the store, read without a byte
    written: what a views flush builds the graph from. None when the store cannot be read now."""
    found = _queries(path, [("SELECT COALESCE(MAX(seq), 0) FROM ledger", ()),
                            ("SELECT c.agent, r.record FROM current c JOIN records r ON r.seq = c.record_seq"
                             " ORDER BY c.agent", ())])
    if found is None:
        return None
    try:
        records = {str(agent): loads(body) for agent, body in found[1]}
    except ValueError:
        return None
    if not all(isinstance(r, dict) for r in records.values()):
        return None
    return int(found[0][0][0]), records
