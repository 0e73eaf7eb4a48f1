"""One exception hierarchy; every message says what to do next.

    CconductorError                 exit code 1 unless stated
    ├── UsageError                  exit code 2: the command line was wrong
    │   ├── SessionNotFound
    │   ├── InvalidAgentName
    │   └── SessionDamaged          a session file is damaged; the message names it and the fix
    ├── ConfigError                 a mission, agent definition or config file is invalid
    ├── StoreError                  the session's internal store cannot be used
    ├── SessionGone                 the session folder was deleted or renamed while in use
    └── ArtifactsRejected           an artifact set failed validation (carries the problems)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from orchestrator.model.problems import Problem


class CconductorError(Exception):
    """Base class. ``str(error)`` is a complete, actionable sentence."""

    exit_code = 1


class UsageError(CconductorError):
    exit_code = 2


class SessionNotFound(UsageError):
    pass


class InvalidAgentName(UsageError):
    pass


class SessionDamaged(UsageError):
    pass


class ConfigError(CconductorError):
    pass


class StoreError(CconductorError):
    pass


class SessionGone(CconductorError):
    """The session folder went away under a running command: nothing more is written (never re-created)."""

    def __init__(self, root: object, who: str = "the command", again: str = "run it again"):
        self.root = root
        super().__init__(f"the session folder {root} was deleted or renamed; {who} stopped and wrote nothing more "
                         f"there (a session folder is never re-created). {again.capitalize()} on the folder's new "
                         "location")


class ArtifactsRejected(CconductorError):
    """Raised where a caller wants an exception rather than a list of problems."""

    def __init__(self, agent: str, problems: Sequence[Problem]):
        self.agent = agent
        self.problems = list(problems)
        first = self.problems[0].render() if self.problems else "no details"
        super().__init__(
            f"artifacts of agent '{agent}' were rejected with {len(self.problems)} problem(s); "
            f"first: {first}. See {agent}.retry-instructions.json in the session folder."
        )
