"""Secrets scrubbed from every text the providers produce: messages, error excerpts and httpx2 logs.

API keys travel only on the wire, but they can come back: httpx2 logs every request URL at INFO
(OpenAlex's key is a query parameter) and a server may echo a request in its error body. Every
secret the client sends is remembered here, and :func:`scrub` removes those values and anything
that looks like a ``key=`` parameter; :func:`guard_http_logs` installs the same filter on the
``httpx2`` and ``httpx`` loggers.
"""

from __future__ import annotations

import logging
import re

from orchestrator.model.redact import redact

__all__ = ["guard_http_logs", "remember_secrets", "scrub"]

_SECRET_PARAM = re.compile(r"(?i)\b(api_key|apikey|access_token|token)=([^&\s\"']+)")
_known_secrets: frozenset[str] = frozenset()  # replaced, never mutated: safe to read from any thread


def remember_secrets(secrets: list[str]) -> None:
    """Scrub these values from every later text too (an error may surface long after the request)."""
    global _known_secrets
    if not _known_secrets.issuperset(secrets):
        _known_secrets = _known_secrets | frozenset(secrets)


def scrub(text: str, secrets: list[str]) -> str:
    """``text`` without ``secrets``, the remembered secrets, ``key=`` parameter values and known key shapes."""
    for secret in [*secrets, *_known_secrets]:
        text = text.replace(secret, "[REDACTED]")
    return redact(_SECRET_PARAM.sub(r"\1=[REDACTED]", text))


class _RedactFilter(logging.Filter):
    """httpx2 logs every request URL at INFO, and OpenAlex's key is a query parameter."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        clean = scrub(message, [])
        if clean != message:
            record.msg, record.args = clean, ()
        return True


def guard_http_logs() -> None:
    """Install the scrubbing filter on the HTTP libraries' loggers (once; calling again is harmless)."""
    for name in ("httpx2", "httpx"):
        logger = logging.getLogger(name)
        if not any(isinstance(f, _RedactFilter) for f in logger.filters):
            logger.addFilter(_RedactFilter())
