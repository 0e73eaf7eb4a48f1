"""The one seam between cconductor and the network, in the spirit of httpx's transports.

Every scholarly API call and PDF download goes through :class:`HttpClient`, so politeness (a
``User-Agent`` with a contact address, per-host rate limits), resilience (bounded retries that
honour ``Retry-After``, an on-disk cache, skipping an unreachable host after one warning) and
secrecy (API keys travel only on the wire, never into cache files, logs or messages) are decided
here once. Tests inject an ``httpx2.MockTransport`` plus a fake clock and sleep; nothing else in
``agents.providers`` may open a socket. This module holds the request loop; its parts live in
``http_config``, ``http_cache``, ``rate_limit``, ``log_redaction`` and ``errors``.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Iterator, Mapping
from dataclasses import replace
from typing import Any

import httpx2

from agents.providers.errors import (
    ProviderError,
    ProviderRateLimited,
    ProviderResponseError,
    ProviderUnavailable,
)
from agents.providers.http_cache import HttpCache, HttpResponse
from agents.providers.http_config import PROVIDER_ORIGINS, Clock, HttpConfig, Sleep
from agents.providers.log_redaction import guard_http_logs, remember_secrets, scrub
from agents.providers.rate_limit import RateLimiter, parse_retry_after
from orchestrator.model.redact import redact

__all__ = ["HttpClient", "shared_client"]

log = logging.getLogger("cconductor.providers")

_RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})


class HttpClient:
    """GET with cache, rate limit, retries and offline skipping; ``stream`` for downloads."""

    def __init__(self, config: HttpConfig | None = None, *, transport: httpx2.BaseTransport | None = None,
                 clock: Clock = time.time, sleep: Sleep = time.sleep, cache: HttpCache | bool | None = True,
                 limiter: RateLimiter | None = None) -> None:
        self.config = config or HttpConfig.from_config()
        cfg = self.config
        self._clock, self._sleep = clock, sleep
        self._client = httpx2.Client(
            transport=transport,
            timeout=httpx2.Timeout(cfg.timeout, connect=cfg.connect_timeout),
            headers={"User-Agent": cfg.user_agent},
            follow_redirects=False,
        )
        if cache is True:
            cache = HttpCache(cfg.cache_path(), cfg.cache_ttl, clock) if cfg.cache else None
        self.cache: HttpCache | None = cache or None
        state_dir = cfg.cache_path() / "ratelimit" if cfg.shared_rate_limit and cfg.cache else None
        self.limiter = limiter or RateLimiter(cfg.intervals, cfg.default_interval, clock=clock, sleep=sleep,
                                              state_dir=state_dir)
        self._down: dict[str, str] = {}
        self._down_lock = threading.Lock()
        self.notices: list[str] = []
        guard_http_logs()

    # --- offline bookkeeping ---------------------------------------------------------------

    def is_down(self, host: str) -> bool:
        return host.lower() in self._down

    def forget_unreachable(self) -> None:
        """Try hosts that were unreachable again (e.g. after the network came back)."""
        with self._down_lock:
            self._down.clear()

    def _mark_down(self, host: str, provider: str, reason: str) -> ProviderUnavailable:
        message = (f"{provider} ({host}) cannot be reached: {reason}. Check the network connection or proxy "
                   f"settings; {provider} is skipped for the rest of this run")
        with self._down_lock:
            first = host not in self._down
            self._down[host] = message
        if first:
            log.warning("%s", redact(message))
            self.notices.append(redact(message))
        return ProviderUnavailable(message, provider=provider, url=host)

    def _skipped(self, host: str, provider: str) -> ProviderUnavailable:
        return ProviderUnavailable(self._down[host], provider=provider, url=host, skipped=True)

    # --- requests --------------------------------------------------------------------------

    def get(self, url: str, *, params: Mapping[str, Any] | None = None,
            headers: Mapping[str, str] | None = None, secret_params: Mapping[str, str] | None = None,
            secret_headers: Mapping[str, str] | None = None,
            provider: str = "", accept: tuple[int, ...] = (), use_cache: bool = True,
            rate_limit_hint: str = "") -> HttpResponse:
        """GET ``url``; statuses other than 2xx and ``accept`` raise a :class:`ProviderError`.

        ``secret_params``/``secret_headers`` (API keys) are added to the wire request only: the cache
        key, the cached entry, log lines and error messages see ``url`` and ``params`` alone.
        A provider with a base-URL override (``HttpConfig.base_urls``) is asked at that base instead,
        without the secrets, and its host is rate limited and skipped as the host actually asked.
        """
        url, redirected = self._api_url(url)
        if redirected:
            secret_params = secret_headers = None
        public_url = str(httpx2.URL(url, params=dict(params or {})))
        host = httpx2.URL(url).host.lower()
        provider = provider or host
        secrets = [v for v in [*(secret_params or {}).values(), *(secret_headers or {}).values()] if v]
        remember_secrets(secrets)
        key = HttpCache.key("GET", url, params) if self.cache and use_cache else None
        if key and self.cache and (hit := self.cache.get(key)):
            return replace(hit, provider=provider)
        if self.is_down(host):
            return self._stale_or(key, provider, self._skipped(host, provider))
        wire_params = {**dict(params or {}), **dict(secret_params or {})}
        wire_headers = {**dict(headers or {}), **dict(secret_headers or {})}
        response: httpx2.Response | None = None
        for attempt in range(self.config.max_retries + 1):
            self.limiter.wait(host)
            try:
                response = self._client.get(url, params=wire_params, headers=wire_headers)
            except (httpx2.ConnectError, httpx2.ConnectTimeout, httpx2.UnsupportedProtocol) as exc:
                error = self._mark_down(host, provider, scrub(_reason(exc), secrets))
                return self._stale_or(key, provider, error)
            except httpx2.TransportError as exc:
                if attempt < min(1, self.config.max_retries):  # one retry for a dropped connection
                    self._sleep(self.config.backoff)
                    continue
                error = self._mark_down(host, provider, scrub(_reason(exc), secrets))
                return self._stale_or(key, provider, error)
            if response.status_code not in _RETRY_STATUSES or attempt == self.config.max_retries:
                break
            delay = parse_retry_after(response.headers.get("retry-after"), self._clock())
            delay = self.config.backoff * 2**attempt if delay is None else delay
            if delay > self.config.max_retry_wait:
                break
            log.info("%s answered HTTP %s; retrying in %.1f s", provider, response.status_code, delay)
            self._sleep(delay)
        assert response is not None
        status = response.status_code
        result = HttpResponse(public_url, status, {k.lower(): v for k, v in response.headers.items()},
                              response.content, provider=provider)
        if 200 <= status < 300 or status in accept:
            if key and self.cache and status == 200:
                self.cache.put(key, result)
            return result
        return self._stale_or(key, provider, self._status_error(result, secrets, rate_limit_hint))

    def _stale_or(self, key: str | None, provider: str, error: ProviderError) -> HttpResponse:
        """Offline or failing: an expired cached answer beats none (it is flagged ``stale``)."""
        stale = self.cache.get(key, allow_stale=True) if key and self.cache else None
        if stale is None:
            raise error
        log.info("%s failed; serving a stale cached response for %s", provider, stale.url)
        return replace(stale, provider=provider)

    def _status_error(self, response: HttpResponse, secrets: list[str], hint: str) -> ProviderError:
        status, provider, url = response.status, response.provider, response.url
        excerpt = scrub(" ".join(response.content[:2000].decode("utf-8", "replace").split()), secrets)[:300]
        if status == 429:
            after = parse_retry_after(response.headers.get("retry-after"), self._clock())
            when = f"retry after {after:.0f} s" if after is not None else "wait a minute and retry"
            return ProviderRateLimited(
                f"{provider} is rate limiting requests (HTTP 429): {when}, or lower the request rate in the "
                f"HTTP config{'; ' + hint if hint else ''}", provider=provider, url=url, retry_after=after)
        if status >= 500:
            return ProviderUnavailable(
                f"{provider} failed with HTTP {status} after {self.config.max_retries + 1} attempt(s) for "
                f"{url}; the service is having trouble, retry later", provider=provider, url=url)
        return ProviderResponseError(
            f"{provider} answered HTTP {status} for {url}: {excerpt or 'no details'}. Check the query or "
            "identifier; if it looks right the API may have changed",
            provider=provider, url=url, status=status)

    def _api_url(self, url: str) -> tuple[str, bool]:
        """``url`` with a provider's API origin replaced by its configured base URL, if any."""
        for name, base in self.config.base_urls.items():
            origin = PROVIDER_ORIGINS[name]
            if url == origin or url.startswith(origin + "/"):
                return base + url[len(origin):], True
        return url, False

    @contextlib.contextmanager
    def stream(self, url: str, *, provider: str = "", headers: Mapping[str, str] | None = None,
               timeout: float | None = None) -> Iterator[httpx2.Response]:
        """One rate-limited GET that does not follow redirects and is never cached (for downloads)."""
        host = httpx2.URL(url).host.lower()
        provider = provider or host
        if self.is_down(host):
            raise self._skipped(host, provider)
        self.limiter.wait(host)
        kwargs: dict[str, Any] = {"headers": dict(headers or {})}
        if timeout is not None:
            kwargs["timeout"] = httpx2.Timeout(timeout, connect=min(timeout, self.config.connect_timeout))
        try:
            with self._client.stream("GET", url, **kwargs) as response:
                yield response
        except (httpx2.ConnectError, httpx2.ConnectTimeout) as exc:
            raise self._mark_down(host, provider, _reason(exc)) from None
        except httpx2.TransportError as exc:
            raise ProviderUnavailable(f"downloading {url} failed: {_reason(exc)}; retry later",
                                      provider=provider, url=url) from None

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> HttpClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _reason(exc: Exception) -> str:
    text = str(exc) or type(exc).__name__
    return f"{type(exc).__name__}: {text}" if text != type(exc).__name__ else text


_shared: HttpClient | None = None
_shared_lock = threading.Lock()


def shared_client() -> HttpClient:
    """The process-wide client, so rate limits and the unreachable-host list are shared."""
    global _shared
    with _shared_lock:
        if _shared is None:
            _shared = HttpClient()
        return _shared
