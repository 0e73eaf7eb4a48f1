"""Which document is current: dates of documents, archived copies, and newer versions of the same document.

A company folder holds this quarter's update beside last quarter's in ``archive/``; a price list
beside last year's. A figure from a document that a newer one supersedes is history, never the
current value. The rules are mechanical and say what they used:

- a document's date is its ``published`` date, else a date stated at its top ("Updated: ...",
  "As of ...", "Date: ..."), else its year, else a year (and quarter) in its file name;
- a document in an archive-like folder (``archive``, ``old``, ``superseded``, ``previous``...) is
  archived;
- documents whose titles (or file names) are the same once dates, years, quarters and numbers are
  removed are versions of one document: the newest is current, the others are superseded by it.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import PurePath
from typing import Any

__all__ = ["Currency", "Vintage", "asks_for_current", "names_current", "names_period", "parse_date", "period_end",
           "stated_date",
           "vintages"]

_MONTHS = {m: n for n, m in enumerate(("january", "february", "march", "april", "may", "june", "july", "august",
                                       "september", "october", "november", "december"), start=1)}
_MONTH = r"(?P<month>jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?"
_DATE_RES = (
    re.compile(r"\b(?P<year>(?:19|20)\d\d)[-/.](?P<m>\d{1,2})[-/.](?P<day>\d{1,2})\b"),
    re.compile(rf"(?i)\b{_MONTH}\s+(?P<day>\d{{1,2}})(?:st|nd|rd|th)?,?\s+(?P<year>(?:19|20)\d\d)\b"),
    re.compile(rf"(?i)\b(?P<day>\d{{1,2}})(?:st|nd|rd|th)?\s+{_MONTH}\s+(?P<year>(?:19|20)\d\d)\b"),
)
_STATED = re.compile(r"(?i)^\s*(?:(?:last\s+)?(?:updated|revised|modified)|date[d]?|as of|published|effective|"
                     r"valid from|prices valid from|issued)\b[:\s]")
_ARCHIVE_DIRS = frozenset({"archive", "archives", "archived", "old", "older", "superseded", "previous", "outdated",
                           "obsolete", "deprecated", "history", "historical", "backup", "backups", "past"})
_PERIOD = re.compile(r"(?i)\b(?:(?:19|20)\d\d|q[1-4]|fy\s?\d{2,4}|h[12]|(?:first|second|third|fourth) quarter|"
                     r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*)\b")
_CURRENT = re.compile(r"(?i)\b(?:latest|most recent|current(?:ly)?|now|today|newest|up[- ]to[- ]date|as of|"
                      r"at present|presently|still|this (?:year|quarter|month))\b")


def parse_date(text: str) -> dt.date | None:
    """The first date written in ``text`` ("2025-06-01", "June 1, 2025", "1 June 2025"), or None."""
    found: list[tuple[int, dt.date]] = []
    for pattern in _DATE_RES:
        for m in pattern.finditer(text):
            parts = m.groupdict()
            month = int(parts["m"]) if parts.get("m") else next(
                (n for name, n in _MONTHS.items() if name.startswith(parts["month"].casefold().rstrip("."))), 0)
            try:
                found.append((m.start(), dt.date(int(parts["year"]), month, int(parts["day"]))))
            except ValueError:
                continue
    return min(found)[1] if found else None


def stated_date(pages: tuple[str, ...] | list[str]) -> dt.date | None:
    """A date a document states at its top ("Updated: 2025-02-01", "As of September 30, 2025")."""
    head = pages[0].split("\n")[:15] if pages else []
    for line in head:
        if _STATED.match(line):
            found = parse_date(line)
            if found:
                return found
    return None


@dataclass(frozen=True)
class Vintage:
    """A document's date, whether it is archived, and the newer version that supersedes it."""

    date: dt.date | None
    archived: bool
    superseded_by: str | None = None

    @property
    def outdated(self) -> bool:
        return self.archived or self.superseded_by is not None


def _date_of(source: Mapping[str, Any]) -> dt.date | None:
    published = str(source.get("published") or "")
    if published:
        found = parse_date(published)
        if found:
            return found
    if isinstance(source.get("year"), int):
        return dt.date(int(source["year"]), 12, 31)
    name = PurePath(str(source.get("local_path") or "")).stem
    year = _NAME_YEAR.search(name)  # "report-2024", "update_20250601"; never the digits of "19100463.txt" (a PMID)
    if year:
        if year.group(2):
            try:
                return dt.date(int(year.group(1)), int(year.group(2)), int(year.group(3)))
            except ValueError:  # "20250231": the year alone
                pass
        quarter = re.search(r"(?i)q([1-4])", name)
        return dt.date(int(year.group(1)), 3 * int(quarter.group(1)) if quarter else 12, 28)
    return None


#: A year standing alone in a file name, or opening a compact date (yyyymmdd); not four digits of a longer number.
_NAME_YEAR = re.compile(r"(?<!\d)((?:19|20)\d\d)(?:(0[1-9]|1[0-2])(0[1-9]|[12]\d|3[01]))?(?!\d)")
#: An identifier in a title (PMID, report or case number): five or more digits that are not a compact date.
_IDENTIFIER = re.compile(r"(?<!\d)(?!(?:19|20)\d\d(?:0[1-9]|1[0-2])(?:0[1-9]|[12]\d|3[01])(?!\d))\d{5,}(?!\d)")


def _family(source: Mapping[str, Any]) -> str:
    """The title without its dates, years, quarters and numbers: versions of one document share it. An identifier
    stays: "PMID: 19100463" and "PMID: 20629769" are two documents, not two versions of one."""
    title = str(source.get("title") or PurePath(str(source.get("local_path") or "")).stem)
    identifiers = _IDENTIFIER.findall(title)
    title = _PERIOD.sub(" ", _IDENTIFIER.sub(" ", title.casefold()))
    title = re.sub(r"\d+|[^\w\s]|_", " ", title)
    return " ".join([*title.split(), *identifiers])


def vintages(sources: Mapping[str, Mapping[str, Any]]) -> dict[str, Vintage]:
    """Each source id's :class:`Vintage`, judged among ``sources`` (id -> Source record)."""
    dates = {sid: _date_of(s) for sid, s in sources.items()}
    families: dict[str, list[str]] = {}
    for sid, source in sources.items():
        key = _family(source)
        if key:
            families.setdefault(key, []).append(sid)
    newest: dict[str, str] = {}
    for members in families.values():
        dated = [m for m in members if dates[m] is not None]
        if len(dated) < 2:
            continue
        current = max(dated, key=lambda m: (dates[m], m))
        for member in dated:
            if dates[member] < dates[current]:  # type: ignore[operator]
                newest[member] = current
    out = {}
    for sid, source in sources.items():
        folders = {p.casefold() for p in PurePath(str(source.get("local_path") or "")).parts[:-1]}
        out[sid] = Vintage(dates[sid], bool(folders & _ARCHIVE_DIRS), newest.get(sid))
    return out


def names_period(question: str) -> bool:
    """The question names a period ("in 2023", "Q3 2024", "in March"): older documents may answer it."""
    return _PERIOD.search(question) is not None


def names_current(question: str) -> bool:
    """The question says it wants the newest value ("latest", "most recent", "current", "as of")."""
    return _CURRENT.search(question) is not None


_QUARTER = re.compile(r"(?i)\b(?:q([1-4])|(first|second|third|fourth) quarter)(?: of)?\s*((?:19|20)\d\d)\b")


def period_end(text: str) -> dt.date | None:
    """The end of the latest quarter a text names ("Q3 2024", "third quarter of 2025"), or None."""
    ends = []
    for m in _QUARTER.finditer(text):
        quarter = int(m.group(1)) if m.group(1) else ("first", "second", "third", "fourth").index(
            m.group(2).casefold()) + 1
        ends.append(dt.date(int(m.group(3)), 3 * quarter, 28))
    return max(ends) if ends else None


def asks_for_current(question: str) -> bool:
    """The question wants the value in force ("latest", "current", "as of", or no period named at all)."""
    return _CURRENT.search(question) is not None or not names_period(question)


class Currency:
    """Which statements are history for a question: a unit of an outdated document (unless the question
    names its period), and how old a statement is among the corpus's dated documents."""

    def __init__(self, found: Mapping[str, Vintage], titles: Mapping[str, str]) -> None:
        self.vintages = found
        self.titles = titles
        dates = [v.date for v in found.values() if v.date is not None]
        self.span = (min(dates), max(dates)) if len(dates) >= 2 else None

    def outdated_for(self, sentence: Any, periods: set[str]) -> bool:
        """A unit of a superseded or archived document, unless the question asks about its period."""
        vintage = self.vintages.get(sentence.source_id)
        if vintage is None or not vintage.outdated:
            return False
        said = f"{sentence.context} {sentence.text} {self.titles.get(sentence.source_id, '')}".casefold()
        return not periods or not any(p in said for p in periods)

    def age(self, sentence: Any) -> float:
        """0 (the newest statement) to 1 (the oldest): a date or quarter the unit states counts before its
        document's date."""
        if self.span is None:
            return 0.0
        vintage = self.vintages.get(sentence.source_id)
        when = parse_date(sentence.text) or period_end(sentence.text) or (vintage.date if vintage else None)
        if when is None:
            return 0.5
        low, high = self.span
        return min(1.0, max(0.0, (high - when).days / ((high - low).days or 1)))
