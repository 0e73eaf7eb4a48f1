"""Every shipped mission is valid with real limits; lookup order and errors are precise."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import platformdirs
import pytest

from orchestrator.contract.schemas import SchemaRegistry
from orchestrator.model.errors import ConfigError, UsageError
from orchestrator.run.missions import SHIPPED_DIR, Mission, list_missions, load_mission, user_missions_dir

SHIPPED = [
    "academic-research",
    "competitive-analysis",
    "general-research",
    "local-documents",
    "market-research",
    "technical-analysis",
]


def shipped(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((SHIPPED_DIR / f"{name}.json").read_text(encoding="utf-8"))
    return data


def write(path: Path, data: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_the_five_missions_are_shipped() -> None:
    assert sorted(p.stem for p in SHIPPED_DIR.glob("*.json")) == SHIPPED
    assert [m.name for m in list_missions()] == SHIPPED


@pytest.mark.parametrize("name", SHIPPED)
def test_every_shipped_mission_validates_and_has_non_zero_limits(name: str) -> None:
    assert SchemaRegistry.default().validate_document("mission", shipped(name), name) == []
    mission = load_mission(name)
    assert (
        isinstance(mission, Mission)
        and mission.name == name
        and mission.source == SHIPPED_DIR / f"{name}.json"
    )
    limits = mission.constraints
    assert limits.max_iterations >= 1 and limits.max_minutes > 0
    assert limits.max_agent_invocations >= 1 and limits.budget_usd > 0
    assert limits.max_attempts_per_agent >= 1 and limits.agent_timeout_seconds > 0
    assert mission.phases.research and mission.output.citation_style == "numbered"
    assert "markdown" in mission.output.formats
    assert mission.to_dict() == {k: v for k, v in shipped(name).items() if k != "$schema"}


def test_academic_research_is_built_for_peer_reviewed_literature() -> None:
    mission = load_mission("academic-research")
    assert mission.phases.research == ("academic-researcher",)
    assert mission.phases.ingestion == ("pdf-analyzer",) and mission.phases.planning == ("research-planner",)
    assert mission.phases.fact_check == ("fact-checker",) and mission.phases.synthesis == ("synthesis-agent",)
    assert (
        mission.success_criteria.min_peer_reviewed_sources > 0 and mission.success_criteria.all_claims_cited
    )
    assert {"bibtex", "csl-json"} <= set(mission.output.formats)
    assert "Bibliography" in mission.success_criteria.required_sections


def test_the_user_config_folder_overrides_a_shipped_mission() -> None:
    data = shipped("general-research") | {"description": "My own general research."}
    data["constraints"]["budget_usd"] = 2.5
    target = write(user_missions_dir() / "general-research.json", data)
    assert target.is_relative_to(platformdirs.user_config_path("cconductor"))
    mission = load_mission("general-research")
    assert mission.source == target and mission.constraints.budget_usd == 2.5
    assert next(m for m in list_missions() if m.name == "general-research").source == target


def test_a_user_mission_with_a_new_name_is_listed() -> None:
    write(
        user_missions_dir() / "patent-search.json", shipped("technical-analysis") | {"name": "patent-search"}
    )
    assert "patent-search" in [m.name for m in list_missions()]
    assert load_mission("patent-search").name == "patent-search"


def test_an_explicit_path_works(tmp_path: Path) -> None:
    path = write(tmp_path / "custom.json", shipped("market-research") | {"name": "my-market"})
    mission = load_mission(str(path))
    assert mission.name == "my-market" and mission.source == path


def test_a_missing_path_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match=r"no mission file at .*nope\.json"):
        load_mission(str(tmp_path / "nope.json"))


def test_an_invalid_mission_names_the_file_the_pointer_and_the_fix(tmp_path: Path) -> None:
    data = shipped("general-research")
    data["constraints"]["budget_usd"] = 0
    data["constraints"]["max_cost_usd"] = 10
    path = write(tmp_path / "broken.json", data)
    with pytest.raises(ConfigError) as caught:
        load_mission(str(path))
    message = str(caught.value)
    assert str(path) in message
    assert "at /constraints/budget_usd: 0 at /constraints/budget_usd is below the minimum 0.01" in message
    assert "Fix: use a number >= 0.01" in message
    assert "max_cost_usd" in message and "remove 'max_cost_usd'" in message
    assert "Fix:" in message


def test_missing_limits_and_an_empty_research_phase_are_rejected(tmp_path: Path) -> None:
    data = shipped("general-research")
    del data["constraints"]["max_minutes"]
    data["phases"]["research"] = []
    with pytest.raises(ConfigError) as caught:
        load_mission(str(write(tmp_path / "m.json", data)))
    assert "'max_minutes'" in str(caught.value) and "/phases/research" in str(caught.value)


def test_unknown_output_format_and_bad_json_are_precise(tmp_path: Path) -> None:
    data = shipped("general-research")
    data["output"]["formats"] = ["markdown", "pdf"]
    with pytest.raises(ConfigError, match=r"/output/formats/1.*\"pdf\""):
        load_mission(str(write(tmp_path / "m.json", data)))
    bad = tmp_path / "bad.json"
    bad.write_text('{"name": "x",}', encoding="utf-8")
    with pytest.raises(ConfigError, match=r"bad\.json.*line 1"):
        load_mission(str(bad))


def test_an_unknown_name_lists_the_available_missions() -> None:
    with pytest.raises(UsageError) as caught:
        load_mission("acadmic-research")
    message = str(caught.value)
    assert "unknown mission 'acadmic-research'; did you mean 'academic-research'?" in message
    assert all(name in message for name in SHIPPED)


def test_an_invalid_user_mission_is_reported_not_skipped() -> None:
    write(user_missions_dir() / "academic-research.json", {"name": "academic-research"})
    with pytest.raises(ConfigError, match=r"academic-research\.json is invalid.*'description'"):
        load_mission("academic-research")


def test_a_file_whose_name_differs_from_its_mission_name_is_rejected() -> None:
    write(user_missions_dir() / "alias.json", shipped("general-research"))
    with pytest.raises(ConfigError, match=r"declares the name 'general-research'.*'alias'"):
        load_mission("alias")


def test_missions_are_frozen() -> None:
    mission = load_mission("general-research")
    with pytest.raises(AttributeError):
        mission.name = "other"  # type: ignore[misc]
