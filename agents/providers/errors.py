"""How a scholarly source or a download fails, as one small hierarchy callers can act on.

Agents and tools treat a provider failure as a notice, not a crash; the subclass says whether to
wait (:class:`ProviderRateLimited`), skip the host (:class:`ProviderUnavailable`) or distrust the
answer (:class:`ProviderResponseError`). Every message is redacted when the error is made, so an
API key in a URL can never reach a log or a tool result through ``str()``.
"""

from __future__ import annotations

from orchestrator.model.errors import CconductorError
from orchestrator.model.redact import redact

__all__ = ["ProviderError", "ProviderRateLimited", "ProviderResponseError", "ProviderUnavailable"]


class ProviderError(CconductorError):
    """A scholarly source or download failed; ``str()`` says what happened and what to do.

    ``status`` is the HTTP status if any, ``retry_after`` the seconds a 429 asked for, and
    ``skipped`` is true when no request was made because the host was already known to be down.
    """

    def __init__(self, message: str, *, provider: str = "", url: str = "", status: int | None = None,
                 retry_after: float | None = None, skipped: bool = False) -> None:
        super().__init__(redact(message))
        self.provider, self.url, self.status = provider, url, status
        self.retry_after, self.skipped = retry_after, skipped


class ProviderUnavailable(ProviderError):
    """Network down, DNS failure, connection refused, timeout or a failing server."""


class ProviderRateLimited(ProviderError):
    """HTTP 429 that retrying within ``max_retry_wait`` did not cure."""


class ProviderResponseError(ProviderError):
    """The server answered, but with an error status or a body we cannot parse."""
