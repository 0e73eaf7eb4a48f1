"""Missions: what a run is for, which agents run when, its success criteria and hard limits.

Every mission file is validated against ``schemas/mission.schema.json`` before use, so a
typo or a missing limit is a precise error instead of a silently disabled budget (the
upstream project read ``max_cost_usd`` from one mission and ``budget_usd`` from the others).
Lookup order for a name: the user's config folder, then the missions shipped here.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import platformdirs

from orchestrator.contract.jsonio import parse_json_bytes
from orchestrator.contract.schemas import SchemaRegistry
from orchestrator.model.errors import ConfigError, UsageError
from orchestrator.model.problems import Problem

SHIPPED_DIR = Path(__file__).resolve().parent
_NAME_RE = re.compile(r"^[a-z][a-z0-9-]{0,63}$")
_PHASES = ("planning", "ingestion", "research", "fact_check", "synthesis")


@dataclass(frozen=True)
class Phases:
    planning: tuple[str, ...]
    ingestion: tuple[str, ...]
    research: tuple[str, ...]
    fact_check: tuple[str, ...]
    synthesis: tuple[str, ...]

    def agents(self) -> tuple[str, ...]:
        """Every agent of the mission once, in phase order."""
        seen: dict[str, None] = {}
        for phase in _PHASES:
            seen.update(dict.fromkeys(getattr(self, phase)))
        return tuple(seen)


@dataclass(frozen=True)
class SuccessCriteria:
    """What the gate checks; a criterion that is None is not part of the mission and is not checked."""

    required_sections: tuple[str, ...]
    confidence_threshold: float | None = None
    min_sources: int | None = None
    min_peer_reviewed_sources: int | None = None
    all_claims_cited: bool | None = None
    min_quality_score: float | None = None
    min_verified_evidence_ratio: float | None = None
    min_answered_sub_questions: float | None = None
    contradictions_surfaced: bool | None = None

    def checked(self) -> dict[str, Any]:
        """The criteria the mission sets, in its schema form (what the gate takes)."""
        return {key: list(value) if isinstance(value, tuple) else value
                for key, value in vars(self).items() if value is not None}


@dataclass(frozen=True)
class Constraints:
    max_iterations: int
    max_minutes: float
    max_agent_invocations: int
    budget_usd: float
    max_attempts_per_agent: int
    agent_timeout_seconds: float


@dataclass(frozen=True)
class OutputSpec:
    formats: tuple[str, ...]
    citation_style: str


@dataclass(frozen=True)
class Mission:
    """A validated mission file; ``source`` is the file it was read from."""

    name: str
    description: str
    objective: str
    phases: Phases
    success_criteria: SuccessCriteria
    constraints: Constraints
    output: OutputSpec
    source: Path

    def to_dict(self) -> dict[str, Any]:
        """The mission in its schema form (what the gate and the renderers take)."""
        criteria = self.success_criteria.checked()
        return {
            "name": self.name,
            "description": self.description,
            "objective": self.objective,
            "phases": {phase: list(getattr(self.phases, phase)) for phase in _PHASES},
            "success_criteria": criteria,
            "constraints": dict(vars(self.constraints)),
            "output": {"formats": list(self.output.formats), "citation_style": self.output.citation_style},
        }


def user_missions_dir() -> Path:
    return platformdirs.user_config_path("cconductor") / "missions"


def _invalid(path: Path, problems: list[Problem]) -> ConfigError:
    lines = "; ".join(p.render() for p in problems[:5])
    more = f" (and {len(problems) - 5} more)" if len(problems) > 5 else ""
    return ConfigError(f"mission file {path} is invalid: {lines}{more}")


def _from_file(path: Path) -> Mission:
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"cannot read mission file {path}: {exc.strerror or exc}; check the path") from exc
    parsed = parse_json_bytes(raw, str(path))
    if not parsed.ok:
        raise _invalid(path, parsed.problems)
    problems = SchemaRegistry.default().validate_document("mission", parsed.value, str(path))
    if problems:
        raise _invalid(path, problems)
    data: dict[str, Any] = parsed.value
    phases, criteria, output = data["phases"], data["success_criteria"], data["output"]
    return Mission(
        name=data["name"],
        description=data["description"],
        objective=data["objective"],
        phases=Phases(**{phase: tuple(phases[phase]) for phase in _PHASES}),
        success_criteria=SuccessCriteria(
            **(criteria | {"required_sections": tuple(criteria["required_sections"])})
        ),
        constraints=Constraints(**data["constraints"]),
        output=OutputSpec(formats=tuple(output["formats"]), citation_style=output["citation_style"]),
        source=path,
    )


def _named_files() -> dict[str, Path]:
    """Mission name -> file; the user's folder overrides a shipped mission of the same name."""
    found = {p.stem: p for p in sorted(SHIPPED_DIR.glob("*.json"))}
    user_dir = user_missions_dir()
    if user_dir.is_dir():
        found.update({p.stem: p for p in sorted(user_dir.glob("*.json"))})
    return dict(sorted(found.items()))


def _by_name(name: str, path: Path) -> Mission:
    mission = _from_file(path)
    if mission.name != name:
        raise ConfigError(
            f"mission file {path} declares the name {mission.name!r} but is found under the name {name!r}; "
            f"set \"name\": {name!r} in the file or rename the file to {mission.name}.json"
        )
    return mission


def load_mission(name_or_path: str) -> Mission:
    """Load a mission by name, or from an explicit path to a ``.json`` file."""
    looks_like_path = name_or_path.endswith(".json") or "/" in name_or_path or "\\" in name_or_path
    if looks_like_path:
        path = Path(name_or_path).expanduser()
        if not path.is_file():
            raise UsageError(f"there is no mission file at {path}; check the path or give a mission name")
        return _from_file(path)
    files = _named_files()
    if name_or_path in files:
        return _by_name(name_or_path, files[name_or_path])
    hint = "" if _NAME_RE.fullmatch(name_or_path) else " (names are lowercase letters, digits and hyphens)"
    close = difflib.get_close_matches(name_or_path, list(files), n=1)
    if close:
        hint += f"; did you mean {close[0]!r}?"
    sentence = f"unknown mission {name_or_path!r}{hint}"
    raise UsageError(
        f"{sentence}{'' if sentence.endswith('?') else '.'} Available missions: {', '.join(files) or '(none)'}. "
        "Give one of these names or a path to a mission .json file, "
        f"or add {name_or_path}.json to {user_missions_dir()}"
    )


def default_mission(*, documents: bool, library: bool) -> str:
    """The mission a run without --mission gets: answering from the user's own documents when it has
    some (and no paper library to review), else a literature review."""
    return "local-documents" if documents and not library else "academic-research"


def list_missions() -> list[Mission]:
    """Every available mission, by name; a user mission replaces the shipped one of its name."""
    return [_by_name(name, path) for name, path in _named_files().items()]
