"""How long this agent process may still run, from the limit the orchestrator passes in.

The orchestrator kills an agent at ``CCONDUCTOR_TIMEOUT_SECONDS``; an agent that knows its own
deadline can cut a model call short and still write its artifacts. The clock starts when this
module is first imported (with the client, at process start), and a margin is kept back for
writing and exiting.
"""

from __future__ import annotations

import os
import time

__all__ = ["EXIT_MARGIN_SECONDS", "TIMEOUT_ENV", "seconds_left"]

#: The agent's time limit, passed by the orchestrator; the clock starts when this module is imported.
TIMEOUT_ENV = "CCONDUCTOR_TIMEOUT_SECONDS"
_STARTED = time.monotonic()
#: Time kept back to write artifacts and exit before the orchestrator's timeout kills the process.
EXIT_MARGIN_SECONDS = 10.0


def seconds_left() -> float | None:
    """Seconds this process may still spend on model calls (at least 1), or None without a limit."""
    try:
        limit = float(os.environ[TIMEOUT_ENV])
    except (KeyError, ValueError):
        return None
    return max(1.0, limit - EXIT_MARGIN_SECONDS - (time.monotonic() - _STARTED))
