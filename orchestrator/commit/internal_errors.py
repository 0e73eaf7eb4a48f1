"""A failure of cconductor itself while handling one agent: kept out of the way of every other agent.

The traceback goes to ``.cconductor/internal-errors.log`` (for a bug report), never to the
terminal; the agent gets a rejection whose problem says that its files are not at fault.
"""

from __future__ import annotations

import contextlib
import traceback

from orchestrator.model.clock import iso_timestamp
from orchestrator.model.layout import SessionPaths
from orchestrator.model.problems import Problem

LOG_NAME = "internal-errors.log"


def log_internal_error(paths: SessionPaths, doing: str, exc: BaseException) -> str:
    """Append the traceback to the session's internal error log; return the log's path relative to the session."""
    log = paths.state / LOG_NAME
    with contextlib.suppress(OSError), open(log, "a", encoding="utf-8") as handle:
        handle.write(f"--- {iso_timestamp()} while {doing}\n")
        handle.write("".join(traceback.format_exception(exc)))
    return paths.rel(log)


def internal_error_problem(agent: str, exc: BaseException, log: str) -> Problem:
    return Problem(
        f"{agent}.kg.lock", "", "internal.error",
        f"cconductor failed internally while checking this submission ({type(exc).__name__}: {exc}); "
        "this is not a problem in the artifact files",
        f"please report it as a bug with the traceback in {log}; then recreate {agent}.kg.lock "
        f"(or run cconductor retry SESSION {agent}) to try again",
    )
