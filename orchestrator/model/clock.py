"""Time in session files: session ids, timestamps, and the time a commit was made.

Session ids sort by creation time and never collide: millisecond UTC timestamp first (so ``ls``
and ``sorted()`` give creation order), then random bits; the caller creates the folder with
``mkdir`` (exclusive), which turns the remaining chance of a collision into a retry instead of
shared state.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

SESSION_ID_RE = re.compile(r"^\d{8}T\d{6}\d{3}Z-[0-9a-f]{10}$")


def utc_now() -> datetime:
    return datetime.now(UTC)


def iso_timestamp(moment: datetime | None = None) -> str:
    """RFC 3339 UTC timestamp with milliseconds, the one format used in session files."""
    moment = moment or utc_now()
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def new_session_id(moment: datetime | None = None) -> str:
    moment = moment or utc_now()
    stamp = moment.strftime("%Y%m%dT%H%M%S") + f"{moment.microsecond // 1000:03d}Z"
    return f"{stamp}-{secrets.token_hex(5)}"


def commit_time(graph: Mapping[str, Any], ledger: list[dict[str, Any]] | None) -> datetime | None:
    """When the commit the graph shows was made (the ledger entry of its ``commit_seq``), else when the view
    was written: what a report and its quality score are dated by, so the same graph renders the same bytes."""
    seq = graph.get("commit_seq")
    entry = next((e for e in reversed(ledger or []) if e.get("seq") == seq), None)
    stamp = entry.get("committed_at") if entry else graph.get("generated_at")
    try:
        return datetime.fromisoformat(str(stamp).replace("Z", "+00:00"))
    except ValueError:
        return None
