"""The research run: plan -> research -> fact-check -> quality gate -> (gap iterations) -> synthesis -> report.

The run's progress is persisted in ``session.json`` (``run``), so ``resume`` continues from the
files after a crash (run/run_book.py). How each agent instance runs (processes, retries, limits) is
:class:`~orchestrator.run.instances.AgentInstances`' job; the decisions between phases are the
pure functions of :mod:`orchestrator.run.iteration`. Budgets and success criteria are enforced in code.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from orchestrator.commit.committed import CommittedView, read_committed
from orchestrator.commit.views import flush_views
from orchestrator.model.layout import SessionPaths
from orchestrator.run.checkpoint import (
    add_research_instances,
    current_research_instances,
    ensure_phase_instances,
    new_run_state,
)
from orchestrator.run.config import RunOptions
from orchestrator.run.definitions import load_definitions
from orchestrator.run.executor import Executor, LocalExecutor
from orchestrator.run.instances import EXIT_BUDGET_EXCEEDED, AgentInstances, check_definitions, required_files_of
from orchestrator.run.iteration import (
    MAX_GAP_QUESTIONS,
    final_status,
    gap_questions,
    iteration_blocker,
    planned_questions,
    source_questions,
)
from orchestrator.run.missions import Mission
from orchestrator.run.run_book import BudgetExhausted, RunBook
from orchestrator.session.costs import total_cost_usd

__all__ = ["EXIT_BUDGET_EXCEEDED", "BudgetExhausted", "MissionRunner", "RunOptions"]

PHASE_ORDER = ("prepare", "research", "fact_check", "gate", "synthesis", "report", "done")


class MissionRunner:
    """Takes a session through the mission's phases; :meth:`run` starts or resumes the run."""

    def __init__(self, paths: SessionPaths, mission: Mission, options: RunOptions, executor: Executor | None = None,
                 clock: Callable[[], float] = time.monotonic):
        definitions = load_definitions(tuple(Path(d) for d in options.agent_dirs))
        check_definitions(mission, definitions)
        self.paths, self.mission, self.options = paths, mission, options
        self.book = RunBook(paths, mission, options, required_files_of(definitions), clock)
        self.agents = AgentInstances(self.book, executor or LocalExecutor(options.max_parallel), definitions)
        self.processor, self.events, self.executor = self.book.processor, self.book.events, self.agents.executor

    @property
    def run_state(self) -> dict[str, Any]:
        return self.book.run_state

    @property
    def session(self) -> dict[str, Any]:
        return self.book.session

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
            self.book.run_state = new_run_state(self.options.to_dict())
        self.book.save(status="running", status_reason=None)
        self.events.emit(
            "run.started" if first else "run.resumed",
            f"{'starting' if first else 'resuming'} mission {self.mission.name!r} (backend {self.options.backend})",
            mission=self.mission.name,
            backend=self.options.backend,
            phase=self.run_state["phase"],
        )
        try:
            self.agents.recover()
            status, reason = self._advance()
        except BudgetExhausted as exc:
            self.executor.cancel_all()
            status, reason = self._finish_report(("budget_exhausted", str(exc)))
        except KeyboardInterrupt:  # Ctrl-C or SIGTERM: stop every agent's process group, then record it
            return self._interrupted()
        finally:
            self.run_state["elapsed_before"] = round(
                float(self.run_state.get("elapsed_before", 0.0)) + self.book.clock() - self.book.started, 3
            )
            self.book.started = self.book.clock()
        self.book.save(status=status, status_reason=reason)
        flush_views(self.processor)
        self.events.emit(
            "run.finished",
            f"run finished: {status}" + (f" ({reason})" if reason else ""),
            status=status,
            reason=reason,
            cost_usd=total_cost_usd(self.paths.root),
        )
        self.processor.close()
        return {"status": status, "reason": reason, "session": str(self.paths.root),
                "research_stopped": self.run_state.get("research_stopped")}

    def _interrupted(self) -> dict[str, Any]:
        import signal

        previous = signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C must not tear the clean-up
        try:
            self.executor.cancel_all()
            with contextlib.suppress(Exception):
                self.processor.process_pending()  # what agents finished before the interrupt still counts
            reason = f"interrupted; continue with: cconductor resume {self.paths.root.name}"
            self.book.save(status="interrupted", status_reason=reason)
            with contextlib.suppress(Exception):
                flush_views(self.processor)
            self.events.emit("run.interrupted", f"run interrupted: {reason}", status="interrupted", reason=reason,
                             resume=f"cconductor resume {self.paths.root.name}")
            self.processor.close()
        finally:
            signal.signal(signal.SIGINT, previous)
        return {"status": "interrupted", "reason": reason, "session": str(self.paths.root)}

    def _advance(self) -> tuple[str, str | None]:
        state = self.run_state
        while True:
            phase = state["phase"]
            if phase == "prepare":
                self.agents.run(self._instances("planning") + self._instances("ingestion"))
                self._report_skipped(self._instances("ingestion"))
                if not self._merged(self._instances("planning")):
                    return self._finish_failed("the research planner produced no accepted plan"
                                               + self._failures_of(self._instances("planning")))
                self._enter("research")
            elif phase == "research":
                self.agents.run(self._research_instances())
                if not any(i["state"] == "merged" for i in state["instances"].values() if i["phase"] == "research"):
                    return self._finish_failed(
                        "no research agent produced an accepted artifact set"
                        + self._failures_of([n for n, i in state["instances"].items() if i["phase"] == "research"]))
                self._enter("fact_check")
            elif phase == "fact_check":
                self.agents.run(self._instances("fact_check", fresh=True))
                self._enter("gate")
            elif phase == "gate":
                passed, gaps = self._gate()
                if passed:
                    self._stopped("the success criteria are met")
                elif not gaps:
                    self._stopped("no gap is left that another research round could fill")
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
                self.agents.run(self._instances("synthesis"))
                self._enter("report")
            elif phase == "report":
                return self._finish_report()
            else:
                raise AssertionError(f"unknown run phase {phase!r}")

    def _enter(self, phase: str) -> None:
        self.run_state["phase"] = phase
        self.book.save()
        self.events.emit(
            "phase.started",
            f"phase {phase} (iteration {self.run_state['iteration']})",
            phase=phase,
            iteration=self.run_state["iteration"],
        )

    def _report_skipped(self, names: list[str]) -> None:
        """Say which input files were not used and why (the ingestion agents' manifests)."""
        graph = self._graph()
        skipped = [s for name in names for s in (graph.get(name) or {}).get("skipped") or () if isinstance(s, dict)]
        total = sum(int((graph.get(name) or {}).get("skipped_total") or 0) for name in names) or len(skipped)
        if not total:
            return
        shown = ", ".join(f"{Path(str(s.get('path'))).name} ({s.get('reason')})" for s in skipped[:8])
        more = f", and {total - len(skipped[:8])} more (see manifest.json)" if total > len(skipped[:8]) else ""
        self.events.emit("ingest.skipped", f"skipped {total} file(s): {shown}{more}", count=total,
                         files=[{"path": s.get("path"), "reason": s.get("reason")} for s in skipped[:50]])

    def _failures_of(self, names: list[str]) -> str:
        """Why those agents failed, in their own words (the failure records of their last attempts)."""
        found = []
        for name in names:
            failure = self.run_state["instances"].get(name, {}).get("failure")
            if failure:
                found.append(f"{name} failed ({failure['kind']}): {failure['reason']}")
        return ": " + "; ".join(found) if found else ""

    def _finish_failed(self, reason: str) -> tuple[str, str]:
        self._finish_report(("failed", reason))
        return "failed", reason

    # -- instances ----------------------------------------------------------------------
    def _instances(self, phase: str, *, fresh: bool = False) -> list[str]:
        names = list(getattr(self.mission.phases, phase))
        ensure_phase_instances(self.run_state, phase, names, fresh=fresh)
        return names

    def _research_instances(self) -> list[str]:
        state = self.run_state
        existing = current_research_instances(state)
        if existing:
            return existing
        questions = state.pop("pending_questions", None) or planned_questions(
            self._graph(), self.mission.phases.planning, self.session["query"]
        )
        names = add_research_instances(state, self.mission.phases.research, questions)
        self.book.save()
        return names

    def _merged(self, names: list[str]) -> bool:
        return any(self.run_state["instances"][n]["state"] == "merged" for n in names)

    def _graph(self) -> dict[str, Any]:
        return self._view().graph

    def _view(self) -> CommittedView:
        """The committed graph, as the ledger vouches for it (views flushed first)."""
        flush_views(self.processor)
        return read_committed(self.paths, processor=self.processor, empty=True)

    # -- quality and report -----------------------------------------------------------------
    def _gate(self) -> tuple[bool, list[dict[str, Any]]]:
        from orchestrator.run.outputs import evaluate_quality

        view = self._view()
        graph = view.graph
        result = evaluate_quality(self.paths, graph, self.mission, view.sha256)
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
        asked = self.run_state.get("questions", {})
        more = gap_questions(graph, asked) + source_questions(graph, result, asked, self.session["query"])
        return False, more[:MAX_GAP_QUESTIONS]

    def _can_iterate(self, new_questions: int) -> bool:
        """Another research round, unless :func:`iteration_blocker` gives a reason against it."""
        claims = len(self._graph().get("claims", []))
        why = iteration_blocker(
            self.run_state,
            self.book.limits,
            self.mission.phases,
            new_questions=new_questions,
            claims=claims,
            elapsed_minutes=self.book.elapsed_minutes(),
        )
        self.run_state.setdefault("claims_after_iteration", []).append(claims)
        if why:
            self._stopped(why)
            return False
        return True

    def _stopped(self, why: str) -> None:
        """Say why research ends here (criteria met, iterations, budget, time, invocations, no progress)."""
        self.run_state["research_stopped"] = why
        self.events.emit("research.stopped", f"research stopped: {why}", reason=why)

    def _finish_report(self, final: tuple[str, str | None] | None = None) -> tuple[str, str | None]:
        """Validate, score, record the final status and iteration in session.json, then write the report.

        The report is rendered from session.json, so it is saved first: its footer, ``status`` and
        session.json then say the same (``final`` overrides the status the quality gate gives).
        """
        from orchestrator.run.outputs import evaluate_quality, write_report

        view = self._view()
        graph = view.graph
        violations = [p for p in self.processor.rdf.validate_full() if p.is_error]
        self.events.emit(
            "graph.validated",
            "full SHACL validation: " + (f"{len(violations)} violation(s)" if violations else "the graph conforms"),
            conforms=not violations,
            problems=[p.to_dict() for p in violations[:50]],
        )
        quality = evaluate_quality(self.paths, graph, self.mission, view.sha256)
        status, reason = final or final_status(quality, len(violations))
        self.book.save(status=status, status_reason=reason, iteration=self.run_state.get("iteration", 1))
        written = write_report(self.paths, graph, self.mission, quality)
        self.events.emit("report.written", f"report written: {', '.join(written)}", files=written)
        self.run_state["phase"] = "done"  # only now: a crash before the report is written resumes here
        return status, reason
