"""What this package contributes to the orchestrator (the ``cconductor.plugins`` entry point).

See ``orchestrator/run/plugins.py`` for the hooks; each is imported lazily so registering costs
nothing at start-up.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agents.definitions import BUILTIN_DIR, PROMPTS_DIR

definitions_dir = BUILTIN_DIR
prompts_dir = PROMPTS_DIR


def is_document(path: Path, include_notes: bool) -> bool:
    from agents.offline.ingest import is_candidate

    return is_candidate(path, include_notes) and not any(p.startswith(".") for p in path.parts[-2:-1])


class _ClaudePricer:
    """Model choice from the user's Claude config, prices from its price table."""

    def __init__(self) -> None:
        from agents.claude.config import load_config

        self._config: Any = load_config()

    def model_for(self, tier: str, agent: str) -> str:
        return str(self._config.settings_for(tier, agent).model)

    def cost(self, model: str, input_tokens: int = 0, output_tokens: int = 0, web_searches: int = 0) -> float:
        from agents.claude.pricing import UsageCounts

        usage = UsageCounts(input_tokens=input_tokens, output_tokens=output_tokens, web_search_requests=web_searches)
        return float(self._config.prices.cost(model, usage))


def pricer() -> _ClaudePricer:
    return _ClaudePricer()


def answer_composer(backend: str, session_root: Path) -> Any:
    from agents.ask import composer_for

    return composer_for(backend, session_root)


def model_catalog() -> dict[str, Any]:
    """For ``cconductor models``: the models in use, the price table with its sources, the capabilities."""
    from agents.claude.catalog import model_catalog as catalog

    return catalog()
