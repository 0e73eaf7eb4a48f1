"""Agent packages reach the orchestrator only through the ``cconductor.plugins`` entry point."""

from __future__ import annotations

from importlib.metadata import EntryPoint
from pathlib import Path
from typing import Any

import pytest

from orchestrator.model.errors import ConfigError
from orchestrator.run import plugins
from orchestrator.run.definitions import load_definitions

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def fresh_plugins() -> Any:
    plugins.plugins.cache_clear()
    yield
    plugins.plugins.cache_clear()


def test_the_agents_package_registers_its_definitions_and_prompts() -> None:
    assert ROOT / "agents" / "definitions" in plugins.definition_dirs()
    assert ROOT / "agents" / "prompts" in plugins.prompt_dirs()
    definitions = load_definitions()
    assert {"research-planner", "academic-researcher", "fact-checker", "synthesis-agent"} <= set(definitions)
    assert definitions["research-planner"].system_prompt().strip(), "the prompt file is found through the plugin"


def test_document_filter_and_pricer_come_from_the_plugin(tmp_path: Path) -> None:
    (tmp_path / "paper.pdf").write_bytes(b"%PDF-1.4")
    (tmp_path / "README.md").write_text("notes")
    assert plugins.is_document(tmp_path / "paper.pdf", include_notes=False)
    assert not plugins.is_document(tmp_path / "README.md", include_notes=False)
    assert plugins.is_document(tmp_path / "README.md", include_notes=True)
    pricer = plugins.pricer()
    model = pricer.model_for("research", "academic-researcher")
    assert model.startswith("claude-")
    assert pricer.cost(model, input_tokens=1_000_000) > 0


def _entry_points(*points: EntryPoint) -> Any:
    return lambda group: list(points) if group == plugins.GROUP else []


def test_a_broken_plugin_is_named_with_the_fix(monkeypatch: pytest.MonkeyPatch) -> None:
    broken = EntryPoint("broken", "no_such_module_for_cconductor", plugins.GROUP)
    monkeypatch.setattr(plugins, "entry_points", _entry_points(broken))
    with pytest.raises(ConfigError, match=r"plugin 'broken'.*reinstall"):
        plugins.plugins()


def test_without_any_plugin_the_hooks_say_what_to_install(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(plugins, "entry_points", _entry_points())
    assert plugins.definition_dirs() == ()
    with pytest.raises(ConfigError, match="pip install"):
        plugins.is_document(tmp_path / "x.pdf", include_notes=False)
    with pytest.raises(ConfigError, match="pip install"):
        plugins.pricer()
