"""The ``cconductor`` command line (click). Commands live in one module per area."""

from orchestrator.cli import ask_commands as _ask_commands  # noqa: F401  (registers commands)
from orchestrator.cli import batch_commands as _batch_commands  # noqa: F401
from orchestrator.cli import catalog_commands as _catalog_commands  # noqa: F401
from orchestrator.cli import graph_commands as _graph_commands  # noqa: F401
from orchestrator.cli import inspect_commands as _inspect_commands  # noqa: F401
from orchestrator.cli import memory_commands as _memory_commands  # noqa: F401
from orchestrator.cli import research_commands as _research_commands  # noqa: F401
from orchestrator.cli import view_commands as _view_commands  # noqa: F401
from orchestrator.cli.app import main

__all__ = ["main"]
