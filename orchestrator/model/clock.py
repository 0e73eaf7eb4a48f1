"""Session ids that sort by creation time and never collide.

Millisecond UTC timestamp first (so ``ls`` and ``sorted()`` give creation order), then
random bits; the caller creates the folder with ``mkdir`` (exclusive), which turns
the remaining chance of a collision into a retry instead of shared state.
"""

from __future__ import annotations

import re
import secrets
from datetime import UTC, datetime

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
