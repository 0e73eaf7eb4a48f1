"""What a model accepts: forced tool use, sampling parameters, structured outputs, output size.

Current models answer some requests that older ones accepted with HTTP 400: forced
``tool_choice`` (Fable and Mythos from 5.1, Opus 5.5, Sonnet 5.5) and sampling parameters such
as ``temperature`` (Opus 4.7 and later, every 5-series model). A model's profile comes from, in
order: the Models API's ``capabilities`` (structured outputs, max_tokens; fetched once and cached
for a week in the user cache folder), the shipped table below read by family and version (an id
the table does not name takes the behaviour of the newest release of its family at or below it,
so ``claude-fable-5-2`` or a future ``claude-opus-5-6`` works without a code change), and for a
family nobody knows a default that forces nothing and sends no sampling parameter.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from agents.claude.model_ids import match_row, parse_model_id

__all__ = ["SHIPPED", "SOURCE", "Capabilities", "cached_profile", "known_profile", "profile_for",
           "with_models_api"]

CACHE_SECONDS = 7 * 24 * 3600


@dataclass(frozen=True)
class Capabilities:
    forced_tool_choice: bool
    sampling_parameters: bool
    structured_outputs: bool
    max_output_tokens: int
    source: str = "shipped table"  # "shipped table (claude-x)", "models-api" or "safe default"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


#: Where the table comes from (``cconductor models`` shows it).
SOURCE = (
    "platform.claude.com/docs: the models overview, each model's overview, what's-new and migration pages "
    "(fable-5-2 and haiku-5-5 migration guides, sonnet-5 and sonnet-5-5 overviews: forced tool use and "
    "non-default sampling parameters return 400), read through the documentation search on 2026-11-24"
)


def _row(forced: bool, sampling: bool, structured: bool, max_out: int) -> Capabilities:
    return Capabilities(forced, sampling, structured, max_out)


#: One row per release; a release the table does not name inherits the nearest older one of its family.
SHIPPED: dict[str, Capabilities] = {
    "claude-fable-5": _row(True, False, True, 128_000),
    "claude-fable-5-1": _row(False, False, True, 128_000),  # forced tool_choice returns 400 from 5.1 on
    "claude-fable-5-2": _row(False, False, True, 128_000),  # released 2026-11-09: forcing still refused
    "claude-mythos-5": _row(True, False, True, 128_000),  # the Fable model with other safeguards
    "claude-mythos-5-1": _row(False, False, True, 128_000),
    "claude-mythos-5-2": _row(False, False, True, 128_000),
    "claude-opus-5-5": _row(False, False, True, 128_000),
    "claude-opus-5": _row(True, False, True, 128_000),
    "claude-opus-4-8": _row(True, False, True, 128_000),  # "`temperature` is deprecated for this model"
    "claude-opus-4-7": _row(True, False, True, 128_000),
    "claude-opus-4-6": _row(True, True, True, 128_000),
    "claude-opus-4-5": _row(True, True, True, 64_000),
    "claude-opus-4-1": _row(True, True, False, 32_000),
    "claude-opus-4": _row(True, True, False, 32_000),
    "claude-sonnet-5-5": _row(False, False, True, 128_000),
    "claude-sonnet-5": _row(True, False, True, 128_000),
    "claude-sonnet-4-6": _row(True, True, True, 64_000),
    "claude-sonnet-4-5": _row(True, True, True, 64_000),
    "claude-sonnet-4": _row(True, True, False, 64_000),
    "claude-haiku-5-5": _row(True, False, True, 128_000),
    "claude-haiku-4-5": _row(True, True, True, 64_000),
    "claude-3-7-sonnet": _row(True, True, False, 64_000),
    "claude-3-5-haiku": _row(True, True, False, 8_192),
    "claude-3-haiku": _row(True, True, False, 4_096),
    "claude-3-opus": _row(True, True, False, 4_096),
}
#: A family nobody knows: ask for nothing a newer model might refuse.
SAFE_DEFAULT = Capabilities(False, False, True, 32_000, "safe default")


def profile_for(model: str) -> Capabilities:
    """The shipped profile for ``model``, read by family and version; else the safe default."""
    found = match_row(SHIPPED, model)
    if found.value is None or found.key is None:
        return SAFE_DEFAULT
    parsed = parse_model_id(found.key)
    family = parsed.family if parsed else ""
    why = {
        "exact": found.key,
        "newer": f"as {found.key}, the newest known {family} release",
        "family": f"as {found.key}, the nearest older {family} release",
        "older": f"as {found.key}, the oldest known {family} release",
    }[found.how]
    return replace(found.value, source=f"shipped table ({why})")


def with_models_api(base: Capabilities, info: Any) -> Capabilities:
    """Refine ``base`` with a Models API ``ModelInfo`` (or its dict): structured outputs and max_tokens."""

    def get(obj: Any, name: str) -> Any:
        return obj.get(name) if isinstance(obj, dict) else getattr(obj, name, None)

    capabilities = get(info, "capabilities")
    structured = get(get(capabilities, "structured_outputs"), "supported") if capabilities is not None else None
    max_tokens = get(info, "max_tokens")
    return replace(
        base,
        structured_outputs=structured if isinstance(structured, bool) else base.structured_outputs,
        max_output_tokens=max_tokens if isinstance(max_tokens, int) and max_tokens > 0 else base.max_output_tokens,
        source=f"models-api + {base.source}",
    )


def _cache_file(model: str) -> Path:
    import platformdirs

    safe = re.sub(r"[^A-Za-z0-9._-]", "_", model)
    return platformdirs.user_cache_path("cconductor") / "models" / f"{safe}.json"


def _cached_info(model: str) -> Any:
    """What the Models API said of ``model`` within the last week (None: nothing fresh cached)."""
    try:
        cached = json.loads(_cache_file(model).read_text(encoding="utf-8"))
        if time.time() - float(cached["fetched_at"]) < CACHE_SECONDS:
            return cached["info"]
    except (OSError, ValueError, KeyError, TypeError):
        pass
    return None


def known_profile(model: str) -> Capabilities:
    """The profile as far as it is known without a network call: the table, refined by a fresh cache."""
    info = _cached_info(model)
    return profile_for(model) if info is None else with_models_api(profile_for(model), info)


def cached_profile(model: str, fetch: Any) -> tuple[Capabilities, str | None]:
    """The model's profile, asking the Models API (``fetch(model)``) at most once a week.

    Returns (profile, note): the note says why the Models API could not be used, if it could not.
    """
    base = profile_for(model)
    path = _cache_file(model)
    info = _cached_info(model)
    if info is not None:
        return with_models_api(base, info), None
    try:
        info = fetch(model)
    except Exception as exc:  # unreachable, unknown id, no permission: the table decides
        return base, f"the Models API did not describe {model} ({type(exc).__name__}); using the {base.source}"
    data = info.model_dump(mode="json") if hasattr(info, "model_dump") else dict(info)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.tmp")
        tmp.write_text(json.dumps({"fetched_at": time.time(), "info": data}), encoding="utf-8")
        tmp.replace(path)
    except OSError:
        pass
    return with_models_api(base, data), None
