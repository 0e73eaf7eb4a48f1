"""Entry point of every built-in agent process: ``python -m agents --task TASK_FILE``."""

from __future__ import annotations

import argparse
import importlib
import sys
import traceback
from pathlib import Path

from agents.runtime import AgentContext
from orchestrator.run.definitions import load_definitions


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m agents", description=__doc__)
    parser.add_argument("--task", required=True, type=Path, help="the task file the orchestrator wrote")
    args = parser.parse_args(argv)
    context = AgentContext(args.task)
    task = context.task
    definition = load_definitions().get(task.definition)
    if definition is None:
        print(f"unknown agent definition {task.definition!r}", file=sys.stderr)
        return 2
    target = definition.implementations.get(task.backend)
    if target is None:
        print(f"agent {definition.name!r} has no implementation for backend {task.backend!r}", file=sys.stderr)
        return 2
    module_name, _, function = target.partition(":")
    context.start_heartbeat()
    try:
        run = getattr(importlib.import_module(module_name), function)
        run(context)
    except Exception:
        traceback.print_exc()
        return 1
    finally:
        context.stop_heartbeat()
    return 0


if __name__ == "__main__":
    sys.exit(main())
