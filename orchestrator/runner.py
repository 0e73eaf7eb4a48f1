"""The research run: plan -> research -> fact-check -> quality gate -> (gap iterations) -> synthesis -> report.

Every agent is a separate process started through an :class:`Executor`; after it exits,
its lock goes through the same pipeline as any hand-dropped artifact set. The run's
progress is persisted in ``session.json`` (``run``), so ``resume`` continues from the
files after a crash. Budgets and success criteria are enforced here, in code.
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agents.definitions import AgentDefinition, definition_for, load_definitions
from orchestrator import dispatch
from orchestrator.costs import total_cost_usd
from orchestrator.errors import ConfigError
from orchestrator.executor import Executor, JobResult, LocalExecutor
from orchestrator.missions import Mission
from orchestrator.paths import SessionPaths
from orchestrator.pipeline import Processor
from orchestrator.session import load_session, update_session
from orchestrator.views import flush_views

#: An agent process exits with this status when the run's budget is spent (agents/claude).
EXIT_BUDGET_EXCEEDED = 3
PHASE_ORDER = ("prepare", "research", "fact_check", "gate", "synthesis", "report", "done")


class BudgetExhausted(Exception):
    pass


@dataclasses.dataclass
class RunOptions:
    backend: str = "offline"
    input_dirs: tuple[str, ...] = ()
    libraries: tuple[str, ...] = ()
    max_parallel: int = 2
    evidence_threshold: float = 90.0
    agent_dirs: tuple[str, ...] = ()
    max_minutes: float | None = None
    budget_usd: float | None = None
    max_iterations: int | None = None
    max_invocations: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RunOptions:
        fields = {f.name for f in dataclasses.fields(cls)}
        values: dict[str, Any] = {k: tuple(v) if isinstance(v, list) else v for k, v in data.items() if k in fields}
        return cls(**values)


class MissionRunner:
    def __init__(
        self,
        paths: SessionPaths,
        mission: Mission,
        options: RunOptions,
        executor: Executor | None = None,
        clock: Callable[[], float] = time.monotonic,
    ):
        self.paths = paths
        self.mission = mission
        self.options = options
        self.executor = executor or LocalExecutor(options.max_parallel)
        self.clock = clock
        self.definitions = load_definitions(tuple(Path(d) for d in options.agent_dirs))
        self._check_definitions()
        limits = mission.constraints
        self.max_minutes = options.max_minutes or limits.max_minutes
        self.budget_usd = options.budget_usd if options.budget_usd is not None else limits.budget_usd
        self.max_iterations = options.max_iterations or limits.max_iterations
        self.max_invocations = options.max_invocations or limits.max_agent_invocations
        self.processor = Processor(
            paths,
            max_attempts=limits.max_attempts_per_agent,
            evidence_threshold=options.evidence_threshold,
            required_files=self._required_files,
        )
        self.events = self.processor.events
        self.session = load_session(paths)
        self.run_state: dict[str, Any] = self.session.get("run") or {}
        self._started = clock()

    # -- setup ------------------------------------------------------------------------
    def _check_definitions(self) -> None:
        phases = dataclasses.asdict(self.mission.phases)
        missing = sorted({a for agents in phases.values() for a in agents if a not in self.definitions})
        if missing:
            raise ConfigError(
                f"mission {self.mission.name!r} uses agent(s) {', '.join(missing)} that have no definition; "
                f"known agents: {', '.join(sorted(self.definitions))} (add one under the user config folder's "
                "cconductor/agents/)"
            )

    def _required_files(self, agent: str) -> tuple[str, ...]:
        definition = definition_for(agent, self.definitions)
        return definition.required_files if definition else ()

    def _save(self, **session_fields: Any) -> None:
        run_state = self.run_state

        cost = total_cost_usd(self.paths.root)

        def apply(data: dict[str, Any]) -> None:
            data["run"] = run_state
            data["cost_usd"] = cost
            data.update(session_fields)

        self.session = update_session(self.paths, apply)

    def _elapsed_minutes(self) -> float:
        return (float(self.run_state.get("elapsed_before", 0.0)) + self.clock() - self._started) / 60.0

    # -- budget -------------------------------------------------------------------------
    def _check_budget(self) -> None:
        if self._elapsed_minutes() >= self.max_minutes:
            raise BudgetExhausted(f"time limit of {self.max_minutes:g} minute(s) reached")
        if self.run_state.get("invocations", 0) >= self.max_invocations:
            raise BudgetExhausted(f"limit of {self.max_invocations} agent invocations reached")
        spent = total_cost_usd(self.paths.root)
        if spent >= self.budget_usd:
            raise BudgetExhausted(f"budget of ${self.budget_usd:.2f} spent (${spent:.2f})")

    # -- the loop -----------------------------------------------------------------------
    def run(self) -> dict[str, Any]:
        if self.run_state.get("phase") == "done":
            status, reason = self.session["status"], self.session.get("status_reason")
            self.events.emit(
                "run.resumed", f"nothing to resume: the run already finished ({status})", status=status, phase="done"
            )
            self.processor.close()
            return {"status": status, "reason": reason, "session": str(self.paths.root)}
        first = not self.run_state
        if first:
            self.run_state = {
                "phase": "prepare",
                "iteration": 1,
                "invocations": 0,
                "instances": {},
                "options": self.options.to_dict(),
                "elapsed_before": 0.0,
            }
        self._save(status="running", status_reason=None)
        self.events.emit(
            "run.started" if first else "run.resumed",
            f"{'starting' if first else 'resuming'} mission {self.mission.name!r} (backend {self.options.backend})",
            mission=self.mission.name,
            backend=self.options.backend,
            phase=self.run_state["phase"],
        )
        try:
            self._recover()
            status, reason = self._advance()
        except BudgetExhausted as exc:
            self.executor.cancel_all()
            status, reason = "budget_exhausted", str(exc)
            self._finish_report()
        finally:
            self.run_state["elapsed_before"] = round(
                float(self.run_state.get("elapsed_before", 0.0)) + self.clock() - self._started, 3
            )
            self._started = self.clock()
        self._save(status=status, status_reason=reason)
        flush_views(self.processor)
        self.events.emit(
            "run.finished",
            f"run finished: {status}" + (f" ({reason})" if reason else ""),
            status=status,
            reason=reason,
            cost_usd=total_cost_usd(self.paths.root),
        )
        self.processor.close()
        return {"status": status, "reason": reason, "session": str(self.paths.root)}

    def _advance(self) -> tuple[str, str | None]:
        state = self.run_state
        while True:
            phase = state["phase"]
            if phase == "prepare":
                self._run_instances(self._instances("planning") + self._instances("ingestion"))
                if not self._merged(self._instances("planning")):
                    return self._finish_failed("the research planner produced no accepted plan")
                self._enter("research")
            elif phase == "research":
                self._run_instances(self._research_instances())
                if not any(i["state"] == "merged" for i in state["instances"].values() if i["phase"] == "research"):
                    return self._finish_failed("no research agent produced an accepted artifact set")
                self._enter("fact_check")
            elif phase == "fact_check":
                self._run_instances(self._instances("fact_check", fresh=True))
                self._enter("gate")
            elif phase == "gate":
                passed, gaps = self._gate()
                if not passed and gaps and self._can_iterate(len(gaps)):
                    state["iteration"] += 1
                    state["pending_questions"] = gaps
                    self.events.emit(
                        "iteration.started",
                        f"iteration {state['iteration']}: {len(gaps)} gap(s) to research",
                        iteration=state["iteration"],
                        questions=[g["question"] for g in gaps],
                    )
                    self._enter("research")
                else:
                    self._enter("synthesis")
            elif phase == "synthesis":
                self._run_instances(self._instances("synthesis"))
                self._enter("report")
            elif phase == "report":
                return self._finish_report()
            else:
                raise AssertionError(f"unknown run phase {phase!r}")

    def _enter(self, phase: str) -> None:
        self.run_state["phase"] = phase
        self._save()
        self.events.emit(
            "phase.started",
            f"phase {phase} (iteration {self.run_state['iteration']})",
            phase=phase,
            iteration=self.run_state["iteration"],
        )

    def _finish_failed(self, reason: str) -> tuple[str, str]:
        self._finish_report()
        return "failed", reason

    # -- instances ----------------------------------------------------------------------
    def _instances(self, phase: str, *, fresh: bool = False) -> list[str]:
        names = list(getattr(self.mission.phases, phase))
        iteration = self.run_state["iteration"]
        instances = self.run_state["instances"]
        for name in names:
            entry = instances.get(name)
            if entry is None or (fresh and entry.get("iteration") != iteration and entry["state"] != "running"):
                instances[name] = {
                    "definition": name,
                    "phase": phase,
                    "iteration": iteration,
                    "sub_question_ids": [],
                    "state": "pending",
                    "attempts": entry["attempts"] if entry else 0,
                }
        return names

    def _plan_questions(self) -> list[dict[str, Any]]:
        graph = self._graph()
        for agent in self.mission.phases.planning:
            plan = graph.get(agent, {})
            if plan.get("sub_questions"):
                return [
                    {
                        "id": f"{agent}:{q['id']}",
                        "question": q["question"],
                        "keywords": q.get("keywords", []),
                        "priority": q.get("priority", "medium"),
                    }
                    for q in plan["sub_questions"]
                ]
        return [{"id": "query", "question": self.session["query"], "keywords": [], "priority": "high"}]

    def _research_instances(self) -> list[str]:
        state = self.run_state
        iteration = state["iteration"]
        existing = [
            n for n, i in state["instances"].items() if i["phase"] == "research" and i["iteration"] == iteration
        ]
        if existing:
            return existing
        questions = state.pop("pending_questions", None) or self._plan_questions()
        state["questions"] = {**state.get("questions", {}), **{q["id"]: q for q in questions}}
        names = []
        for definition in self.mission.phases.research:
            for index, question in enumerate(questions, start=1):
                name = f"{definition}-i{iteration}-{index}"
                state["instances"][name] = {
                    "definition": definition,
                    "phase": "research",
                    "iteration": iteration,
                    "sub_question_ids": [question["id"]],
                    "state": "pending",
                    "attempts": 0,
                }
                names.append(name)
        self._save()
        return names

    def _merged(self, names: list[str]) -> bool:
        return any(self.run_state["instances"][n]["state"] == "merged" for n in names)

    def _graph(self) -> dict[str, Any]:
        flush_views(self.processor)
        return dict(json.loads(self.paths.kg_json.read_text(encoding="utf-8")))

    # -- dispatch and results -----------------------------------------------------------------
    def _run_instances(self, names: list[str]) -> None:
        instances = self.run_state["instances"]
        for name in names:
            if instances[name]["state"] in ("pending", "retry"):
                self._dispatch(name)
        while self.executor.pending():
            results = self.executor.wait(timeout=1.0)
            for result in results:
                self._after_job(result)
            if self._elapsed_minutes() >= self.max_minutes:
                self._check_budget()

    def _definition(self, name: str) -> AgentDefinition:
        definition = self.definitions.get(self.run_state["instances"][name]["definition"])
        assert definition is not None
        return definition

    def _dispatch(self, name: str) -> None:
        self._check_budget()
        entry = self.run_state["instances"][name]
        definition = self._definition(name)
        entry["attempts"] += 1
        attempt = entry["attempts"]
        retry = dispatch.read_retry_instructions(self.paths, name) if attempt > 1 else None
        dispatch.set_aside_previous_attempt(self.paths, name, attempt)
        questions = self.run_state.get("questions", {})
        task = {
            "agent": name,
            "definition": definition.name,
            "attempt": attempt,
            "max_attempts": self.mission.constraints.max_attempts_per_agent,
            "session": str(self.paths.root),
            "query": self.session["query"],
            "mission": self.mission.name,
            "objective": self.mission.objective,
            "phase": definition.phase,
            "iteration": entry["iteration"],
            "backend": self.options.backend,
            "sub_questions": [questions[q] for q in entry["sub_question_ids"] if q in questions],
            "required_files": list(definition.required_files),
            "required_sections": list(self.mission.success_criteria.required_sections),
            "inputs": {
                "input_dirs": list(self.options.input_dirs),
                "libraries": list(self.options.libraries),
                "graph": str(self.paths.kg_json),
            },
            "retry_instructions": retry,
            "options": {
                "evidence_threshold": self.options.evidence_threshold,
                "max_claims_per_question": 6,
                "depth": entry["iteration"],
                "budget_usd": self.budget_usd,
                "budget_usd_remaining": round(max(0.0, self.budget_usd - total_cost_usd(self.paths.root)), 6),
            },
            "heartbeat_path": str(dispatch.heartbeat_path(self.paths, name)),
            "created_at": dispatch.now(),
        }
        flush_views(self.processor)  # the agent reads knowledge-graph.json: it must show every merge so far
        task_file = dispatch.write_task(self.paths, task)
        timeout = min(definition.timeout_seconds, self.mission.constraints.agent_timeout_seconds)
        job = dispatch.build_job(self.paths, task, task_file, definition.command, timeout)
        entry["state"] = "running"
        self.run_state["invocations"] = self.run_state.get("invocations", 0) + 1
        self._save()
        self.events.emit(
            "agent.dispatched",
            f"{name}: attempt {attempt} started" + (" with retry instructions" if retry else ""),
            agent=name,
            attempt=attempt,
            definition=definition.name,
            task=self.paths.rel(task_file),
            retry=bool(retry),
        )
        self.executor.submit(job)

    def _after_job(self, result: JobResult) -> None:
        name = result.agent
        entry = self.run_state["instances"][name]
        self.events.emit(
            "agent.finished",
            f"{name}: process {result.status} ({result.message})",
            agent=name,
            status=result.status,
            exit_code=result.exit_code,
            duration=result.duration_seconds,
            log=self.paths.rel(Path(result.log_path)),
        )
        outcome = None
        for _ in range(50):
            outcomes = self.processor.process_pending(only=[name])
            outcome = outcomes[0] if outcomes else None
            if outcome is None or outcome.status != "deferred":
                break
            time.sleep(0.05)
        if outcome is not None and outcome.status in ("merged", "noop"):
            entry["state"] = "merged"
            self._save()
            return
        if outcome is None and result.exit_code == EXIT_BUDGET_EXCEEDED:
            entry["state"] = "failed"
            self._save()
            raise BudgetExhausted(f"{name} stopped before a model call: the ${self.budget_usd:.2f} budget is spent")
        if outcome is None:
            dispatch.failure_instructions(
                self.paths, result, entry["attempts"], self.mission.constraints.max_attempts_per_agent
            )
            self.events.emit(
                "agent.failed",
                f"{name}: {result.status}, no artifacts merged",
                agent=name,
                attempt=entry["attempts"],
                status=result.status,
            )
        if entry["attempts"] < self.mission.constraints.max_attempts_per_agent:
            entry["state"] = "retry"
            self.events.emit(
                "agent.retrying",
                f"{name}: retrying (attempt {entry['attempts'] + 1} of "
                f"{self.mission.constraints.max_attempts_per_agent})",
                agent=name,
                next_attempt=entry["attempts"] + 1,
            )
            self._dispatch(name)
        else:
            entry["state"] = "failed"
            self._save()
            self.events.emit(
                "agent.gave_up",
                f"{name}: no accepted artifacts after {entry['attempts']} attempt(s)",
                agent=name,
                attempts=entry["attempts"],
            )

    # -- recovery -------------------------------------------------------------------------
    def _recover(self) -> None:
        """After a crash: process locks left pending, then settle instances that were running."""
        outcomes = {o.agent: o for o in self.processor.process_pending()}
        agents_state = load_session(self.paths).get("agents", {})
        for name, entry in self.run_state.get("instances", {}).items():
            if entry["state"] != "running":
                continue
            merged = outcomes.get(name) is not None and outcomes[name].status in ("merged", "noop")
            if merged or (
                name not in outcomes
                and agents_state.get(name, {}).get("state") == "merged"
                and agents_state[name].get("attempts", 0) >= entry["attempts"]
            ):
                entry["state"] = "merged"
            else:
                entry["state"] = "retry"
        self._save()

    # -- quality and report -----------------------------------------------------------------
    def _gate(self) -> tuple[bool, list[dict[str, Any]]]:
        from orchestrator.reporting import evaluate_quality

        graph = self._graph()
        result = evaluate_quality(self.paths, graph, self.mission)
        self.events.emit(
            "gate.evaluated",
            f"quality {result['score']}/100, gate {'passed' if result['passed'] else 'not passed'}",
            score=result["score"],
            passed=result["passed"],
            failed=[c["criterion"] for c in result["checks"] if not c["passed"]],
            recommendations=result["recommendations"],
        )
        if result["passed"]:
            return True, []
        return False, self._gap_questions(graph)

    def _can_iterate(self, new_instances: int) -> bool:
        """Another research round only if it is allowed, affordable, and the last one made progress."""
        state = self.run_state
        claims = len(self._graph().get("claims", []))
        history = state.setdefault("claims_after_iteration", [])
        progressed = not history or claims > history[-1]
        history.append(claims)
        reserve = len(self.mission.phases.fact_check) + len(self.mission.phases.synthesis)
        per_round = new_instances * len(self.mission.phases.research)
        affordable = state.get("invocations", 0) + per_round + reserve <= self.max_invocations
        in_time = self._elapsed_minutes() < 0.75 * self.max_minutes
        allowed = state["iteration"] < self.max_iterations
        if not (progressed and affordable and in_time and allowed):
            why = (
                "iteration limit reached"
                if not allowed
                else "the last iteration added no claims"
                if not progressed
                else "not enough invocations left"
                if not affordable
                else "time nearly up"
            )
            self.events.emit("iteration.stopped", f"no further research iteration: {why}", reason=why)
            return False
        return True

    def _gap_questions(self, graph: dict[str, Any]) -> list[dict[str, Any]]:
        """Sub-questions still without claims, and high-priority gaps the agents reported."""
        asked = self.run_state.get("questions", {})
        answered = {c.get("sub_question_id") for c in graph.get("claims", [])}
        gaps = []
        for qid, question in asked.items():
            if qid not in answered:
                gaps.append({**question, "depth": question.get("depth", 1) + 1})
        for gap in graph.get("gaps", []):
            if gap.get("priority") == "high" and gap["id"] not in asked:
                gaps.append(
                    {
                        "id": gap["id"],
                        "question": gap["description"],
                        "keywords": gap.get("suggested_queries", []),
                        "priority": "high",
                        "depth": 2,
                    }
                )
        return gaps[:8]

    def _finish_report(self) -> tuple[str, str | None]:
        from orchestrator.reporting import evaluate_quality, write_report

        graph = self._graph()
        violations = [p for p in self.processor.rdf.validate_full() if p.is_error]
        self.events.emit(
            "graph.validated",
            "full SHACL validation: " + (f"{len(violations)} violation(s)" if violations else "the graph conforms"),
            conforms=not violations,
            problems=[p.to_dict() for p in violations[:50]],
        )
        quality = evaluate_quality(self.paths, graph, self.mission)
        written = write_report(self.paths, graph, self.mission, quality)
        self.events.emit("report.written", f"report written: {', '.join(written)}", files=written)
        self.run_state["phase"] = "done"
        failed = [c["message"] for c in quality["checks"] if not c["passed"]]
        if violations:
            failed.append(f"the graph has {len(violations)} SHACL violation(s) (run `cconductor validate`)")
        if not failed:
            return "completed", None
        return "partial", "success criteria not met: " + "; ".join(failed)
