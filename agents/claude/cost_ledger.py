"""What one model call cost, kept in memory and appended to the session's ``costs.jsonl``.

The ledger is the session's record of spending: the budget check, ``cconductor status`` and the
report all read it, so every call adds exactly one JSON line, written in a single append under
the session's costs mutex (parallel agents never interleave lines) and redacted before it is
written. :class:`CallRecord` is the in-process copy the client keeps for its own totals.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from filelock import FileLock

from agents.claude.pricing_types import UsageCounts
from orchestrator.model.clock import iso_timestamp
from orchestrator.model.layout import SessionPaths
from orchestrator.model.redact import redact
from orchestrator.session.costs import costs_path

__all__ = ["CallRecord", "append_cost_line"]


@dataclass(frozen=True)
class CallRecord:
    purpose: str
    model: str
    request_id: str | None
    stop_reason: str | None
    usage: UsageCounts
    cost_usd: float
    interrupted: str | None = None  # why a billed stream ended before its message was complete


def append_cost_line(session_root: Path, agent: str, attempt: int, record: CallRecord) -> None:
    """One JSON line per call, written in a single append under the session's costs mutex."""
    usage = record.usage
    line = {
        "timestamp": iso_timestamp(),
        "agent": agent,
        "attempt": attempt,
        "model": record.model,
        "request_id": record.request_id,
        "input_tokens": usage.input_tokens,
        "output_tokens": usage.output_tokens,
        "cache_creation_input_tokens": usage.cache_creation_input_tokens,
        "cache_read_input_tokens": usage.cache_read_input_tokens,
        "web_search_requests": usage.web_search_requests,
        "web_fetch_requests": usage.web_fetch_requests,
        "cost_usd": record.cost_usd,
    }
    if record.interrupted:
        line["interrupted"] = record.interrupted
    data = (redact(json.dumps(line, ensure_ascii=False)) + "\n").encode("utf-8")
    paths = SessionPaths(session_root)
    paths.state.mkdir(parents=True, exist_ok=True)
    with FileLock(paths.state / "costs.mutex"):
        fd = os.open(costs_path(session_root), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, data)
        finally:
            os.close(fd)
