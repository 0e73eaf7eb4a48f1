"""What a model accepts: forced tool use, sampling parameters, structured outputs, output size.

Current models answer some requests that older ones accepted with HTTP 400: forced
``tool_choice`` (Sonnet 5.5, Opus 5.5, Fable 5.1) and sampling parameters such as
``temperature`` (Sonnet 5 and later). The profile of a model comes from, in order: the Models
API's ``capabilities`` (structured outputs, max_tokens; fetched once and cached for a week in
the user cache folder), the shipped table below (by longest id prefix), and for an id nobody
knows a safe default that forces nothing and sends no sampling parameter.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

__all__ = ["Capabilities", "cached_profile", "profile_for", "with_models_api"]

CACHE_SECONDS = 7 * 24 * 3600
_DATE_SUFFIX = re.compile(r"-\d{8}$")


@dataclass(frozen=True)
class Capabilities:
    forced_tool_choice: bool
    sampling_parameters: bool
    structured_outputs: bool
    max_output_tokens: int
    source: str  # "models-api", "shipped table" or "safe default"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


#: Source: the model overview and "what's new" pages at platform.claude.com/docs, read through the
#: project's documentation search on 2026-11-24 (forced tool use returns an error on Sonnet 5.5,
#: Opus 5.5 and Fable 5.1; non-default sampling parameters return 400 from Sonnet 5 on).
_SHIPPED: dict[str, Capabilities] = {
    "claude-fable-5-1": Capabilities(False, False, True, 128_000, "shipped table"),
    "claude-opus-5-5": Capabilities(False, False, True, 128_000, "shipped table"),
    "claude-sonnet-5-5": Capabilities(False, False, True, 128_000, "shipped table"),
    "claude-haiku-5-5": Capabilities(True, False, True, 128_000, "shipped table"),
    "claude-fable-5": Capabilities(True, False, True, 128_000, "shipped table"),
    "claude-opus-5": Capabilities(True, False, True, 128_000, "shipped table"),
    "claude-sonnet-5": Capabilities(True, False, True, 128_000, "shipped table"),
    "claude-opus-4": Capabilities(True, True, True, 32_000, "shipped table"),
    "claude-sonnet-4": Capabilities(True, True, True, 64_000, "shipped table"),
    "claude-haiku-4": Capabilities(True, True, True, 64_000, "shipped table"),
    "claude-3": Capabilities(True, True, False, 8_192, "shipped table"),
}
#: An id nobody knows: ask for nothing a newer model might refuse.
SAFE_DEFAULT = Capabilities(False, False, True, 32_000, "safe default")


def profile_for(model: str) -> Capabilities:
    """The shipped profile for ``model`` (exact id, id without date, longest prefix), else the safe default."""
    for candidate in (model, _DATE_SUFFIX.sub("", model)):
        if candidate in _SHIPPED:
            return _SHIPPED[candidate]
    prefixes = [k for k in _SHIPPED if model.startswith(k + "-")]
    return _SHIPPED[max(prefixes, key=len)] if prefixes else SAFE_DEFAULT


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
        source="models-api",
    )


def _cache_file(model: str) -> Path:
    import platformdirs

    safe = re.sub(r"[^A-Za-z0-9._-]", "_", model)
    return platformdirs.user_cache_path("cconductor") / "models" / f"{safe}.json"


def cached_profile(model: str, fetch: Any) -> tuple[Capabilities, str | None]:
    """The model's profile, asking the Models API (``fetch(model)``) at most once a week.

    Returns (profile, note): the note says why the Models API could not be used, if it could not.
    """
    base = profile_for(model)
    path = _cache_file(model)
    try:
        cached = json.loads(path.read_text(encoding="utf-8"))
        if time.time() - float(cached["fetched_at"]) < CACHE_SECONDS:
            return with_models_api(base, cached["info"]), None
    except (OSError, ValueError, KeyError, TypeError):
        pass
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
