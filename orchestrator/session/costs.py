"""The cost ledger: ``costs.jsonl``, one priced model call per line, summed for budgets."""

from __future__ import annotations

from pathlib import Path

from orchestrator.session.events import read_events


def costs_path(session_root: Path) -> Path:
    return session_root / "costs.jsonl"


def total_cost_usd(session_root: Path) -> float:
    """Sum of ``cost_usd`` over every complete line (a torn last line is ignored)."""
    return round(sum(float(e.get("cost_usd", 0.0)) for e in read_events(costs_path(session_root))), 6)
