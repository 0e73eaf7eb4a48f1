"""What a run keeps while it runs: its session, processor, persisted state, limits and clock.

Both halves of a run read and update it: the mission's phases (run/runner.py) and the agent
instances they start (run/instances.py). The run's state lives in ``session.json`` (``run``), so
``resume`` continues from the files after a crash.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from orchestrator.commit.processor import Processor
from orchestrator.model.layout import SessionPaths
from orchestrator.run.config import RunLimits, RunOptions
from orchestrator.run.missions import Mission
from orchestrator.session.costs import total_cost_usd
from orchestrator.session.record import load_session, update_session

__all__ = ["BudgetExhausted", "RunBook"]


class BudgetExhausted(Exception):
    pass


class RunBook:
    """One run of a mission on a session: the state it saves and the limits it checks."""

    def __init__(self, paths: SessionPaths, mission: Mission, options: RunOptions,
                 required_files: Callable[[str], tuple[str, ...]], clock: Callable[[], float] = time.monotonic):
        self.paths = paths
        self.mission = mission
        self.options = options
        self.clock = clock
        self.limits = RunLimits.for_run(mission, options)
        self.processor = Processor(
            paths,
            max_attempts=mission.constraints.max_attempts_per_agent,
            evidence_threshold=options.evidence_threshold,
            required_files=required_files,
        )
        self.events = self.processor.events
        self.session = load_session(paths)
        self.run_state: dict[str, Any] = self.session.get("run") or {}
        self.started = clock()

    def save(self, **session_fields: Any) -> None:
        """The run's state (and these session fields) into ``session.json``, with the cost so far."""
        run_state = self.run_state
        cost = total_cost_usd(self.paths.root)

        def apply(data: dict[str, Any]) -> None:
            data["run"] = run_state
            data["cost_usd"] = cost
            data.update(session_fields)

        self.session = update_session(self.paths, apply)

    def elapsed_minutes(self) -> float:
        return (float(self.run_state.get("elapsed_before", 0.0)) + self.clock() - self.started) / 60.0

    def check_budget(self) -> None:
        """Raise BudgetExhausted when the run's time, invocations or cost are spent."""
        reason = self.limits.exhausted(
            elapsed_minutes=self.elapsed_minutes(),
            invocations=self.run_state.get("invocations", 0),
            spent_usd=total_cost_usd(self.paths.root),
        )
        if reason:
            raise BudgetExhausted(reason)
