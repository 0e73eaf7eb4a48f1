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
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from filelock import FileLock

from orchestrator.model.errors import StoreError
from orchestrator.model.records import LedgerAction, Record
from orchestrator.session.ledger_schema import INDEXED, LAST_DECISIONS, SCHEMA
from orchestrator.session.record_rows import CORE, CORE_SQL, StoredRecord, core_of, dumps, loads


@dataclass(frozen=True)
class LedgerEntry:
    """One thing to commit. ``record`` is set for merges (the agent's new namespace)."""

    agent: str
    action: str
    artifact_sha256: str | None
    attempt: int | None
    committed_at: str
    detail: dict[str, Any]
    record: Record | None = None
    #: derived data of ``record`` (kind -> body) cached with it, in the same transaction
    derived: Mapping[str, str | bytes] | None = None
    #: the record's lookup keys (kind, key, value), indexed with it (:meth:`Ledger.holders`)
    keys: Sequence[tuple[str, str, str]] | None = None


class Ledger:
    def __init__(self, path: Path):
        path.parent.mkdir(exist_ok=True)  # the state folder, never a deleted session's own
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
                self._db.executescript(SCHEMA)
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
                        dumps(entry.detail).decode(),
                    ),
                )
                seq = int(cursor.lastrowid or 0)
                seqs.append(seq)
                derived = dict(entry.derived or {})
                if entry.record is not None:
                    record = {**entry.record, "seq": seq}
                    db.execute(
                        "INSERT INTO records(seq, agent, record) VALUES (?, ?, ?)",
                        (seq, entry.agent, dumps(record).decode()),  # orjson: a tenth of json's time
                    )
                    derived[CORE] = core_of(record)
                    if entry.keys is not None:
                        _insert_keys(db, seq, entry.keys)
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

    def current_changes(self, since: int = 0, *, cached: bool = True) -> dict[str, Record | None]:
        """Each agent whose namespace changed after ``since``, with its current record (None if removed).

        ``cached=False`` reads every record itself, never its stored core (``validate`` checks the truth).
        """
        with self._lock:
            rows = self._db.execute(
                f"SELECT c.agent, {CORE_SQL} FROM current c"
                " LEFT JOIN records r ON r.seq = c.record_seq"
                " LEFT JOIN derived d ON d.kind = ? AND d.agent = c.agent AND d.seq = c.record_seq"
                " WHERE c.changed_seq > ? ORDER BY c.agent",
                (CORE if cached else None, since),
            ).fetchall()
        return {agent: (_stored(self.record, loads(record)) if record else None) for agent, record in rows}

    def current_seqs(self) -> list[tuple[str, int, bool]]:
        """(agent, record seq, whether its keys are indexed) of each current record, by agent."""
        with self._lock:
            rows = self._db.execute(
                "SELECT c.agent, c.record_seq, k.seq IS NOT NULL FROM current c LEFT JOIN record_keys k"
                " ON k.kind = ? AND k.key = ? AND k.seq = c.record_seq AND k.value = ?"
                " WHERE c.record_seq IS NOT NULL ORDER BY c.agent", INDEXED).fetchall()
        return [(agent, int(seq), bool(indexed)) for agent, seq, indexed in rows]

    def records_at(self, seqs: Sequence[int]) -> dict[int, Record]:
        """seq -> the record committed as that entry, without the parts left in the store (loaded lazily)."""
        found: dict[int, Record] = {}
        with self._lock:
            for start in range(0, len(seqs), 500):
                chunk = list(seqs[start:start + 500])
                rows = self._db.execute(
                    f"SELECT r.seq, {CORE_SQL} FROM records r LEFT JOIN derived d"
                    f" ON d.kind = ? AND d.agent = r.agent AND d.seq = r.seq"
                    f" WHERE r.seq IN ({','.join('?' * len(chunk))})", (CORE, *chunk)).fetchall()
                found.update((int(seq), _stored(self.record, loads(body))) for seq, body in rows)
        return found

    def holders(self, kind: str, key: str) -> list[tuple[str, int, str]]:
        """(agent, record seq, value) of every record, current or not, indexed with this key."""
        with self._lock:
            rows = self._db.execute(
                "SELECT r.agent, k.seq, k.value FROM record_keys k JOIN records r ON r.seq = k.seq"
                " WHERE k.kind = ? AND k.key = ?", (kind, key)).fetchall()
        return [(agent, int(seq), value) for agent, seq, value in rows]

    def put_keys(self, rows: Sequence[tuple[int, Sequence[tuple[str, str, str]]]]) -> None:
        """Index the keys of records committed before they were kept (record seq, keys)."""
        with self._transaction() as db:
            for seq, keys in rows:
                _insert_keys(db, seq, keys)

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

    def decisions_after(self, seq: int) -> list[tuple[int, str, LedgerAction, int | None, int | None]]:
        """(seq, agent, action, attempt, record seq) of each merge, rejection and rollback after ``seq``.

        The record seq is the one the entry leaves current: a merge's own, a rollback's restored one
        (None: none); None for a rejection (it leaves the agent's record as it was).
        """
        with self._lock:
            rows = self._db.execute("SELECT seq, agent, action, attempt, detail FROM ledger WHERE seq > ? ORDER BY seq",
                                    (seq,)).fetchall()
        return [(int(at), agent, action, attempt,
                 at if action == "merge" else json.loads(detail).get("record_seq") if action == "rollback" else None)
                for at, agent, action, attempt, detail in rows]

    def last_decisions(self) -> dict[str, tuple[int, LedgerAction, int | None, dict[str, Any]]]:
        """Each agent's last merge or rejection: (seq, action, attempt, detail)."""
        with self._lock:
            rows = self._db.execute(LAST_DECISIONS).fetchall()
        return {agent: (int(seq), action, attempt, loads(detail)) for agent, seq, action, attempt, detail in rows}

    def rejected_last(self) -> set[str]:
        """The agents whose last merge or rejection is a rejection (their last submission is not in the graph)."""
        return {agent for agent, (_, action, _, _) in self.last_decisions().items() if action == "reject"}

    def attempt_bases(self, agents: list[str]) -> dict[str, tuple[int, str | None]]:
        """For each agent: its merges and rejections so far, and its last one's artifact sha256 if it is a rejection."""
        found: dict[str, tuple[int, str | None]] = dict.fromkeys(agents, (0, None))
        with self._lock:
            for start in range(0, len(agents), 500):
                chunk = agents[start:start + 500]
                rows = self._db.execute(
                    f"SELECT agent, action, artifact_sha256 FROM ledger WHERE agent IN ({','.join('?' * len(chunk))})"
                    " AND action IN ('merge', 'reject') ORDER BY seq", chunk).fetchall()
                for agent, action, sha in rows:
                    found[agent] = (found[agent][0] + 1, sha if action == "reject" else None)
        return found

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

    def derived_of(self, kind: str, agent: str, seq: int) -> Any:
        """The ``kind`` rendering of the agent's record ``seq``, or None if it is not kept."""
        with self._lock:
            row = self._db.execute("SELECT body FROM derived WHERE kind = ? AND agent = ? AND seq = ?",
                                   (kind, agent, seq)).fetchone()
        return row[0] if row else None

    def put_derived(self, kind: str, rows: Sequence[tuple[str, int, str | bytes]], *,
                    drop_absent: bool = False) -> None:
        """Cache renderings (agent, record seq, body: text or bytes, read back as given), dropping that
        agent's older ones; ``drop_absent``: and, in the same transaction, those of agents without a record now."""
        with self._transaction() as db:
            for agent, seq, body in rows:
                db.execute("DELETE FROM derived WHERE kind = ? AND agent = ? AND seq <> ?", (kind, agent, seq))
                db.execute("INSERT OR REPLACE INTO derived(kind, agent, seq, body) VALUES (?, ?, ?, ?)",
                           (kind, agent, seq, body))
            if drop_absent:
                db.execute("DELETE FROM derived WHERE kind = ? AND agent NOT IN"
                           " (SELECT agent FROM current WHERE record_seq IS NOT NULL)", (kind,))

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


def _stored(fetch: Callable[[int], dict[str, Any] | None], data: dict[str, Any]) -> Record:
    """A record as loaded: its core, fetching the parts left in the store when they are read."""
    return cast(Record, StoredRecord(fetch, data))


def _insert_keys(db: sqlite3.Connection, seq: int, keys: Sequence[tuple[str, str, str]]) -> None:
    db.executemany("INSERT OR IGNORE INTO record_keys(kind, key, seq, value) VALUES (?, ?, ?, ?)",
                   [(kind, key, seq, value) for kind, key, value in (*keys, INDEXED)])


def read_ledger(path: Path) -> list[dict[str, Any]]:
    """The ledger of a session's store, without loading the graph (for reports and listings)."""
    store = Ledger(path)
    try:
        return store.ledger()
    finally:
        store.close()
