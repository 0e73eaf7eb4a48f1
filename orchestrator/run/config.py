"""What a run may do: the caller's options, and the limits they set together with the mission (pure).

``RunOptions`` is stored in ``session.json`` so ``resume`` continues with the same options;
the limits are enforced in code, never left to the agents.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from orchestrator.run.missions import Mission


@dataclasses.dataclass
class RunOptions:
    backend: str = "offline"
    input_dirs: tuple[str, ...] = ()
    libraries: tuple[str, ...] = ()
    #: Also research a dataset's README, LICENSE, SOURCES.md ... files (normally skipped as notes).
    include_notes: bool = False
    max_parallel: int = 2
    evidence_threshold: float = 90.0
    agent_dirs: tuple[str, ...] = ()
    max_minutes: float | None = None
    budget_usd: float | None = None
    max_iterations: int | None = None
    max_invocations: int | None = None
    #: With Claude: describe each figure with a vision model at ingestion (opt-in; priced in costs.jsonl).
    describe_figures: bool = False

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RunOptions:
        fields = {f.name for f in dataclasses.fields(cls)}
        values: dict[str, Any] = {k: tuple(v) if isinstance(v, list) else v for k, v in data.items() if k in fields}
        return cls(**values)


@dataclasses.dataclass(frozen=True)
class RunLimits:
    """The run's limits: an option given on the command line overrides the mission's constraint."""

    max_minutes: float
    budget_usd: float
    max_iterations: int
    max_invocations: int

    @classmethod
    def for_run(cls, mission: Mission, options: RunOptions) -> RunLimits:
        limits = mission.constraints
        return cls(
            max_minutes=options.max_minutes or limits.max_minutes,
            budget_usd=options.budget_usd if options.budget_usd is not None else limits.budget_usd,
            max_iterations=options.max_iterations or limits.max_iterations,
            max_invocations=options.max_invocations or limits.max_agent_invocations,
        )

    def exhausted(self, *, elapsed_minutes: float, invocations: int, spent_usd: float) -> str | None:
        """Why the run must stop now (the first limit reached), or None."""
        if elapsed_minutes >= self.max_minutes:
            return f"time limit of {self.max_minutes:g} minute(s) reached"
        if invocations >= self.max_invocations:
            return f"limit of {self.max_invocations} agent invocations reached"
        if spent_usd >= self.budget_usd:
            return f"budget of ${self.budget_usd:.2f} spent (${spent_usd:.2f})"
        return None
