"""The run's progress as saved in ``session.json`` (``run``): its agent instances and their states (pure).

An instance is one run of an agent definition; researchers get one instance per sub-question
and iteration. Its state moves pending -> running -> merged, retry or failed. The state is plain
JSON so that ``resume`` can continue from the file after a crash.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any


def new_run_state(options: dict[str, Any]) -> dict[str, Any]:
    """The state of a run that has not started yet."""
    return {
        "phase": "prepare",
        "iteration": 1,
        "invocations": 0,
        "instances": {},
        "options": options,
        "elapsed_before": 0.0,
    }


def _instance(
    definition: str, phase: str, iteration: int, sub_question_ids: list[str], attempts: int
) -> dict[str, Any]:
    return {
        "definition": definition,
        "phase": phase,
        "iteration": iteration,
        "sub_question_ids": sub_question_ids,
        "state": "pending",
        "attempts": attempts,
    }


def ensure_phase_instances(run_state: dict[str, Any], phase: str, names: Iterable[str], *, fresh: bool) -> None:
    """One instance per agent of a phase; ``fresh`` starts a new one each iteration (attempts carry over)."""
    iteration = run_state["iteration"]
    instances = run_state["instances"]
    for name in names:
        entry = instances.get(name)
        if entry is None or (fresh and entry.get("iteration") != iteration and entry["state"] != "running"):
            instances[name] = _instance(name, phase, iteration, [], entry["attempts"] if entry else 0)


def current_research_instances(run_state: Mapping[str, Any]) -> list[str]:
    iteration = run_state["iteration"]
    return [
        n for n, i in run_state["instances"].items() if i["phase"] == "research" and i["iteration"] == iteration
    ]


def add_research_instances(
    run_state: dict[str, Any], definitions: Iterable[str], questions: list[dict[str, Any]]
) -> list[str]:
    """One instance per research definition and question of this iteration; the questions are remembered."""
    iteration = run_state["iteration"]
    run_state["questions"] = {**run_state.get("questions", {}), **{q["id"]: q for q in questions}}
    names = []
    for definition in definitions:
        for index, question in enumerate(questions, start=1):
            name = f"{definition}-i{iteration}-{index}"
            run_state["instances"][name] = _instance(definition, "research", iteration, [question["id"]], 0)
            names.append(name)
    return names


def settle_running(
    instances: Mapping[str, dict[str, Any]], statuses: Mapping[str, str], agents: Mapping[str, Any]
) -> None:
    """After a crash, instances left running become merged or retry.

    ``statuses`` are the outcomes of the locks processed on recovery; ``agents`` is
    ``session.json``'s record, which knows merges committed before the crash and how many
    submissions of each agent were judged. An attempt cut off before it submitted anything is
    started again under its own number (``restarted``), so the attempt that is finally judged
    has the number the log announced, as the pipeline counts it.
    """
    for name, entry in instances.items():
        if entry["state"] != "running":
            continue
        merged = statuses.get(name) in ("merged", "noop")
        if merged or (
            name not in statuses
            and agents.get(name, {}).get("state") == "merged"
            and agents[name].get("attempts", 0) >= entry["attempts"]
        ):
            entry["state"] = "merged"
        else:
            entry["state"] = "retry"
            judged = int(agents.get(name, {}).get("attempts", 0) or 0)
            if judged < entry["attempts"]:
                entry["attempts"], entry["restarted"] = judged, True
