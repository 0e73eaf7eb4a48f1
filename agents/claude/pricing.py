"""The price table in use and the cost of one Messages API call.

The shipped rows (``price_list``, each with its page and date) can be overridden from the user
config (``prices``). A model id the table does not name is read as family + version
(``model_ids``): an unknown release of a known family takes that family's current price, with a
note saying so; only a family nobody knows is priced at the highest rate in the table, so that a
budget is never under-counted.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from agents.claude.model_ids import match_row, parse_model_id
from agents.claude.price_list import SHIPPED_PRICES, WEB_SEARCH_PER_REQUEST
from agents.claude.pricing_types import ModelPrice, UsageCounts
from orchestrator.model.errors import ConfigError

__all__ = ["DEFAULT_PRICE_TABLE", "ModelPrice", "PriceLookup", "PriceTable", "UsageCounts"]


@dataclass(frozen=True)
class PriceLookup:
    """The price used for a model id, the row it came from, and a note when the id was not in the table."""

    model: str
    row: str | None  # the table row (None: the highest rate, for a family nobody knows)
    price: ModelPrice
    note: str | None = None


@dataclass(frozen=True)
class PriceTable:
    """Per-model prices plus the per-request server-tool fees (web search: $10 per 1,000)."""

    models: Mapping[str, ModelPrice] = field(default_factory=lambda: dict(SHIPPED_PRICES))
    web_search_per_request: float = WEB_SEARCH_PER_REQUEST
    web_fetch_per_request: float = 0.0

    def lookup(self, model: str) -> PriceLookup:
        """Exact id (or without its date suffix), else the family's current row, else the highest rate."""
        found = match_row(self.models, model, within_family="current")
        if found.value is not None and found.key is not None:
            if found.exact:
                return PriceLookup(model, found.key, found.value)
            parsed = parse_model_id(found.key)
            family = parsed.family if parsed else "its"
            return PriceLookup(model, found.key, found.value, (
                f"{model} is not in the price table: priced as {found.key}, the {family} family's current model "
                f"(${found.value.input_per_mtok:g}/${found.value.output_per_mtok:g} per MTok); add "
                f"prices.models.{model} to the config if its list price differs"))
        key, price = max(self.models.items(), key=lambda kv: (kv[1].output_per_mtok, kv[1].input_per_mtok))
        return PriceLookup(model, None, price, (
            f"{model} is not a known model family: priced at the highest rate in the table (as {key}, "
            f"${price.input_per_mtok:g}/${price.output_per_mtok:g} per MTok) so that a budget is never "
            f"under-counted; add prices.models.{model} to the config"))

    def price_for(self, model: str) -> ModelPrice:
        return self.lookup(model).price

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

    def worst_case(self, model: str, prompt_tokens: int, max_output_tokens: int, *, web_searches: int = 0,
                   cache_ttl: str = "5m") -> float:
        """The most one call could cost: every prompt token at the dearest input rate (a cache write),
        every allowed output token, every allowed search."""
        writes = UsageCounts(cache_creation_input_tokens=prompt_tokens, output_tokens=max_output_tokens,
                             cache_creation_1h_input_tokens=prompt_tokens if cache_ttl == "1h" else 0,
                             web_search_requests=web_searches)
        plain = UsageCounts(input_tokens=prompt_tokens, output_tokens=max_output_tokens,
                            web_search_requests=web_searches)
        return max(self.cost(model, writes), self.cost(model, plain))

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
            fields: dict[str, Any] = {"input_per_mtok": float(spec["input"]), "output_per_mtok": float(spec["output"]),
                                      "source": f"config {where}"}
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
