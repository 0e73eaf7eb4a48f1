"""What ``cconductor models`` shows: the models in use, the price table, where each row came from,
and the capabilities applied to each model (as plain data; the command line formats it)."""

from __future__ import annotations

from typing import Any

from agents.claude.capabilities import SOURCE as CAPABILITIES_SOURCE
from agents.claude.capabilities import known_profile
from agents.claude.config import ClaudeConfig, load_config, user_config_path
from agents.claude.model_ids import parse_model_id

__all__ = ["model_catalog"]


def _row(config: ClaudeConfig, model: str) -> dict[str, Any]:
    found = config.prices.lookup(model)
    price = found.price
    capabilities = known_profile(model)
    return {
        "model": model,
        "price_row": found.row,
        "price_note": found.note,
        "input": price.input_per_mtok,
        "output": price.output_per_mtok,
        "cache_write_5m": price.write_5m,
        "cache_write_1h": price.write_1h,
        "cache_read": price.read,
        "long_context": ({"above_tokens": price.long_context_tokens, "factor": price.long_context_factor}
                         if price.long_context_tokens else None),
        "price_source": price.source,
        "capabilities": {k: v for k, v in capabilities.to_dict().items() if k != "source"},
        "capabilities_source": capabilities.source,
    }


def _order(model: str) -> tuple[str, tuple[int, ...], str]:
    """By family, newest release first; ids of no known shape last."""
    parsed = parse_model_id(model)
    if parsed is None:
        return ("~", (), model)
    padded = parsed.version + (0,) * (4 - len(parsed.version))
    return (parsed.family, tuple(-v for v in padded), model)


def model_catalog(config: ClaudeConfig | None = None) -> dict[str, Any]:
    """The table in use (shipped rows plus the user config's), the models each tier and agent uses."""
    config = config or load_config()
    in_use = {f"tier {tier}": settings.model for tier, settings in config.tiers.items()}
    for agent in config.agents:
        in_use[f"agent {agent}"] = config.settings_for("research", agent).model
    models = sorted(set(config.prices.models) | set(in_use.values()), key=_order)
    return {
        "config_file": str(user_config_path()),
        "config_file_exists": user_config_path().is_file(),
        "in_use": in_use,
        "web_search_per_request": config.prices.web_search_per_request,
        "capabilities_table_source": CAPABILITIES_SOURCE,
        "models": [_row(config, model) for model in models],
    }
