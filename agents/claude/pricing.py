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

from orchestrator.model.errors import ConfigError

__all__ = ["DEFAULT_PRICE_TABLE", "ModelPrice", "PriceTable", "UsageCounts"]


@dataclass(frozen=True)
class ModelPrice:
    """USD per million tokens. Cache rates are each model's own, not a fixed multiple of input.

    ``long_context_tokens``: prompts longer than this (input + cache reads + cache writes) are
    billed at every rate times ``long_context_factor`` (Haiku 5.5: five times above 100,000).
    """

    input_per_mtok: float
    output_per_mtok: float
    cache_write_5m_per_mtok: float | None = None  # None: 1.25 x input (the rate of older models)
    cache_write_1h_per_mtok: float | None = None  # None: 2 x input
    cache_read_per_mtok: float | None = None  # None: 0.1 x input
    long_context_tokens: int | None = None
    long_context_factor: float = 1.0

    @property
    def write_5m(self) -> float:
        return self.cache_write_5m_per_mtok if self.cache_write_5m_per_mtok is not None else 1.25 * self.input_per_mtok

    @property
    def write_1h(self) -> float:
        return self.cache_write_1h_per_mtok if self.cache_write_1h_per_mtok is not None else 2.0 * self.input_per_mtok

    @property
    def read(self) -> float:
        return self.cache_read_per_mtok if self.cache_read_per_mtok is not None else 0.1 * self.input_per_mtok


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


#: List prices, USD per million tokens: input, output, 5-minute and 1-hour cache writes, cache reads.
#: Source: the model overview pages at platform.claude.com/docs (models/<id>/overview), read through
#: the project's documentation search on 2026-11-24. Haiku 5.5's cache writes were not on the pages
#: consulted: the customary 1.25x / 2x of input are used until confirmed (override in the config).
_DEFAULT_MODELS: dict[str, ModelPrice] = {
    # family fallbacks (shortest prefixes) first; longer prefixes win
    "claude-fable": ModelPrice(10.0, 50.0, 12.5, 20.0, 0.25),
    "claude-opus": ModelPrice(4.0, 20.0, 5.0, 8.0, 0.20),
    "claude-sonnet": ModelPrice(2.0, 10.0, 2.5, 4.0, 0.20),
    "claude-haiku": ModelPrice(0.10, 0.50, None, None, 0.01, 100_000, 5.0),
    # the current lineup
    "claude-fable-5-1": ModelPrice(10.0, 50.0, 12.5, 20.0, 0.25),
    "claude-opus-5-5": ModelPrice(4.0, 20.0, 5.0, 8.0, 0.20),
    "claude-sonnet-5-5": ModelPrice(2.0, 10.0, 2.5, 4.0, 0.20),
    "claude-haiku-5-5": ModelPrice(0.10, 0.50, None, None, 0.01, 100_000, 5.0),
    # legacy models still served
    "claude-fable-5": ModelPrice(10.0, 50.0, 12.5, 20.0, 1.0),
    "claude-opus-5": ModelPrice(5.0, 25.0, 6.25, 10.0, 0.50),
    "claude-sonnet-5": ModelPrice(2.0, 10.0, 2.5, 4.0, 0.20),
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
        write_1h = min(usage.cache_creation_1h_input_tokens, usage.cache_creation_input_tokens)
        write_5m = usage.cache_creation_input_tokens - write_1h
        prompt = usage.input_tokens + usage.cache_read_input_tokens + usage.cache_creation_input_tokens
        factor = price.long_context_factor if price.long_context_tokens and prompt > price.long_context_tokens else 1.0
        tokens = (
            usage.input_tokens * price.input_per_mtok
            + write_5m * price.write_5m
            + write_1h * price.write_1h
            + usage.cache_read_input_tokens * price.read
            + usage.output_tokens * price.output_per_mtok
        )
        total = (
            tokens * factor / 1_000_000
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
            fields: dict[str, Any] = {"input_per_mtok": float(spec["input"]), "output_per_mtok": float(spec["output"])}
            for key in ("cache_write_5m", "cache_write_1h", "cache_read"):
                if isinstance(spec.get(key), int | float):
                    fields[f"{key}_per_mtok"] = float(spec[key])
                elif isinstance(spec.get(f"{key}_multiplier"), int | float):  # older config files
                    fields[f"{key}_per_mtok"] = float(spec[f"{key}_multiplier"]) * float(spec["input"])
            if isinstance(spec.get("long_context_tokens"), int) and isinstance(spec.get("long_context_factor"),
                                                                                int | float):
                fields.update(long_context_tokens=spec["long_context_tokens"],
                              long_context_factor=float(spec["long_context_factor"]))
            models[model] = replace(base, **fields)
        fees = {}
        for key in ("web_search_per_request", "web_fetch_per_request"):
            if key in data:
                if not isinstance(data[key], int | float) or data[key] < 0:
                    raise ConfigError(f"{where}: prices.{key} must be a non-negative number (USD)")
                fees[key] = float(data[key])
        return replace(self, models=models, **fees)


DEFAULT_PRICE_TABLE = PriceTable()
