"""The shipped list prices of Claude models, each row with the page it was read from and when.

USD per million tokens: input, output, 5-minute and 1-hour cache writes, cache reads (each model
has its own cache rates: Fable 5.1 reads at 0.025 x input, Opus and Sonnet 5.5 at 0.05 x).
Every figure was checked on 2026-11-24 through the project's documentation search; the config's
``prices`` overrides any row, and ``cconductor models`` shows the table in use.
"""

from __future__ import annotations

from agents.claude.pricing_types import ModelPrice

__all__ = ["CHECKED", "PRICING_PAGE", "SHIPPED_PRICES", "WEB_SEARCH_PER_REQUEST"]

CHECKED = "2026-11-24"
PRICING_PAGE = "platform.claude.com/docs/en/about-claude/pricing"
_FABLE_5_2 = (
    "platform.claude.com/docs/en/models/fable-5-2/migration-guide and the 2026-11-09 release notes "
    "($8/$40, 5-minute cache writes $10, cache reads $0.20; 1-hour writes at the usual 2 x input)"
)
_SONNET_5_5 = (
    f"{PRICING_PAGE} and models/sonnet-5-5/overview; cache reads cut from $0.20 to $0.10 on 2026-10-07 "
    "(0.05 x input, as reported by price trackers re-read against the pricing page)"
)
_HAIKU_5_5 = (
    "platform.claude.com/docs/en/models/haiku-5-5 (released 2026-10-07): prompts over 100,000 tokens "
    "(input + cache reads + writes) pay five times every rate"
)


def _row(inp: float, out: float, w5: float, w1: float, read: float, source: str, *,
         long_context_tokens: int | None = None, long_context_factor: float = 1.0) -> ModelPrice:
    return ModelPrice(inp, out, w5, w1, read, long_context_tokens, long_context_factor,
                      source=f"{source} (read {CHECKED})")


SHIPPED_PRICES: dict[str, ModelPrice] = {
    # the current lineup
    "claude-fable-5-2": _row(8.0, 40.0, 10.0, 16.0, 0.20, _FABLE_5_2),
    "claude-mythos-5-2": _row(8.0, 40.0, 10.0, 16.0, 0.20, f"{_FABLE_5_2}; Mythos shares Fable's pricing"),
    "claude-opus-5-5": _row(4.0, 20.0, 5.0, 8.0, 0.20, "platform.claude.com/docs/en/models/opus-5-5/overview"),
    "claude-sonnet-5-5": _row(2.0, 10.0, 2.5, 4.0, 0.10, _SONNET_5_5),
    "claude-haiku-5-5": _row(0.10, 0.50, 0.125, 0.20, 0.01, _HAIKU_5_5,
                             long_context_tokens=100_000, long_context_factor=5.0),
    # legacy models still served
    "claude-fable-5-1": _row(10.0, 50.0, 12.5, 20.0, 0.25, PRICING_PAGE),
    "claude-mythos-5-1": _row(10.0, 50.0, 12.5, 20.0, 0.25, PRICING_PAGE),
    "claude-fable-5": _row(10.0, 50.0, 12.5, 20.0, 1.0, PRICING_PAGE),
    "claude-mythos-5": _row(10.0, 50.0, 12.5, 20.0, 1.0, PRICING_PAGE),
    "claude-opus-5": _row(5.0, 25.0, 6.25, 10.0, 0.50, f"{PRICING_PAGE} and models/opus-5/overview"),
    "claude-opus-4-8": _row(5.0, 25.0, 6.25, 10.0, 0.50, PRICING_PAGE),
    "claude-opus-4-7": _row(5.0, 25.0, 6.25, 10.0, 0.50, PRICING_PAGE),
    "claude-opus-4-6": _row(5.0, 25.0, 6.25, 10.0, 0.50, PRICING_PAGE),
    "claude-opus-4-5": _row(5.0, 25.0, 6.25, 10.0, 0.50, PRICING_PAGE),
    "claude-opus-4-1": _row(15.0, 75.0, 18.75, 30.0, 1.50, PRICING_PAGE),
    "claude-opus-4": _row(15.0, 75.0, 18.75, 30.0, 1.50, PRICING_PAGE),
    "claude-sonnet-5": _row(2.0, 10.0, 2.5, 4.0, 0.20, f"{PRICING_PAGE} and models/sonnet-5/overview"),
    "claude-sonnet-4-6": _row(3.0, 15.0, 3.75, 6.0, 0.30, PRICING_PAGE),
    "claude-sonnet-4-5": _row(3.0, 15.0, 3.75, 6.0, 0.30, PRICING_PAGE),
    "claude-sonnet-4": _row(3.0, 15.0, 3.75, 6.0, 0.30, PRICING_PAGE),
    "claude-haiku-4-5": _row(1.0, 5.0, 1.25, 2.0, 0.10, PRICING_PAGE),
    "claude-3-7-sonnet": _row(3.0, 15.0, 3.75, 6.0, 0.30, PRICING_PAGE),
    "claude-3-5-haiku": _row(0.80, 4.0, 1.0, 1.6, 0.08, PRICING_PAGE),
    "claude-3-haiku": _row(0.25, 1.25, 0.30, 0.50, 0.03, PRICING_PAGE),
    "claude-3-opus": _row(15.0, 75.0, 18.75, 30.0, 1.50, PRICING_PAGE),
}
#: Web search: $10 per 1,000 searches; web fetch costs only the tokens of the fetched content.
WEB_SEARCH_PER_REQUEST = 0.01
