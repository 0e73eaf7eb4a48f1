"""Retry instructions: what an agent (or a person) must fix, written for them to act on."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from orchestrator.model.clock import iso_timestamp
from orchestrator.model.problems import Problem

#: Rule prefix -> error class, in order of precedence for the headline.
_CLASSES = (
    ("agent_name", "agent_name"),
    ("path.", "path"),
    ("size.", "size"),
    ("json.", "syntax"),
    ("artifact.", "schema"),
    ("artifacts.missing_required", "missing_files"),
    ("artifacts.", "path"),
    ("schema.", "schema"),
    ("merge.", "merge_conflict"),
    ("reference.", "reference"),
    ("citation.", "reference"),
    ("source_text.", "evidence"),
    ("stored_object.", "evidence"),
    ("evidence.", "evidence"),
    ("caption.", "evidence"),
    ("relationship.", "evidence"),
    ("claim.statement_", "evidence"),
    ("shacl.", "shacl"),
)


def error_class(problems: Sequence[Problem]) -> str:
    """The class of the first blocking problem; "internal" only for a failure of the orchestrator itself."""
    rules = [p.rule for p in problems if p.is_error]
    for prefix, name in _CLASSES:
        if any(rule.startswith(prefix) for rule in rules):
            return name
    return "internal"


def _action(agent: str, problems: Sequence[Problem], klass: str) -> str:
    count = sum(1 for p in problems if p.is_error)
    files = sorted({p.file for p in problems if p.is_error and p.file})
    where = ", ".join(files[:5]) + (" and others" if len(files) > 5 else "") if files else f"artifacts/{agent}/"
    if klass == "agent_name":
        return (
            f"Rename the lock file and the artifact folder so the agent name is valid, then recreate {agent}.kg.lock."
        )
    return (
        f"Fix the {count} problem(s) listed under 'files' and 'shacl_violations' in {where}, changing only what "
        f"each message names, then recreate {agent}.kg.lock (or rename {agent}.kg.lock.error back to it)."
    )


def build_retry_instructions(
    agent: str,
    attempt: int,
    max_attempts: int,
    problems: Sequence[Problem],
    sizes: dict[str, int],
) -> dict[str, Any]:
    klass = error_class(problems)
    by_file: dict[str, list[dict[str, Any]]] = defaultdict(list)
    violations = []
    for problem in problems:
        if problem.rule.startswith("shacl."):
            details = dict(problem.details)
            violations.append(
                {
                    "focus_node": str(details.get("focus_node", "")),
                    "path": details.get("path"),
                    "message": problem.message,
                    "hint": problem.hint,
                    "file": problem.file,
                    "pointer": problem.pointer,
                    "severity": problem.severity,
                    "preview": str(details.get("preview", "")),
                }
            )
        else:
            by_file[problem.file or f"artifacts/{agent}"].append(problem.to_dict())
    return {
        "agent": agent,
        "attempt": attempt,
        "max_attempts": max_attempts,
        "error_class": klass,
        "files": [
            {"path": path, "size": sizes.get(path), "problems": items} for path, items in sorted(by_file.items())
        ],
        "shacl_violations": violations,
        "action_required": _action(agent, problems, klass),
        "created_at": iso_timestamp(),
        "lock_file": f"{agent}.kg.lock.error",
        "artifact_dir": f"artifacts/{agent}/",
    }
