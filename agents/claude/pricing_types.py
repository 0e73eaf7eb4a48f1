"""The two value types of pricing: what a model costs per token, and what one response used.

Kept apart from the table (``pricing``) and its shipped rows (``price_list``) so that both can
import them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["ModelPrice", "UsageCounts"]


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
    source: str = ""  # where the figures come from: a page and the date it was read, or the config file

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
