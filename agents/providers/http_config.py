"""The network settings of the scholarly providers, read once from the config and the environment.

Politeness and test seams are settings: the contact address in the ``User-Agent``, per-host
request spacing, retries, the cache, and per-provider base URLs that redirect a provider's API
requests (a mirror, a recording proxy, the tests' fake server). A malformed base URL is a
:class:`~orchestrator.model.errors.ConfigError`, because silently ignoring it would send the
requests to the real API.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import httpx2
import platformdirs

from orchestrator import __version__
from orchestrator.model.errors import ConfigError

__all__ = [
    "BASE_URL_ENV_PREFIX",
    "CONTACT_ENV",
    "DEFAULT_INTERVAL",
    "DEFAULT_INTERVALS",
    "PROVIDER_ORIGINS",
    "Clock",
    "HttpConfig",
    "Sleep",
]

CONTACT_ENV = "CCONDUCTOR_CONTACT_EMAIL"
#: Minimum seconds between two requests to one host. arXiv's API terms ask for one request every
#: three seconds; Semantic Scholar grants one per second to a key; Crossref and OpenAlex allow ~10/s.
DEFAULT_INTERVALS: Mapping[str, float] = {
    "export.arxiv.org": 3.0,
    "arxiv.org": 3.0,
    "api.semanticscholar.org": 1.0,
    "api.crossref.org": 0.2,
    "api.openalex.org": 0.15,
}
DEFAULT_INTERVAL = 0.25
#: The API origin of each scholarly provider. A base-URL override (a mirror, a recording proxy, a test
#: server) replaces this origin in every API request of that provider: set it in the HTTP config as
#: ``{"base_urls": {"openalex": "http://127.0.0.1:8000/openalex"}}`` or in the environment as
#: ``CCONDUCTOR_PROVIDER_BASE_URL_OPENALEX`` (names: OPENALEX, CROSSREF, SEMANTICSCHOLAR, ARXIV).
PROVIDER_ORIGINS: Mapping[str, str] = {
    "openalex": "https://api.openalex.org",
    "crossref": "https://api.crossref.org",
    "semanticscholar": "https://api.semanticscholar.org",
    "arxiv": "https://export.arxiv.org",
}
BASE_URL_ENV_PREFIX = "CCONDUCTOR_PROVIDER_BASE_URL_"
#: Time seams: tests inject a fake clock and sleep into the cache, the rate limiter and the client.
Clock = Callable[[], float]
Sleep = Callable[[float], None]


@dataclass(frozen=True)
class HttpConfig:
    """Network settings; :meth:`from_config` reads a config mapping with environment fallbacks."""

    contact_email: str | None = None
    timeout: float = 30.0
    connect_timeout: float = 10.0
    max_retries: int = 3
    backoff: float = 1.0  # first retry delay; doubles per attempt
    max_retry_wait: float = 60.0  # a longer Retry-After fails fast instead of stalling an agent
    cache: bool = True
    cache_dir: Path | None = None  # default: platformdirs user cache / "http"
    cache_ttl: float = 86400.0
    intervals: Mapping[str, float] = field(default_factory=lambda: dict(DEFAULT_INTERVALS))
    default_interval: float = DEFAULT_INTERVAL
    shared_rate_limit: bool = True  # coordinate agent processes through lock files in the cache dir
    #: provider name -> base URL replacing its API origin (see PROVIDER_ORIGINS). Only API requests
    #: (``get``) are redirected, never downloads (``stream``), so the PDF fetcher's URL checks stay as
    #: they are; API keys are not sent to a replacement base URL.
    base_urls: Mapping[str, str] = field(default_factory=dict)

    @property
    def user_agent(self) -> str:
        contact = f" (mailto:{self.contact_email})" if self.contact_email else ""
        return f"cconductor/{__version__}{contact}"

    def cache_path(self) -> Path:
        return self.cache_dir or platformdirs.user_cache_path("cconductor") / "http"

    @classmethod
    def from_config(cls, config: Mapping[str, Any] | None = None,
                    env: Mapping[str, str] | None = None) -> HttpConfig:
        """Keys are the field names; ``rate_limits`` (alias ``intervals``) is merged over the defaults."""
        env = os.environ if env is None else env
        raw = dict(config or {})
        known = {f.name for f in fields(cls)}
        kwargs: dict[str, Any] = {k: v for k, v in raw.items() if k in known}
        intervals = {**DEFAULT_INTERVALS, **dict(raw.get("rate_limits") or raw.get("intervals") or {})}
        kwargs["intervals"] = {str(h).lower(): float(s) for h, s in intervals.items()}
        email = kwargs.get("contact_email") or env.get(CONTACT_ENV) or None
        if email and ("@" not in email or any(c.isspace() for c in email)):
            email = None  # never let a malformed value reach a header
        kwargs["contact_email"] = email
        if env.get("CCONDUCTOR_HTTP_CACHE", "").lower() in {"0", "false", "no", "off"}:
            kwargs["cache"] = False
        if "cache_ttl" not in kwargs and env.get("CCONDUCTOR_HTTP_CACHE_TTL"):
            kwargs["cache_ttl"] = float(env["CCONDUCTOR_HTTP_CACHE_TTL"])
        if kwargs.get("cache_dir") is not None:
            kwargs["cache_dir"] = Path(kwargs["cache_dir"])
        kwargs["base_urls"] = _base_urls(dict(raw.get("base_urls") or {}), env)
        return cls(**kwargs)


def _base_urls(configured: Mapping[str, Any], env: Mapping[str, str]) -> dict[str, str]:
    """Base-URL overrides from the config, else ``CCONDUCTOR_PROVIDER_BASE_URL_<NAME>``; checked strictly,
    because a silently ignored override would send the requests to the real API instead."""
    out: dict[str, str] = {}
    for name in PROVIDER_ORIGINS:
        value = configured.get(name) or env.get(BASE_URL_ENV_PREFIX + name.upper()) or None
        if value is None:
            continue
        url = httpx2.URL(str(value).strip())
        if url.scheme not in ("http", "https") or not url.host or url.query or url.fragment:
            where = f"base_urls.{name}" if configured.get(name) else BASE_URL_ENV_PREFIX + name.upper()
            raise ConfigError(f"{where} must be an http(s) URL without query or fragment, like "
                              f"http://127.0.0.1:8000/{name}; got {str(value)[:200]!r}")
        out[name] = str(url).rstrip("/")
    unknown = sorted(set(configured) - set(PROVIDER_ORIGINS))
    if unknown:
        raise ConfigError(f"base_urls has unknown provider(s) {', '.join(map(str, unknown))}; "
                          f"use {', '.join(PROVIDER_ORIGINS)}")
    return out
