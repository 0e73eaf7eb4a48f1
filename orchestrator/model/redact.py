"""Keep secrets out of everything cconductor writes (events, logs, session files) and serves (the viewer).

Two kinds of match: the values of known secret environment variables, and strings shaped like the
credentials people paste by mistake (API keys of the model providers, cloud access key ids, code-host
tokens, private key blocks). Each shape is anchored at its vendor prefix, bounded by characters that
cannot continue a token and length-checked, so ordinary words (``sk-learn``, ``ask-me``, a DOI) are left
alone; a labelled value (``x-api-key: ...``, ``Authorization: Bearer ...``) keeps its label.
"""

from __future__ import annotations

import os
import re

#: Not part of a token on either side (a key inside JSON, prose or a URL query is still found).
_B, _E = r"(?<![A-Za-z0-9_\-])", r"(?![A-Za-z0-9_\-])"
_SHAPES = (
    r"sk-ant-[A-Za-z0-9_\-]{8,}",  # Anthropic
    r"sk-(?:proj|svcacct|admin)-[A-Za-z0-9_\-]{20,}",  # OpenAI project, service-account and admin keys
    r"sk-[A-Za-z0-9]{32,}",  # OpenAI (older user keys) and others in its style: no hyphen in 32+ characters
    r"(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}",  # AWS access key ids
    r"gh[pousr]_[A-Za-z0-9]{36,}",  # GitHub tokens
    r"github_pat_[A-Za-z0-9_]{22,}",  # GitHub fine-grained tokens
    r"glpat-[A-Za-z0-9_\-]{20,}",  # GitLab tokens
    r"xox[abposr]-[A-Za-z0-9\-]{10,}",  # Slack tokens
    r"AIza[0-9A-Za-z_\-]{35}",  # Google API keys
    r"hf_[A-Za-z0-9]{30,}",  # Hugging Face tokens
)
_SHAPED = re.compile("|".join(f"{_B}{shape}{_E}" for shape in _SHAPES))
_PRIVATE_KEY = re.compile(r"-----BEGIN (?:[A-Z]+ )*PRIVATE KEY-----.*?-----END (?:[A-Z]+ )*PRIVATE KEY-----", re.DOTALL)
_LABELLED = re.compile(r"(?i)(x-api-key|authorization|aws_secret_access_key)(\"?\s*[:=]\s*\"?)(Bearer\s+)?"
                       r"[A-Za-z0-9_\-\.+/]{8,}={0,2}")
SECRET_ENV_VARS = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "SEMANTIC_SCHOLAR_API_KEY", "OPENALEX_API_KEY",
                   "OPENAI_API_KEY", "GITHUB_TOKEN", "GH_TOKEN", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN",
                   "HF_TOKEN")


def redact(text: str) -> str:
    """Replace API keys (known env values and key-shaped strings) with ``[REDACTED]``."""
    for name in SECRET_ENV_VARS:
        value = os.environ.get(name)
        if value and len(value) >= 8:
            text = text.replace(value, "[REDACTED]")
    text = _SHAPED.sub("[REDACTED]", text)
    if "PRIVATE KEY-----" in text:
        text = _PRIVATE_KEY.sub("[REDACTED]", text)
    return _LABELLED.sub(lambda m: m.group(1) + m.group(2) + "[REDACTED]", text)
