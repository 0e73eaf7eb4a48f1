"""The ``cconductor`` command line (click). Commands live in one module per area."""

from orchestrator.cli import graph_commands as _graph_commands  # noqa: F401  (registers commands)
from orchestrator.cli import memory_commands as _memory_commands  # noqa: F401
from orchestrator.cli import research_commands as _research_commands  # noqa: F401
from orchestrator.cli.app import main

__all__ = ["main"]
