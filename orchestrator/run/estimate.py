"""``cconductor run --dry-run``: the plan of a run and an estimated cost range, before spending.

The range comes from per-call token assumptions (below, stated in the output) priced with
the same price table the cost ledger uses; the mission's budget caps what can be spent.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from orchestrator.run.definitions import AgentDefinition
from orchestrator.run.missions import Mission

#: (calls low, calls high, input tokens per call, output tokens per call, web searches high) by phase.
ASSUMPTIONS: dict[str, tuple[int, int, int, int, int]] = {
    "planning": (1, 2, 3_000, 1_500, 0),
    "ingestion": (0, 0, 0, 0, 0),
    "research": (4, 12, 8_000, 1_200, 5),
    "fact_check": (2, 6, 12_000, 2_000, 0),
    "synthesis": (1, 3, 20_000, 4_000, 0),
}
SUB_QUESTIONS = (4, 6)
#: --describe-figures: figures per PDF (low, high) and the tokens of one description call (an image of
#: ~1,000 x 700 pixels is ~1,000 input tokens; caption and nearby text ~600; the answer ~250).
FIGURES_PER_PDF = (2, 8)
FIGURE_CALL = (1_700, 300)


def pdf_count(folders: Sequence[Path]) -> int:
    """The PDFs under the input folders (or given as files): what figure descriptions are estimated from."""
    count = 0
    for folder in folders:
        if folder.is_file():
            count += folder.suffix.lower() == ".pdf"
        elif folder.is_dir():
            count += sum(1 for p in folder.rglob("*") if p.suffix.lower() == ".pdf" and p.is_file())
    return count


@dataclass(frozen=True)
class Estimate:
    low_usd: float
    high_usd: float
    lines: list[str]

    def to_dict(self) -> dict[str, Any]:
        return {"low_usd": self.low_usd, "high_usd": self.high_usd, "plan": self.lines}


def estimate_run(mission: Mission, definitions: dict[str, AgentDefinition], backend: str,
                 figures_of: int | None = None) -> Estimate:
    """``figures_of``: with --describe-figures, the number of PDFs whose figures a vision model describes."""
    lines = [f"mission {mission.name}: {mission.objective}", f"backend: {backend}"]
    limits = mission.constraints
    if backend != "anthropic":
        for phase in ASSUMPTIONS:
            agents = getattr(mission.phases, phase)
            if agents:
                lines.append(f"  {phase:<11} {', '.join(agents)} (offline, no model calls)")
        lines.append("estimated cost: $0.00 (the offline backend makes no paid calls)")
        return Estimate(0.0, 0.0, lines)

    from orchestrator.run.plugins import pricer

    prices = pricer()
    low = high = 0.0
    iterations_high = min(limits.max_iterations, 2)
    for phase, (calls_lo, calls_hi, tokens_in, tokens_out, searches) in ASSUMPTIONS.items():
        for name in getattr(mission.phases, phase):
            definition = definitions[name]
            model = prices.model_for(definition.model_tier, name)
            instances_lo, instances_hi = (SUB_QUESTIONS[0], SUB_QUESTIONS[1] * iterations_high) \
                if phase == "research" else (1, iterations_high if phase == "fact_check" else 1)
            per_call = prices.cost(model, input_tokens=tokens_in, output_tokens=tokens_out)
            search_fee = prices.cost(model, web_searches=searches) \
                if "web_search" in definition.tools else 0.0
            cost_lo = instances_lo * calls_lo * per_call
            cost_hi = instances_hi * (calls_hi * per_call + search_fee) * 1.5  # retries
            low, high = low + cost_lo, high + cost_hi
            lines.append(f"  {phase:<11} {name:<22} {model:<20} {instances_lo}-{instances_hi} run(s), "
                         f"${cost_lo:.2f}-${cost_hi:.2f}")
    if figures_of is not None:
        describer = next(iter(mission.phases.ingestion), "pdf-analyzer")
        tier = definitions[describer].model_tier if describer in definitions else "cheap"
        model = prices.model_for(tier, describer)
        per_figure = prices.cost(model, input_tokens=FIGURE_CALL[0], output_tokens=FIGURE_CALL[1])
        count_lo, count_hi = FIGURES_PER_PDF[0] * figures_of, FIGURES_PER_PDF[1] * figures_of
        low, high = low + count_lo * per_figure, high + count_hi * per_figure
        lines.append(f"  {'figures':<11} {describer:<22} {model:<20} {count_lo}-{count_hi} description(s) of "
                     f"{figures_of} PDF(s), ${count_lo * per_figure:.2f}-${count_hi * per_figure:.2f} "
                     "(cached per image: a figure described before costs nothing)")
    capped = min(high, limits.budget_usd)
    lines.append(f"estimated cost: ${low:.2f} - ${capped:.2f}"
                 + (f" (uncapped ${high:.2f}; the run stops at its ${limits.budget_usd:.2f} budget)"
                    if high > limits.budget_usd else f" (budget ${limits.budget_usd:.2f})"))
    lines.append("assumptions: per research agent 4-12 model turns of ~8k input / 1.2k output tokens, "
                 "4-6 sub-questions per iteration, up to 2 iterations, 50% retry allowance")
    return Estimate(round(low, 2), round(capped, 2), lines)
