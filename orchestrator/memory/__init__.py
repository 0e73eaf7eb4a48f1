"""A memory of repairs shared by all sessions: which edit fixed which kind of rejection.

A rejection's problems get session-independent signatures (:mod:`.signature`); when the agent's
next accepted attempt arrives, the change between the rejected and the accepted file
(:mod:`.diff`) is recorded against each signature as a repair item in an RDF store in the user
data folder (:mod:`.store`); later retry instructions quote the best items (:mod:`.hook`).
"""

from __future__ import annotations

import os
from pathlib import Path

MEMORY_DIR_ENV = "CCONDUCTOR_MEMORY_DIR"


def memory_dir() -> Path:
    """``$CCONDUCTOR_MEMORY_DIR``, else the user data folder (``~/.local/share/cconductor/memory``)."""
    override = os.environ.get(MEMORY_DIR_ENV)
    if override:
        return Path(override).expanduser()
    import platformdirs

    return platformdirs.user_data_path("cconductor") / "memory"
