"""``python -m orchestrator.cli`` is the same as the ``cconductor`` command."""

from orchestrator.cli import main

main(prog_name="cconductor")
