"""Ranked passage search over ingested documents: SQLite FTS5, porter stemming, BM25.

A passage is 1-3 consecutive sentences of one page, cut verbatim from the stored page text
(``page_text[char_start:char_end] == passage.text``), so a hit can be quoted as evidence with a
page locator and found again by the verifier. Results are deterministic: equal scores are
ordered by source id, page and passage number.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

from agents.offline.ingest import Document
from agents.offline.text import sentence_spans
from orchestrator.model.terms import SEARCH_STOPWORDS, search_words

__all__ = ["Hit", "Passage", "PassageIndex", "fts_query", "make_passages"]

MAX_SENTENCES = 3
MAX_CHARS = 700  # a passage stays a quotable snippet (evidence snippets are <= 2000 chars)
MAX_QUERY_TERMS = 64

_SCHEMA = """
CREATE TABLE passages (
    id INTEGER PRIMARY KEY,
    source_id TEXT NOT NULL,
    page INTEGER NOT NULL,
    passage INTEGER NOT NULL,
    char_start INTEGER NOT NULL,
    char_end INTEGER NOT NULL,
    text TEXT NOT NULL
);
CREATE INDEX passages_by_source ON passages (source_id, page, passage);
CREATE VIRTUAL TABLE passages_fts USING fts5 (
    text, content='passages', content_rowid='id',
    tokenize='porter unicode61 remove_diacritics 2'
);
"""


@dataclass(frozen=True)
class Passage:
    """1-3 sentences of one page; ``page`` and ``passage`` are 1-based, offsets index the page."""

    source_id: str
    page: int
    passage: int
    text: str
    char_start: int
    char_end: int


@dataclass(frozen=True)
class Hit:
    """A ranked passage; ``score`` is the negated FTS5 bm25(), so higher is better."""

    source_id: str
    page: int
    text: str
    score: float
    char_start: int
    char_end: int
    passage: int = 0


def make_passages(
    doc: Document, max_sentences: int = MAX_SENTENCES, max_chars: int = MAX_CHARS
) -> list[Passage]:
    """Pack consecutive sentences of each page into passages (never across pages).

    Greedy: a sentence joins the current passage while it holds fewer than ``max_sentences``
    and stays within ``max_chars``; a long sentence stands alone.
    """
    out: list[Passage] = []
    for page_no, page in enumerate(doc.pages, start=1):
        groups: list[list[tuple[int, int]]] = []
        for span in sentence_spans(page):
            group = groups[-1] if groups else None
            if group and len(group) < max_sentences and span[1] - group[0][0] <= max_chars:
                group.append(span)
            else:
                groups.append([span])
        number = 0
        for group in groups:
            start, end = group[0][0], group[-1][1]
            text = page[start:end]
            if not search_words(text, sqlite=True):
                continue  # punctuation or a stray symbol: nothing to search for
            number += 1
            out.append(Passage(doc.id, page_no, number, text, start, end))
    return out


def fts_query(query: str) -> str:
    """User text -> a safe FTS5 query: quoted terms OR-ed, stopwords dropped, no prefixes.

    Every term is an alphanumeric run inside double quotes, so operators (AND, NEAR, ``*``,
    parentheses, column filters) are plain words and the query can never be a syntax error.
    Single characters go too ("N-domain" -> "domain") unless nothing else is left; returns ''
    for a query without any alphanumeric character.
    """
    terms = search_words(query, sqlite=True)
    content = [t for t in terms if t not in SEARCH_STOPWORDS and len(t) > 1] or terms
    unique = list(dict.fromkeys(content))[:MAX_QUERY_TERMS]
    return " OR ".join(f'"{t}"' for t in unique)


class PassageIndex:
    """BM25 passage index; in memory by default, or in a SQLite file that :meth:`open` reloads."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    @classmethod
    def build(cls, documents: Iterable[Document], path: Path | None = None) -> PassageIndex:
        """Index ``documents`` (duplicates by source id are indexed once); replaces ``path``."""
        if path is not None:
            path = Path(path)
            for stale in (path, path.with_name(path.name + "-journal"), path.with_name(path.name + "-wal")):
                stale.unlink(missing_ok=True)
        conn = sqlite3.connect(":memory:" if path is None else str(path), check_same_thread=False)
        with conn:
            conn.executescript(_SCHEMA)
            seen: set[str] = set()
            rows: list[tuple[str, int, int, int, int, str]] = []
            for doc in documents:
                if doc.id in seen:
                    continue
                seen.add(doc.id)
                rows.extend(
                    (p.source_id, p.page, p.passage, p.char_start, p.char_end, p.text)
                    for p in make_passages(doc)
                )
            conn.executemany(
                "INSERT INTO passages (source_id, page, passage, char_start, char_end, text)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                rows,
            )
            conn.execute("INSERT INTO passages_fts (rowid, text) SELECT id, text FROM passages")
            conn.execute("INSERT INTO passages_fts (passages_fts) VALUES ('optimize')")
        return cls(conn)

    @classmethod
    def open(cls, path: Path) -> PassageIndex:
        """Reopen an index written by ``build(documents, path)``."""
        if not Path(path).is_file():
            raise FileNotFoundError(path)
        return cls(sqlite3.connect(str(path), check_same_thread=False))

    def search(self, query: str, limit: int = 10, source_ids: Sequence[str] | None = None) -> list[Hit]:
        """Best passages for ``query`` (any text; it is sanitised), optionally within some sources."""
        match = fts_query(query)
        if not match or limit <= 0 or (source_ids is not None and not source_ids):
            return []
        sql = (
            "SELECT p.source_id, p.page, p.text, bm25(passages_fts) AS rank, p.char_start, p.char_end,"
            " p.passage FROM passages_fts JOIN passages AS p ON p.id = passages_fts.rowid"
            " WHERE passages_fts MATCH ?"
        )
        params: list[object] = [match]
        if source_ids is not None:
            wanted = sorted(set(source_ids))
            sql += f" AND p.source_id IN ({', '.join('?' * len(wanted))})"
            params.extend(wanted)
        sql += " ORDER BY rank, p.source_id, p.page, p.passage LIMIT ?"
        params.append(int(limit))
        return [
            Hit(sid, page, text, round(-rank, 6), start, end, number)
            for sid, page, text, rank, start, end, number in self._conn.execute(sql, params)
        ]

    def passages_for(self, source_id: str) -> list[Passage]:
        """All passages of one source in reading order (page, then passage number)."""
        rows = self._conn.execute(
            "SELECT source_id, page, passage, text, char_start, char_end FROM passages"
            " WHERE source_id = ? ORDER BY page, passage",
            (source_id,),
        )
        return [Passage(*row) for row in rows]

    def source_ids(self) -> list[str]:
        return [r[0] for r in self._conn.execute("SELECT DISTINCT source_id FROM passages ORDER BY 1")]

    def __len__(self) -> int:
        return int(self._conn.execute("SELECT count(*) FROM passages").fetchone()[0])

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> PassageIndex:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()
