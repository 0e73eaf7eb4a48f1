"""Model prices and the cost of one Messages API call.

Prices change; the defaults below are list prices in USD per million tokens at the time of
writing and every one of them can be overridden from the user config (``prices``). An
unknown model is priced at the most expensive known rate so a budget is never under-counted.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from orchestrator.errors import ConfigError

__all__ = ["DEFAULT_PRICE_TABLE", "ModelPrice", "PriceTable", "UsageCounts"]


@dataclass(frozen=True)
class ModelPrice:
    """USD per million tokens; cache writes and reads are multiples of the input price."""

    input_per_mtok: float
    output_per_mtok: float
    cache_write_5m_multiplier: float = 1.25
    cache_write_1h_multiplier: float = 2.0
    cache_read_multiplier: float = 0.1


@dataclass(frozen=True)
class UsageCounts:
    """The billable counters of one response (``message.usage``)."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0
    cache_creation_1h_input_tokens: int = 0  # the part of the cache writes made with the 1 h TTL
    web_search_requests: int = 0
    web_fetch_requests: int = 0

    @classmethod
    def from_usage(cls, usage: Any) -> UsageCounts:
        """Read an SDK ``Usage`` (or a plain dict); missing fields count as 0."""

        def get(obj: Any, name: str) -> Any:
            return obj.get(name) if isinstance(obj, Mapping) else getattr(obj, name, None)

        def num(obj: Any, name: str) -> int:
            value = get(obj, name) if obj is not None else None
            return int(value) if isinstance(value, int | float) else 0

        server = get(usage, "server_tool_use")
        creation = get(usage, "cache_creation")
        return cls(
            input_tokens=num(usage, "input_tokens"),
            output_tokens=num(usage, "output_tokens"),
            cache_creation_input_tokens=num(usage, "cache_creation_input_tokens"),
            cache_read_input_tokens=num(usage, "cache_read_input_tokens"),
            cache_creation_1h_input_tokens=num(creation, "ephemeral_1h_input_tokens"),
            web_search_requests=num(server, "web_search_requests"),
            web_fetch_requests=num(server, "web_fetch_requests"),
        )


_DEFAULT_MODELS: dict[str, ModelPrice] = {
    # family fallbacks (shortest prefixes) first; longer prefixes win
    "claude-opus": ModelPrice(15.0, 75.0),
    "claude-sonnet": ModelPrice(3.0, 15.0),
    "claude-haiku": ModelPrice(1.0, 5.0),
    "claude-opus-4": ModelPrice(15.0, 75.0),
    "claude-opus-4-1": ModelPrice(15.0, 75.0),
    "claude-opus-4-5": ModelPrice(5.0, 25.0),
    "claude-opus-4-6": ModelPrice(5.0, 25.0),
    "claude-opus-4-7": ModelPrice(5.0, 25.0),
    "claude-opus-4-8": ModelPrice(5.0, 25.0),
    "claude-sonnet-4": ModelPrice(3.0, 15.0),
    "claude-sonnet-4-5": ModelPrice(3.0, 15.0),
    "claude-sonnet-4-6": ModelPrice(3.0, 15.0),
    "claude-haiku-4-5": ModelPrice(1.0, 5.0),
    "claude-3-5-haiku": ModelPrice(0.8, 4.0),
    "claude-3-haiku": ModelPrice(0.25, 1.25),
}
_DATE_SUFFIX = re.compile(r"-\d{8}$")


@dataclass(frozen=True)
class PriceTable:
    """Per-model prices plus the per-request server-tool fees (web search: $10 per 1,000)."""

    models: Mapping[str, ModelPrice] = field(default_factory=lambda: dict(_DEFAULT_MODELS))
    web_search_per_request: float = 0.01
    web_fetch_per_request: float = 0.0

    def price_for(self, model: str) -> ModelPrice:
        """Exact id, then the id without its date suffix, then the longest matching prefix."""
        for candidate in (model, _DATE_SUFFIX.sub("", model)):
            if candidate in self.models:
                return self.models[candidate]
        prefixes = [k for k in self.models if model.startswith(k + "-") or model == k]
        if prefixes:
            return self.models[max(prefixes, key=len)]
        return max(self.models.values(), key=lambda p: (p.output_per_mtok, p.input_per_mtok))

    def cost(self, model: str, usage: UsageCounts) -> float:
        """USD for one call: uncached input, cache writes by TTL, cache reads, output, server tools."""
        price = self.price_for(model)
        per_token_in = price.input_per_mtok / 1_000_000
        write_1h = min(usage.cache_creation_1h_input_tokens, usage.cache_creation_input_tokens)
        write_5m = usage.cache_creation_input_tokens - write_1h
        total = (
            usage.input_tokens * per_token_in
            + write_5m * per_token_in * price.cache_write_5m_multiplier
            + write_1h * per_token_in * price.cache_write_1h_multiplier
            + usage.cache_read_input_tokens * per_token_in * price.cache_read_multiplier
            + usage.output_tokens * price.output_per_mtok / 1_000_000
            + usage.web_search_requests * self.web_search_per_request
            + usage.web_fetch_requests * self.web_fetch_per_request
        )
        return round(total, 8)

    def with_overrides(self, data: Mapping[str, Any], where: str = "config") -> PriceTable:
        """Apply ``{"models": {id: {"input": .., "output": ..}}, "web_search_per_request": ..}``."""
        if not isinstance(data, Mapping):
            raise ConfigError(f"{where}: 'prices' must be an object like {{\"models\": {{...}}}}")
        models = dict(self.models)
        for model, spec in (data.get("models") or {}).items():
            if not isinstance(spec, Mapping) or not all(
                isinstance(spec.get(k), int | float) for k in ("input", "output")
            ):
                raise ConfigError(
                    f"{where}: prices.models.{model} must be an object with numeric 'input' and 'output' "
                    '(USD per million tokens), e.g. {"input": 3, "output": 15}'
                )
            base = models.get(model, ModelPrice(0.0, 0.0))
            models[model] = replace(
                base,
                input_per_mtok=float(spec["input"]),
                output_per_mtok=float(spec["output"]),
                **{
                    attr: float(spec[key])
                    for key, attr in (
                        ("cache_write_5m_multiplier", "cache_write_5m_multiplier"),
                        ("cache_write_1h_multiplier", "cache_write_1h_multiplier"),
                        ("cache_read_multiplier", "cache_read_multiplier"),
                    )
                    if isinstance(spec.get(key), int | float)
                },
            )
        fees = {}
        for key in ("web_search_per_request", "web_fetch_per_request"):
            if key in data:
                if not isinstance(data[key], int | float) or data[key] < 0:
                    raise ConfigError(f"{where}: prices.{key} must be a non-negative number (USD)")
                fees[key] = float(data[key])
        return replace(self, models=models, **fees)


DEFAULT_PRICE_TABLE = PriceTable()
