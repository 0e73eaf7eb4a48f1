"""Agent packages register with the orchestrator through the ``cconductor.plugins`` entry points.

The orchestrator never imports an agent package by name (the arrow points from agents to the
orchestrator only). An installed package announces itself in its ``pyproject.toml``::

    [project.entry-points."cconductor.plugins"]
    agents = "agents.plugin"

and the named module may offer any of: ``definitions_dir`` and ``prompts_dir`` (folders of agent
definitions and their prompts), ``is_document(path, include_notes)`` (could this input file be
researched?), ``pricer()`` (model choice and prices for ``run --dry-run``),
``model_catalog()`` (the models, prices and capabilities ``cconductor models`` shows) and
``answer_composer(backend, session_root)`` (the writer of ``cconductor ask`` answers).
"""

from __future__ import annotations

from functools import cache
from importlib.metadata import entry_points
from pathlib import Path
from types import ModuleType
from typing import Any, Protocol

from orchestrator.model.errors import ConfigError

GROUP = "cconductor.plugins"


class Pricer(Protocol):
    """Which model an agent would use and what a call costs: enough for a cost estimate."""

    def model_for(self, tier: str, agent: str) -> str: ...

    def cost(self, model: str, input_tokens: int = 0, output_tokens: int = 0, web_searches: int = 0) -> float: ...


@cache
def plugins() -> tuple[ModuleType, ...]:
    """The registered plugin modules, in name order (so later ones override earlier definitions)."""
    loaded = []
    for point in sorted(entry_points(group=GROUP), key=lambda p: p.name):
        try:
            loaded.append(point.load())
        except Exception as exc:  # a broken plugin is named, never a traceback
            raise ConfigError(f"the cconductor plugin '{point.name}' ({point.value}) cannot be loaded: {exc}; "
                              "reinstall the package that provides it or uninstall it") from exc
    return tuple(loaded)


def _folders(attribute: str) -> tuple[Path, ...]:
    return tuple(Path(getattr(p, attribute)) for p in plugins() if getattr(p, attribute, None))


def definition_dirs() -> tuple[Path, ...]:
    return _folders("definitions_dir")


def prompt_dirs() -> tuple[Path, ...]:
    return _folders("prompts_dir")


def is_document(path: Path, include_notes: bool) -> bool:
    """True when any plugin could research this file."""
    checks = [p.is_document for p in plugins() if hasattr(p, "is_document")]
    if not checks:
        raise ConfigError("no agent package is installed to read input documents; install cconductor with its "
                          "agents (pip install -e .)")
    return any(check(path, include_notes) for check in checks)


def pricer() -> Pricer:
    for plugin in plugins():
        if hasattr(plugin, "pricer"):
            made: Pricer = plugin.pricer()
            return made
    raise ConfigError("no installed agent package prices model calls; install cconductor with its agents "
                      "(pip install -e .) or estimate with the offline backend")


def model_catalog() -> dict[str, Any]:
    """The model table of the installed agents (``cconductor models``): plain data, see agents/claude/catalog.py."""
    for plugin in plugins():
        if hasattr(plugin, "model_catalog"):
            found: dict[str, Any] = plugin.model_catalog()
            return found
    raise ConfigError("no installed agent package calls models; install cconductor with its agents "
                      "(pip install -e .)")


def answer_composer(backend: str, session_root: Path) -> Any:
    """The answering backend of ``cconductor ask`` (an ``orchestrator.answers.data.Composer``)."""
    for plugin in plugins():
        if hasattr(plugin, "answer_composer"):
            return plugin.answer_composer(backend, session_root)
    raise ConfigError("no installed agent package writes answers; install cconductor with its agents "
                      "(pip install -e .)")
