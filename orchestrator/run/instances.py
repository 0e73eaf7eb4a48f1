"""Running a session's agent instances as processes, within the run's limits.

Each attempt of an instance gets a task file and runs as a separate process through an
:class:`Executor`; after it exits, its lock goes through the same pipeline as any hand-dropped
artifact set. A rejected or failed attempt is re-run with its retry instructions until the
mission's attempt limit. The time, invocation and cost limits are checked before every dispatch.
:class:`~orchestrator.run.runner.MissionRunner` uses it to run each phase's agents.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from orchestrator.commit.views import flush_views
from orchestrator.model.errors import ConfigError
from orchestrator.run import dispatch
from orchestrator.run.checkpoint import settle_running
from orchestrator.run.definitions import AgentDefinition, definition_for
from orchestrator.run.executor import Executor, JobResult
from orchestrator.run.missions import Mission
from orchestrator.run.run_book import BudgetExhausted, RunBook
from orchestrator.session.agent_failures import EXIT_AGENT_FAILED, read_failure
from orchestrator.session.costs import costs_path, total_cost_usd
from orchestrator.session.events import read_events
from orchestrator.session.record import load_session

__all__ = ["AGENT_EVENTS", "EXIT_BUDGET_EXCEEDED", "AgentInstances", "check_definitions", "required_files_of"]

#: Events that agent processes write themselves and that the terminal shows ("planner: rate limited, ...",
#: "planner: claude-opus-5-6 is not in the price table: priced as ...").
AGENT_EVENTS = frozenset({"model.retry_wait", "model.warning"})
#: An agent process exits with this status when the run's budget is spent (agents/claude).
EXIT_BUDGET_EXCEEDED = 3


def check_definitions(mission: Mission, definitions: Mapping[str, AgentDefinition]) -> None:
    """Every agent the mission names has a definition."""
    phases = dataclasses.asdict(mission.phases)
    missing = sorted({a for agents in phases.values() for a in agents if a not in definitions})
    if missing:
        raise ConfigError(
            f"mission {mission.name!r} uses agent(s) {', '.join(missing)} that have no definition; "
            f"known agents: {', '.join(sorted(definitions))} (add one under the user config folder's "
            "cconductor/agents/)"
        )


def required_files_of(definitions: Mapping[str, AgentDefinition]) -> Callable[[str], tuple[str, ...]]:
    """The artifact files each agent must submit, by agent name (an instance name maps to its definition)."""
    def required(agent: str) -> tuple[str, ...]:
        definition = definition_for(agent, definitions)
        return definition.required_files if definition else ()

    return required


class AgentInstances:
    """Dispatches the run's agent instances (``book.run_state["instances"]``) and settles each as merged, retry
    or failed."""

    def __init__(self, book: RunBook, executor: Executor, definitions: Mapping[str, AgentDefinition]):
        self.book = book
        self.paths = book.paths
        self.mission = book.mission
        self.executor = executor
        self.definitions = definitions

    @property
    def run_state(self) -> dict[str, Any]:
        return self.book.run_state

    # -- dispatch and results -----------------------------------------------------------------
    def run(self, names: list[str]) -> None:
        """Run these instances (those pending or due a retry) until each is merged or failed."""
        instances, events = self.run_state["instances"], self.book.events
        events.forward_from_agents(AGENT_EVENTS)  # from here on, agents' own events reach the terminal
        for name in names:
            if instances[name]["state"] in ("pending", "retry"):
                self._dispatch(name)
        while self.executor.pending():
            results = self.executor.wait(timeout=1.0)
            events.forward_from_agents(AGENT_EVENTS)
            for result in results:
                self._after_job(result)
            if self.book.elapsed_minutes() >= self.book.limits.max_minutes:
                self.book.check_budget()

    def _definition(self, name: str) -> AgentDefinition:
        definition = self.definitions.get(self.run_state["instances"][name]["definition"])
        assert definition is not None
        return definition

    def _dispatch(self, name: str) -> None:
        book = self.book
        book.check_budget()
        self._stop_orphan(name)
        entry = self.run_state["instances"][name]
        definition = self._definition(name)
        entry["attempts"] += 1
        attempt = entry["attempts"]
        restarted = bool(entry.pop("restarted", False))
        retry = dispatch.read_retry_instructions(self.paths, name) if attempt > 1 else None
        dispatch.set_aside_previous_attempt(self.paths, name, attempt, restarted=restarted)
        task = dispatch.build_task(
            self.paths, name, definition, entry,
            mission=self.mission,
            options=book.options,
            query=book.session["query"],
            questions=self.run_state.get("questions", {}),
            retry=retry,
            budget_usd=book.limits.budget_usd,
            spent_usd=total_cost_usd(self.paths.root),
            created_at=dispatch.now(),
        )
        flush_views(book.processor)  # the agent reads knowledge-graph.json: it must show every merge so far
        task_file = dispatch.write_task(self.paths, task)
        timeout = min(definition.timeout_seconds, self.mission.constraints.agent_timeout_seconds)
        job = dispatch.build_job(self.paths, task, task_file, definition.command, timeout)
        entry["state"] = "running"
        self.run_state["invocations"] = self.run_state.get("invocations", 0) + 1
        book.save()
        book.events.emit(
            "agent.dispatched",
            f"{name}: attempt {attempt} {'started again (the interrupted run cut it off)' if restarted else 'started'}"
            + (" with retry instructions" if retry else ""),
            agent=name,
            attempt=attempt,
            definition=definition.name,
            task=self.paths.rel(task_file),
            retry=bool(retry),
        )
        self.executor.submit(job)

    def _stop_orphan(self, name: str) -> None:
        """Never two copies of an agent in one folder: a process left by an interrupted run is stopped first."""
        from orchestrator.run.processes import still_running, stop_group

        record = still_running(dispatch.pid_path(self.paths, name))
        if record is None:
            return
        self.book.events.emit("agent.orphan_stopped", f"{name}: a process of an earlier run (pid {record['pid']}) "
                         "was still running; stopped it before starting the agent again", agent=name,
                         pid=record["pid"])
        stop_group(int(record["pgid"]))
        still_running(dispatch.pid_path(self.paths, name))  # drops the record once the group is gone

    def _report_costs(self, name: str, attempt: int) -> None:
        """Put the attempt's model calls (request ids, cost) from costs.jsonl into the event log."""
        calls = [c for c in read_events(costs_path(self.paths.root))
                 if c.get("agent") == name and c.get("attempt") == attempt]
        if calls:
            cost = round(sum(float(c.get("cost_usd", 0.0)) for c in calls), 6)
            self.book.events.emit(
                "agent.costs",
                f"{name}: {len(calls)} model call(s), ${cost:.4f}",
                agent=name, attempt=attempt, calls=len(calls), cost_usd=cost,
                request_ids=[c.get("request_id") for c in calls], models=sorted({str(c.get("model")) for c in calls}),
                total_cost_usd=total_cost_usd(self.paths.root),
            )

    def _after_job(self, result: JobResult) -> None:
        name, book = result.agent, self.book
        entry = self.run_state["instances"][name]
        book.events.emit(
            "agent.finished",
            f"{name}: process {result.status} ({result.message})",
            agent=name,
            status=result.status,
            exit_code=result.exit_code,
            duration=result.duration_seconds,
            log=self.paths.rel(Path(result.log_path)),
        )
        self._report_costs(name, entry["attempts"])
        outcome = None
        for _ in range(50):
            outcomes = book.processor.process_pending(only=[name])
            outcome = outcomes[0] if outcomes else None
            if outcome is None or outcome.status != "deferred":
                break
            time.sleep(0.05)
        if outcome is not None and outcome.status in ("merged", "noop"):
            entry["state"] = "merged"
            book.save()
            return
        failure = read_failure(self.paths, name, entry["attempts"]) if outcome is None else None
        if failure is not None:
            entry["failure"] = {"kind": failure.kind, "reason": failure.reason, "attempt": failure.attempt}
        if failure is not None and (result.exit_code == EXIT_AGENT_FAILED or not failure.retryable):
            entry["state"] = "failed"
            book.save()
            book.events.emit(
                "agent.failed",
                f"{name} failed ({failure.kind}): {failure.reason} - not retried: another attempt would fail "
                "the same way and be paid for again",
                agent=name, attempt=entry["attempts"], kind=failure.kind, reason=failure.reason, retried=False,
            )
            return
        if outcome is None and result.exit_code == EXIT_BUDGET_EXCEEDED:
            entry["state"] = "failed"
            book.save()
            raise BudgetExhausted(
                f"{name} stopped before a model call: the ${book.limits.budget_usd:.2f} budget is spent"
            )
        if outcome is None:
            dispatch.failure_instructions(
                self.paths, result, entry["attempts"], self.mission.constraints.max_attempts_per_agent
            )
            book.events.emit(
                "agent.failed",
                f"{name}: {result.status}, no artifacts merged"
                + (f" ({failure.kind}: {failure.reason})" if failure is not None else ""),
                agent=name,
                attempt=entry["attempts"],
                status=result.status,
                **({"kind": failure.kind, "reason": failure.reason} if failure is not None else {}),
            )
        if entry["attempts"] < self.mission.constraints.max_attempts_per_agent:
            entry["state"] = "retry"
            book.events.emit(
                "agent.retrying",
                f"{name}: retrying (attempt {entry['attempts'] + 1} of "
                f"{self.mission.constraints.max_attempts_per_agent})",
                agent=name,
                next_attempt=entry["attempts"] + 1,
            )
            self._dispatch(name)
        else:
            entry["state"] = "failed"
            book.save()
            book.events.emit(
                "agent.gave_up",
                f"{name}: no accepted artifacts after {entry['attempts']} attempt(s)",
                agent=name,
                attempts=entry["attempts"],
            )

    # -- recovery -------------------------------------------------------------------------
    def recover(self) -> None:
        """After a crash: process locks left pending, then settle instances that were running."""
        statuses = {o.agent: o.status for o in self.book.processor.process_pending()}
        agents_state = load_session(self.paths).get("agents", {})
        settle_running(self.run_state.get("instances", {}), statuses, agents_state)
        self.book.save()
