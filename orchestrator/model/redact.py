"""Keep secrets out of everything cconductor writes (events, logs, session files)."""

from __future__ import annotations

import os
import re

_KEY_PATTERNS = (
    re.compile(r"sk-ant-[A-Za-z0-9_\-]{8,}"),
    re.compile(r"(?i)(x-api-key|authorization)(\"?\s*[:=]\s*\"?)(Bearer\s+)?[A-Za-z0-9_\-\.]{8,}"),
)
SECRET_ENV_VARS = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "SEMANTIC_SCHOLAR_API_KEY", "OPENALEX_API_KEY")


def redact(text: str) -> str:
    """Replace API keys (known env values and key-shaped strings) with ``[REDACTED]``."""
    for name in SECRET_ENV_VARS:
        value = os.environ.get(name)
        if value and len(value) >= 8:
            text = text.replace(value, "[REDACTED]")
    text = _KEY_PATTERNS[0].sub("[REDACTED]", text)
    return _KEY_PATTERNS[1].sub(lambda m: m.group(1) + m.group(2) + "[REDACTED]", text)
