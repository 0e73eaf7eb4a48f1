"""Agent definitions: metadata (JSON) beside each agent's system prompt (Markdown).

Built-in definitions come from the installed agent plugins (``agents/definitions/`` of this
repository, see ``orchestrator/run/plugins.py``); a user adds or overrides one by putting
``<name>.json`` in ``<user config>/cconductor/agents/``. An external agent is declared with a
``command`` (any program that follows docs/agent-protocol.md).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from orchestrator.model.errors import ConfigError
from orchestrator.model.layout import AGENT_NAME_RE
from orchestrator.run.plugins import definition_dirs, prompt_dirs

PHASES = ("planning", "ingestion", "research", "fact_check", "synthesis")


@dataclass(frozen=True)
class AgentDefinition:
    name: str
    description: str
    phase: str
    required_files: tuple[str, ...]
    timeout_seconds: float
    tools: tuple[str, ...] = ()
    prompt_file: Path | None = None
    implementations: dict[str, str] = field(default_factory=dict)
    command: tuple[str, ...] = ()
    model_tier: str = "research"
    source: Path | None = None

    @property
    def external(self) -> bool:
        return bool(self.command)

    def system_prompt(self) -> str:
        if self.prompt_file is None:
            return ""
        return self.prompt_file.read_text(encoding="utf-8")


def _parse(path: Path) -> AgentDefinition:
    def bad(message: str) -> ConfigError:
        return ConfigError(f"agent definition {path}: {message}")

    try:
        data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise bad(f"cannot be read as JSON ({exc}); fix the file") from exc
    name = data.get("name", path.stem)
    if not isinstance(name, str) or not AGENT_NAME_RE.fullmatch(name):
        raise bad(f"'name' must match {AGENT_NAME_RE.pattern}")
    phase = data.get("phase")
    if phase not in PHASES:
        raise bad(f"'phase' must be one of {', '.join(PHASES)}, not {phase!r}")
    command = data.get("command") or []
    implementations = data.get("implementations") or {}
    if not command and not implementations:
        raise bad("give either 'command' (an external program, list of arguments) or 'implementations'")
    if not isinstance(command, list) or not all(isinstance(a, str) for a in command):
        raise bad("'command' must be a list of strings, e.g. [\"bash\", \"my-agent.sh\", \"{session}\", \"{task}\"]")
    prompt = data.get("prompt")
    prompt_file = None
    if isinstance(prompt, str):
        prompt_file = (path.parent / prompt).resolve() if not Path(prompt).is_absolute() else Path(prompt)
        if not prompt_file.is_file():
            shipped = [d / Path(prompt).name for d in prompt_dirs() if (d / Path(prompt).name).is_file()]
            prompt_file = shipped[0] if shipped else prompt_file
    return AgentDefinition(
        name=name,
        description=str(data.get("description", "")),
        phase=phase,
        required_files=tuple(data.get("required_files", [])),
        timeout_seconds=float(data.get("timeout_seconds", 300)),
        tools=tuple(data.get("tools", [])),
        prompt_file=prompt_file,
        implementations=dict(implementations),
        command=tuple(command),
        model_tier=str(data.get("model_tier", "research")),
        source=path,
    )


def user_agents_dir() -> Path:
    import platformdirs

    return platformdirs.user_config_path("cconductor") / "agents"


@cache
def _load(extra: tuple[Path, ...]) -> dict[str, AgentDefinition]:
    found: dict[str, AgentDefinition] = {}
    for folder in (*definition_dirs(), user_agents_dir(), *extra):
        if folder.is_dir():
            for path in sorted(folder.glob("*.json")):
                definition = _parse(path)
                found[definition.name] = definition
    return found


def load_definitions(extra_dirs: tuple[Path, ...] = ()) -> dict[str, AgentDefinition]:
    """Built-in, then user, then ``extra_dirs`` definitions; later ones override earlier ones."""
    return _load(tuple(p.resolve() for p in extra_dirs))


def definition_for(instance: str, definitions: Mapping[str, AgentDefinition]) -> AgentDefinition | None:
    """An instance is named ``<definition>`` or ``<definition>-i<iteration>-<n>``."""
    if instance in definitions:
        return definitions[instance]
    base = instance.rsplit("-i", 1)[0]
    return definitions.get(base)


def required_files_for(agent: str) -> tuple[str, ...]:
    """The artifact files a known agent must provide (its definition's ``required_files``).

    Instances of a definition (``academic-researcher-i1-2``) are held to the definition's files;
    names the project does not define may follow the protocol freely.
    """
    definition = definition_for(agent, load_definitions())
    return definition.required_files if definition else ()
