"""The tables of a session's store (``.cconductor/store.sqlite``).

- ``ledger``: every merge, rejection and rollback, in commit order; never rewritten.
- ``records``: each merged record (an agent's contribution, namespace and submitted files) by seq.
- ``current``: each agent's current record seq (None after a rollback removed it).
- ``derived``: renderings of records kept for the views (a cache: a missing row is computed again).
- ``record_keys``: what a new process asks about records it has not read (items by local id,
  agents referencing an agent), by record seq, so the rows of a record never change.
"""

SCHEMA = """
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
CREATE TABLE IF NOT EXISTS record_keys (
    kind TEXT NOT NULL,
    key TEXT NOT NULL,
    seq INTEGER NOT NULL,
    value TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (kind, key, seq, value)
) WITHOUT ROWID;
"""
#: The ``record_keys`` row saying a record's keys are all there (stores of older versions lack it).
INDEXED = ("indexed", "", "")

#: The agents whose last merge or rejection is a rejection (also read by the viewer's ledger snapshot).
REJECTED_LAST = ("SELECT l.agent FROM ledger l JOIN (SELECT agent, MAX(seq) AS last FROM ledger"
                 " WHERE action IN ('merge', 'reject') GROUP BY agent) x ON l.seq = x.last WHERE l.action = 'reject'")
#: Each agent's last merge or rejection, with its seq, action, attempt and detail.
LAST_DECISIONS = ("SELECT l.agent, l.seq, l.action, l.attempt, l.detail FROM ledger l JOIN (SELECT agent, MAX(seq)"
                  " AS last FROM ledger WHERE action IN ('merge', 'reject') GROUP BY agent) x ON l.seq = x.last")
