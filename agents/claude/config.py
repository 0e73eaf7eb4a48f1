"""Settings of the Claude backend: models per tier and agent, limits, timeouts, prices.

Three layers, later ones win: the defaults here, the user config file
``<user config dir>/cconductor/config.json`` and the task's ``options.models`` (set by the
orchestrator per run). Model ids live here and in config, never in the agents::

    {"models": {"research": "claude-sonnet-5-5",
                "cheap": {"model": "claude-haiku-5-5", "max_tokens": 4096},
                "synthesis-agent": {"model": "claude-opus-5-5"}},
     "prices": {"models": {"claude-opus-5-5": {"input": 4, "output": 20, "cache_read": 0.2}},
                "web_search_per_request": 0.01},
     "anthropic": {"timeout_seconds": 120, "max_retries": 4, "max_turns": 16, "web_search": {"max_uses": 5},
                   "web_fetch": {"max_uses": 5, "allowed_domains": ["arxiv.org"]}}}

A key of ``models`` other than a tier names an agent instance or definition.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from agents.claude.pricing import DEFAULT_PRICE_TABLE, PriceTable
from orchestrator.model.errors import ConfigError

__all__ = ["TIERS", "ClaudeConfig", "ModelSettings", "load_config", "user_config_path"]

TIERS = ("cheap", "research")


@dataclass(frozen=True)
class ModelSettings:
    model: str
    max_tokens: int
    #: None (the default) sends none. A number is sent (through ``extra_body``) only to models that accept
    #: it; for the others (Opus 4.7 on, the 5-series) the config is refused at load.
    temperature: float | None = None

    def updated(self, spec: Any, where: str) -> ModelSettings:
        """This setting with ``spec`` (a model id, or an object of fields) applied."""
        if isinstance(spec, str) and spec:
            return replace(self, model=spec)
        if not isinstance(spec, Mapping):
            raise ConfigError(f'{where} must be a model id or an object like {{"model": "claude-haiku-4-5"}}')
        unknown = sorted(set(spec) - {"model", "max_tokens", "temperature"})
        if unknown:
            raise ConfigError(
                f"{where} has unknown key(s) {', '.join(unknown)}; use model, max_tokens, temperature"
            )
        out = self
        if "model" in spec:
            if not isinstance(spec["model"], str) or not spec["model"]:
                raise ConfigError(f'{where}.model must be a non-empty model id, e.g. "claude-sonnet-4-6"')
            out = replace(out, model=spec["model"])
        if "max_tokens" in spec:
            value = spec["max_tokens"]
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ConfigError(f"{where}.max_tokens must be a positive integer")
            out = replace(out, max_tokens=value)
        if "temperature" in spec:
            value = spec["temperature"]
            if value is not None and (not isinstance(value, int | float) or not 0 <= value <= 1):
                raise ConfigError(f"{where}.temperature must be a number from 0 to 1, or null")
            out = replace(out, temperature=None if value is None else float(value))
        return out


def _default_tiers() -> dict[str, ModelSettings]:
    # The current lineup (platform.claude.com/docs model pages, checked 2026-11-24): Sonnet 5.5 for
    # research and synthesis, Haiku 5.5 for cheap steps. Override per tier or agent in the config.
    return {
        "research": ModelSettings("claude-sonnet-5-5", 8192),
        "cheap": ModelSettings("claude-haiku-5-5", 4096),
    }


@dataclass(frozen=True)
class ClaudeConfig:
    tiers: Mapping[str, ModelSettings] = field(default_factory=_default_tiers)
    agents: Mapping[str, Any] = field(default_factory=dict)
    prices: PriceTable = DEFAULT_PRICE_TABLE
    base_url: str | None = None
    timeout_seconds: float = 120.0
    connect_timeout_seconds: float = 10.0
    #: timeout_seconds bounds each wait for the stream's next bytes; a whole call may take
    #: max(timeout_seconds, max_tokens / min_output_tokens_per_second) and never more than the agent has left.
    min_output_tokens_per_second: float = 40.0
    #: Attempts after the first for transient failures (rate limits, overload, 5xx, broken streams; our loop).
    max_retries: int = 4
    retry_base_seconds: float = 1.0
    retry_max_seconds: float = 60.0
    #: Ask the Models API what the model supports (cached a week); off: the shipped table only.
    discover_capabilities: bool = True
    max_tokens_cap: int = 32_000
    max_turns: int = 16
    #: With less time than this left, the agent stops researching and gives its final answer.
    final_answer_seconds: float = 60.0
    max_tool_calls: int = 40
    max_reasks: int = 2
    strict_tools: bool = False
    cache_ttl: str = "5m"
    web_search: Mapping[str, Any] = field(default_factory=lambda: {"max_uses": 5})
    web_fetch: Mapping[str, Any] = field(default_factory=lambda: {"max_uses": 8, "max_content_tokens": 30000})
    web_search_type: str = "web_search_20260318"
    web_fetch_type: str = "web_fetch_20260318"

    def settings_for(self, tier: str, *names: str) -> ModelSettings:
        """The tier's settings with the first matching per-agent override (instance before definition)."""
        if tier not in self.tiers:
            raise ConfigError(f"unknown model tier {tier!r}; agent definitions use one of {', '.join(TIERS)}")
        settings = self.tiers[tier]
        for name in names:
            if name in self.agents:
                return settings.updated(self.agents[name], f"models.{name}")
        return settings

    def with_models(self, models: Any, where: str) -> ClaudeConfig:
        if models is None:
            return self
        if not isinstance(models, Mapping):
            raise ConfigError(f"{where} must be an object keyed by tier ({', '.join(TIERS)}) or agent name")
        tiers = dict(self.tiers)
        agents = dict(self.agents)
        for key, spec in models.items():
            if key in TIERS:
                tiers[key] = tiers[key].updated(spec, f"{where}.{key}")
            else:
                ModelSettings("x", 1).updated(spec, f"{where}.{key}")  # validate now, apply per agent
                agents[key] = spec
        return replace(self, tiers=tiers, agents=agents)

    def with_settings(self, data: Any, where: str) -> ClaudeConfig:
        """Apply the ``anthropic`` object of the config file (types checked against the defaults)."""
        if data is None:
            return self
        if not isinstance(data, Mapping):
            raise ConfigError(f"{where} must be an object")
        known = {f.name for f in fields(self)} - {"tiers", "agents", "prices"}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ConfigError(
                f"{where} has unknown key(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}"
            )
        changes: dict[str, Any] = {}
        for key, value in data.items():
            current = getattr(self, key)
            ok = (
                (key == "base_url" and (value is None or isinstance(value, str)))
                or (isinstance(current, bool) and isinstance(value, bool))
                or (
                    isinstance(current, int)
                    and not isinstance(current, bool)
                    and isinstance(value, int)
                    and not isinstance(value, bool)
                    and value >= 0
                )
                or (isinstance(current, float) and isinstance(value, int | float) and value > 0)
                or (isinstance(current, str) and isinstance(value, str) and value)
                or (isinstance(current, Mapping) and isinstance(value, Mapping))
            )
            if not ok:
                raise ConfigError(f"{where}.{key} has the wrong type: expected one like {current!r}")
            if isinstance(current, Mapping):
                value = {**current, **value}  # a server-tool option changes only the keys it names
            changes[key] = float(value) if isinstance(current, float) else value
        return replace(self, **changes)


def check_model_settings(settings: ModelSettings, where: str) -> None:
    """Reject at load what the model cannot take (the API would answer HTTP 400 on every call)."""
    from agents.claude.capabilities import profile_for

    profile = profile_for(settings.model)
    if settings.temperature is not None and not profile.sampling_parameters:
        raise ConfigError(
            f"{where}: {settings.model} does not accept sampling parameters (temperature) - the API answers HTTP 400"
            f" ({profile.source}); remove temperature, or choose a model that accepts it"
        )
    if settings.max_tokens > profile.max_output_tokens:
        raise ConfigError(
            f"{where}: max_tokens {settings.max_tokens} is more than {settings.model} can write "
            f"({profile.max_output_tokens}, {profile.source}); lower it"
        )


def user_config_path() -> Path:
    import platformdirs

    return platformdirs.user_config_path("cconductor") / "config.json"


def load_config(task_options: Mapping[str, Any] | None = None, path: Path | None = None) -> ClaudeConfig:
    """Defaults, then the user config file (if any), then the task's ``options.models``."""
    path = path or user_config_path()
    config = ClaudeConfig()
    if path.is_file():
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            raise ConfigError(
                f"the config file {path} cannot be read as JSON ({exc}); fix or remove it"
            ) from exc
        if not isinstance(data, dict):
            raise ConfigError(f"the config file {path} must hold a JSON object")
        config = config.with_models(data.get("models"), f"{path}: models")
        if "prices" in data:
            config = replace(config, prices=config.prices.with_overrides(data["prices"], f"{path}"))
        config = config.with_settings(data.get("anthropic"), f"{path}: anthropic")
    options = task_options or {}
    config = config.with_models(options.get("models"), "task options.models")
    for tier, settings in config.tiers.items():
        check_model_settings(settings, f"models.{tier}")
    for name in config.agents:
        check_model_settings(config.settings_for("research", name), f"models.{name}")
    return config
