"""``python -m orchestrator.cli`` is the same as the ``cconductor`` command."""

from orchestrator.cli.launch import run

run()
