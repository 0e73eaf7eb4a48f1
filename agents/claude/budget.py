"""The money check made before every model call, so that no call can take a budget past its limit.

An agent process knows two limits: what remained of the run's budget when its task was written
(``budget_usd_remaining``, against its own spending) and the session's whole budget
(``budget_usd``, against the shared ``costs.jsonl``). Before a call is sent, the most it could
cost (:func:`worst_case_usd`: every allowed output token, the prompt at the dearest input rate,
every allowed search and fetch) must fit in what is left of both; otherwise nothing is sent.
It lives apart from the client because the rule is the budget's, not the transport's.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agents.claude.errors import BudgetExceeded
from agents.claude.pricing import PriceTable
from orchestrator.session.costs import total_cost_usd

__all__ = ["Budget", "estimate_prompt_tokens", "worst_case_usd"]

#: Characters per token assumed for text: fewer than the ~3.5-4 of English prose, so estimates err high.
CHARS_PER_TOKEN = 3.0
#: Decoded bytes per token assumed for base64 documents (a PDF page is ~1,500-3,000 tokens) and images.
_BYTES_PER_TOKEN = {"application/pdf": 30.0}
_IMAGE_BYTES_PER_TOKEN = 100.0
#: Content a web fetch may add to the prompt when its tool sets no max_content_tokens.
_FETCH_TOKENS_UNCAPPED = 100_000


def estimate_prompt_tokens(request: Mapping[str, Any]) -> int:
    """An upper estimate of a request's prompt tokens (system, tools, messages), without asking the API."""
    binary = 0.0

    def strip(node: Any) -> Any:
        nonlocal binary
        if isinstance(node, Mapping):
            if node.get("type") == "base64" and isinstance(node.get("data"), str):
                size = len(node["data"]) * 3 / 4
                media = str(node.get("media_type", ""))
                binary += size / _BYTES_PER_TOKEN.get(media, _IMAGE_BYTES_PER_TOKEN)
                return {k: v for k, v in node.items() if k != "data"}
            return {k: strip(v) for k, v in node.items()}
        if isinstance(node, list | tuple):
            return [strip(v) for v in node]
        return node

    text = json.dumps(strip({k: request.get(k) for k in ("system", "tools", "messages")}), ensure_ascii=False)
    return int(len(text) / CHARS_PER_TOKEN + binary) + 1


def _server_tool_allowance(tools: Sequence[Mapping[str, Any]] | None) -> tuple[int, int]:
    """(searches, fetched prompt tokens) the server tools of one request may add at most."""
    searches = fetched = 0
    for tool in tools or ():
        uses = tool.get("max_uses")
        uses = uses if isinstance(uses, int) and uses > 0 else 10
        if tool.get("name") == "web_search":
            searches += uses
        elif tool.get("name") == "web_fetch":
            cap = tool.get("max_content_tokens")
            fetched += uses * (cap if isinstance(cap, int) and cap > 0 else _FETCH_TOKENS_UNCAPPED)
    return searches, fetched


def worst_case_usd(prices: PriceTable, model: str, request: Mapping[str, Any], max_tokens: int,
                   cache_ttl: str = "5m") -> float:
    """The most the call described by ``request`` (its system, tools, messages) could cost."""
    searches, fetched = _server_tool_allowance(request.get("tools"))
    prompt = estimate_prompt_tokens(request) + fetched
    return prices.worst_case(model, prompt, max_tokens, web_searches=searches, cache_ttl=cache_ttl)


@dataclass
class Budget:
    """Checked before every call: this process's spending against ``budget_usd_remaining``
    (what was left when the task was written) and the session ledger against ``budget_usd``."""

    session_root: Path
    limit_usd: float | None = None
    remaining_usd: float | None = None
    spent_usd: float = 0.0

    @classmethod
    def from_options(cls, session_root: Path, options: Mapping[str, Any]) -> Budget:
        def number(key: str) -> float | None:
            value = options.get(key)
            return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None

        return cls(session_root, number("budget_usd"), number("budget_usd_remaining"))

    def check(self, upcoming_usd: float = 0.0, what: str = "the next model call") -> None:
        """Raise :class:`BudgetExceeded` when the budget is spent or ``upcoming_usd`` would overspend it."""
        could = f"{what} could cost up to ${upcoming_usd:.4f}"
        if self.remaining_usd is not None:
            left = self.remaining_usd - self.spent_usd
            if left <= 0:
                raise BudgetExceeded(
                    f"budget exhausted: this agent spent ${self.spent_usd:.4f} of the ${self.remaining_usd:.4f} "
                    "that remained when it started; no further model call was made"
                )
            if upcoming_usd > left:
                raise BudgetExceeded(
                    f"budget exhausted: {could}, more than the ${left:.4f} this agent has left of the "
                    f"${self.remaining_usd:.4f} that remained when it started; no further model call was made"
                )
        if self.limit_usd is not None:
            total = total_cost_usd(self.session_root)
            if total >= self.limit_usd:
                raise BudgetExceeded(
                    f"budget exhausted: the session has spent ${total:.4f} of its ${self.limit_usd:.4f} "
                    "budget (costs.jsonl); no further model call was made"
                )
            if total + upcoming_usd > self.limit_usd:
                raise BudgetExceeded(
                    f"budget exhausted: {could}, more than the ${self.limit_usd - total:.4f} left of the "
                    f"session's ${self.limit_usd:.4f} budget (costs.jsonl); no further model call was made"
                )
