"""The commit point: a SQLite ledger of merges and rejections, and every merged record.

Why SQLite and not ``knowledge-graph.json`` itself: a commit must cost what the change
costs, not what the whole graph costs (rewriting a 50 MB JSON file takes longer than
half a second). SQLite gives atomic, durable, crash-safe transactions for one small
write per merge; ``knowledge-graph.json`` and ``.trig`` are views materialized from it.
History is never deleted, so any earlier state can be audited and restored.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
from filelock import FileLock

from orchestrator.model.errors import StoreError

_SCHEMA = """
CREATE TABLE IF NOT EXISTS ledger (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    agent TEXT NOT NULL,
    action TEXT NOT NULL CHECK (action IN ('merge', 'reject', 'rollback')),
    artifact_sha256 TEXT,
    attempt INTEGER,
    committed_at TEXT NOT NULL,
    detail TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX IF NOT EXISTS ledger_agent ON ledger(agent);
CREATE TABLE IF NOT EXISTS records (
    seq INTEGER PRIMARY KEY REFERENCES ledger(seq),
    agent TEXT NOT NULL,
    record TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS current (
    agent TEXT PRIMARY KEY,
    record_seq INTEGER REFERENCES records(seq),
    changed_seq INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS derived (
    kind TEXT NOT NULL,
    agent TEXT NOT NULL,
    seq INTEGER NOT NULL,
    body TEXT NOT NULL,
    PRIMARY KEY (kind, agent, seq)
);
"""


@dataclass(frozen=True)
class LedgerEntry:
    """One thing to commit. ``record`` is set for merges (the agent's new namespace)."""

    agent: str
    action: str
    artifact_sha256: str | None
    attempt: int | None
    committed_at: str
    detail: dict[str, Any]
    record: dict[str, Any] | None = None
    #: derived data of ``record`` (kind -> body) cached with it, in the same transaction
    derived: Mapping[str, str | bytes] | None = None


class Store:
    def __init__(self, path: Path):
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._lock = threading.RLock()
        try:
            # Two processes opening a new session at once (two watchers, say) must not race on
            # switching to WAL or creating tables: SQLite may answer that with an immediate "busy".
            with FileLock(path.parent / f"{path.name}.init-mutex"):
                self._db = sqlite3.connect(path, isolation_level=None, check_same_thread=False, timeout=30)
                if self._db.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
                    self._db.execute("PRAGMA journal_mode=WAL")
                self._db.execute("PRAGMA synchronous=FULL")
                self._db.executescript(_SCHEMA)
        except sqlite3.DatabaseError as exc:
            raise StoreError(
                f"the session store {path} cannot be opened ({exc}); it is internal state: "
                "move the .cconductor folder aside and re-drop the agents' locks to rebuild"
            ) from exc

    def close(self) -> None:
        with self._lock:
            self._db.close()

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._db
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    def head(self) -> int:
        with self._lock:
            row = self._db.execute("SELECT COALESCE(MAX(seq), 0) FROM ledger").fetchone()
        return int(row[0])

    def commit(self, entries: Sequence[LedgerEntry]) -> list[int]:
        """Group commit: all entries become durable together, or none do."""
        seqs: list[int] = []
        with self._transaction() as db:
            for entry in entries:
                cursor = db.execute(
                    "INSERT INTO ledger(agent, action, artifact_sha256, attempt, committed_at, detail)"
                    " VALUES (?, ?, ?, ?, ?, ?)",
                    (
                        entry.agent,
                        entry.action,
                        entry.artifact_sha256,
                        entry.attempt,
                        entry.committed_at,
                        json.dumps(entry.detail, ensure_ascii=False),
                    ),
                )
                seq = int(cursor.lastrowid or 0)
                seqs.append(seq)
                derived = dict(entry.derived or {})
                if entry.record is not None:
                    record = {**entry.record, "seq": seq}
                    db.execute(
                        "INSERT INTO records(seq, agent, record) VALUES (?, ?, ?)",
                        (seq, entry.agent, json.dumps(record, ensure_ascii=False)),
                    )
                    derived[_CORE] = _dumps({k: v for k, v in record.items() if k not in _LEFT_IN_STORE})
                    db.execute(
                        "INSERT INTO current(agent, record_seq, changed_seq) VALUES (?, ?, ?)"
                        " ON CONFLICT(agent) DO UPDATE SET record_seq = excluded.record_seq,"
                        " changed_seq = excluded.changed_seq",
                        (entry.agent, seq, seq),
                    )
                for kind, body in derived.items():
                    db.execute("DELETE FROM derived WHERE kind = ? AND agent = ?", (kind, entry.agent))
                    db.execute("INSERT INTO derived(kind, agent, seq, body) VALUES (?, ?, ?, ?)",
                               (kind, entry.agent, seq, body))
        return seqs

    def current_changes(self, since: int = 0, *, cached: bool = True) -> dict[str, dict[str, Any] | None]:
        """Each agent whose namespace changed after ``since``, with its current record (None if removed).

        ``cached=False`` reads every record itself, never its stored core (``validate`` checks the truth).
        """
        with self._lock:
            rows = self._db.execute(
                "SELECT c.agent, COALESCE(d.body, json_remove(r.record, '$.raw', '$.namespace')) FROM current c"
                " LEFT JOIN records r ON r.seq = c.record_seq"
                " LEFT JOIN derived d ON d.kind = ? AND d.agent = c.agent AND d.seq = c.record_seq"
                " WHERE c.changed_seq > ? ORDER BY c.agent",
                (_CORE if cached else None, since),
            ).fetchall()
        return {agent: (_Record(self, _loads(record)) if record else None) for agent, record in rows}

    def attempts(self, agent: str) -> int:
        with self._lock:
            row = self._db.execute(
                "SELECT COUNT(*) FROM ledger WHERE agent = ? AND action IN ('merge', 'reject')", (agent,)
            ).fetchone()
        return int(row[0])

    def last_entry(self, agent: str) -> dict[str, Any] | None:
        with self._lock:
            row = self._db.execute(
                "SELECT seq, action, artifact_sha256, attempt FROM ledger"
                " WHERE agent = ? AND action IN ('merge', 'reject') ORDER BY seq DESC LIMIT 1",
                (agent,),
            ).fetchone()
        if row is None:
            return None
        return {"seq": row[0], "action": row[1], "artifact_sha256": row[2], "attempt": row[3]}

    def ledger(self) -> list[dict[str, Any]]:
        with self._lock:
            rows = self._db.execute(
                "SELECT seq, agent, action, artifact_sha256, attempt, committed_at, detail FROM ledger ORDER BY seq"
            ).fetchall()
        keys = ("seq", "agent", "action", "artifact_sha256", "attempt", "committed_at", "detail")
        return [{**dict(zip(keys, row, strict=True)), "detail": json.loads(row[6])} for row in rows]

    def record(self, seq: int) -> dict[str, Any] | None:
        with self._lock:
            row = self._db.execute("SELECT record FROM records WHERE seq = ?", (seq,)).fetchone()
        return json.loads(row[0]) if row else None

    # -- derived data: a cache of what a record renders to (views), never the source of truth --
    def derived(self, kind: str) -> dict[str, tuple[int, Any]]:
        """agent -> (record seq, body) of the ``kind`` rendering of each agent's current record."""
        with self._lock:
            rows = self._db.execute(
                "SELECT d.agent, d.seq, d.body FROM derived d JOIN current c"
                " ON c.agent = d.agent AND c.record_seq = d.seq WHERE d.kind = ?", (kind,)).fetchall()
        return {agent: (seq, body) for agent, seq, body in rows}

    def put_derived(self, kind: str, rows: Sequence[tuple[str, int, str | bytes]]) -> None:
        """Cache renderings (agent, record seq, body: text or bytes, read back as given), dropping that
        agent's older ones."""
        with self._transaction() as db:
            for agent, seq, body in rows:
                db.execute("DELETE FROM derived WHERE kind = ? AND agent = ? AND seq <> ?", (kind, agent, seq))
                db.execute("INSERT OR REPLACE INTO derived(kind, agent, seq, body) VALUES (?, ?, ?, ?)",
                           (kind, agent, seq, body))

    def rollback_to(self, target: int, committed_at: str) -> dict[str, int | None]:
        """Make each agent's namespace what it was right after ledger entry ``target``.

        Recorded as new ledger entries: the history itself is never rewritten.
        """
        with self._transaction() as db:
            head = int(db.execute("SELECT COALESCE(MAX(seq), 0) FROM ledger").fetchone()[0])
            if not 0 <= target <= head:
                raise StoreError(f"cannot roll back to {target}: the ledger has entries 1..{head}")
            # Replay the ledger up to the target: merges set an agent's record, earlier rollbacks
            # set whatever record they restored (or none), rejections change nothing.
            state: dict[str, int | None] = {}
            for seq, agent, action, detail in db.execute(
                "SELECT seq, agent, action, detail FROM ledger WHERE seq <= ? ORDER BY seq", (target,)
            ):
                if action == "merge":
                    state[agent] = seq
                elif action == "rollback":
                    state[agent] = json.loads(detail).get("record_seq")
            agents = sorted({r[0] for r in db.execute("SELECT agent FROM current")} | set(state))
            changed: dict[str, int | None] = {}
            for agent in agents:
                wanted = state.get(agent)
                now = db.execute("SELECT record_seq FROM current WHERE agent = ?", (agent,)).fetchone()
                if (now[0] if now else None) == wanted:
                    continue
                cursor = db.execute(
                    "INSERT INTO ledger(agent, action, committed_at, detail) VALUES (?, 'rollback', ?, ?)",
                    (agent, committed_at, json.dumps({"to": target, "record_seq": wanted})),
                )
                db.execute(
                    "INSERT INTO current(agent, record_seq, changed_seq) VALUES (?, ?, ?)"
                    " ON CONFLICT(agent) DO UPDATE SET record_seq = excluded.record_seq,"
                    " changed_seq = excluded.changed_seq",
                    (agent, wanted, cursor.lastrowid),
                )
                changed[agent] = wanted
        return changed


#: Parts of a record left in the store when the graph is loaded, fetched when read.
_LEFT_IN_STORE = ("raw", "namespace")
#: The derived kind holding each record without them, written with the record: loading reads it as
#: it is (``json_remove`` of the two, for records committed before, parses and writes every record).
_CORE = "core"


class _Record(dict[str, Any]):
    """A current record read without ``raw`` (the artifact files as submitted) and ``namespace``
    (the agent's merged files, which only the JSON view shows): together half its size.

    Archiving and ``validate`` read ``raw``, and the view renders each namespace once per record
    (kept rendered in ``derived``): ``record["raw"]`` or ``record["namespace"]`` fetches it then.
    """

    def __init__(self, store: Store, data: dict[str, Any]) -> None:
        super().__init__(data)
        self._store = store

    def __missing__(self, key: str) -> Any:
        full = self._store.record(self["seq"]) if key in _LEFT_IN_STORE and "seq" in self else None
        if full is None or key not in full:
            raise KeyError(key)
        self[key] = full[key]
        return full[key]


def _dumps(value: Any) -> bytes:
    """orjson writes a record ~10x faster; json writes what orjson refuses (integers beyond 64 bits)."""
    try:
        return orjson.dumps(value)
    except TypeError:
        return json.dumps(value, ensure_ascii=False).encode()


def _loads(text: str | bytes) -> Any:
    """orjson parses a record ~3x faster; json reads what orjson refuses (NaN, integers beyond 64 bits)."""
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return json.loads(text)


def read_ledger(path: Path) -> list[dict[str, Any]]:
    """The ledger of a session's store, without loading the graph (for reports and listings)."""
    store = Store(path)
    try:
        return store.ledger()
    finally:
        store.close()
