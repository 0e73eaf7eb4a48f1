"""How an agent says why it failed, and whether trying again could help.

An agent that stops for a reason a new attempt cannot fix (the model refused, its answer was
still cut off or invalid after the re-asks, the API rejected the request as malformed, the
conversation overflowed the context window) writes ``.cconductor/failures/<agent>-<attempt>.json``
and exits with :data:`EXIT_AGENT_FAILED`: the orchestrator does not dispatch it again (each
attempt would be paid for and fail the same way), and the run's result, ``status``, events and
the report say which agent failed and why. A retryable failure writes the same record and
exits 1; the orchestrator retries it and still shows the reason.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from orchestrator.model.layout import SessionPaths, fitting_name

#: Exit status of an agent that failed for good (not retried).
EXIT_AGENT_FAILED = 4


@dataclass(frozen=True)
class AgentFailure:
    agent: str
    attempt: int
    kind: str  # refusal | truncated | invalid_output | request_rejected | context_overflow | unknown_model | ...
    reason: str
    retryable: bool

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def failure_path(paths: SessionPaths, agent: str, attempt: int) -> Path:
    return paths.state / "failures" / f"{fitting_name(agent)}-{attempt}.json"


def write_failure(paths: SessionPaths, failure: AgentFailure) -> None:
    path = failure_path(paths, failure.agent, failure.attempt)
    path.parent.mkdir(exist_ok=True)  # in the state folder, never a deleted session's own
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(failure.to_dict(), ensure_ascii=False), encoding="utf-8")
    os.replace(tmp, path)


def read_failure(paths: SessionPaths, agent: str, attempt: int) -> AgentFailure | None:
    """The agent's own account of its failure, or None (never raises: agents write this file)."""
    try:
        data = json.loads(failure_path(paths, agent, attempt).read_text(encoding="utf-8")[:65_536])
        return AgentFailure(agent, attempt, str(data["kind"])[:64], str(data["reason"])[:2000], bool(data["retryable"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None
