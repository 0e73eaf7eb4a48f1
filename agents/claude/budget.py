"""The money check made before every model call, so a spent budget sends no request.

An agent process knows two limits: what remained of the run's budget when its task was written
(``budget_usd_remaining``, against its own spending) and the session's whole budget
(``budget_usd``, against the shared ``costs.jsonl``). It lives apart from the client because the
rule is the budget's, not the transport's: the client only asks :meth:`Budget.check` first.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agents.claude.errors import BudgetExceeded
from orchestrator.session.costs import total_cost_usd

__all__ = ["Budget"]


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

    def check(self) -> None:
        if self.remaining_usd is not None and self.spent_usd >= self.remaining_usd:
            raise BudgetExceeded(
                f"budget exhausted: this agent spent ${self.spent_usd:.4f} of the ${self.remaining_usd:.4f} "
                "that remained when it started; no further model call was made"
            )
        if self.limit_usd is not None:
            total = total_cost_usd(self.session_root)
            if total >= self.limit_usd:
                raise BudgetExceeded(
                    f"budget exhausted: the session has spent ${total:.4f} of its ${self.limit_usd:.4f} "
                    "budget (costs.jsonl); no further model call was made"
                )
