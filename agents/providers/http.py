"""The one seam between cconductor and the network, in the spirit of httpx's transports.

Every scholarly API call and PDF download goes through :class:`HttpClient`, so politeness (a
``User-Agent`` with a contact address, per-host rate limits), resilience (bounded retries that
honour ``Retry-After``, an on-disk cache, skipping an unreachable host after one warning) and
secrecy (API keys travel only on the wire, never into cache files, logs or messages) are decided
here once. Tests inject an ``httpx2.MockTransport`` plus a fake clock and sleep; nothing else in
``agents.providers`` may open a socket.
"""

from __future__ import annotations

import contextlib
import email.utils
import hashlib
import json
import logging
import os
import re
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

import filelock
import httpx2
import platformdirs

from orchestrator import __version__
from orchestrator.model.errors import CconductorError, ConfigError
from orchestrator.model.redact import redact
from orchestrator.session.atomic import atomic_write_bytes

log = logging.getLogger("cconductor.providers")

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
_RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
Clock = Callable[[], float]
Sleep = Callable[[float], None]


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


@dataclass(frozen=True)
class HttpResponse:
    url: str  # the public URL: secret parameters are never part of it
    status: int
    headers: Mapping[str, str]
    content: bytes
    from_cache: bool = False
    stale: bool = False
    provider: str = ""

    @property
    def text(self) -> str:
        return self.content.decode("utf-8", errors="replace")

    def json(self) -> Any:
        try:
            return json.loads(self.content)
        except ValueError as exc:
            raise ProviderResponseError(
                f"{self.provider or 'the server'} sent a body that is not JSON for {self.url} ({exc}); "
                "the API may have changed or a proxy answered instead; retry later",
                provider=self.provider, url=self.url, status=self.status,
            ) from None


class HttpCache:
    """Successful GET responses on disk, one JSON file per method+URL+params, written atomically."""

    def __init__(self, directory: Path, ttl: float, clock: Clock = time.time) -> None:
        self.directory = directory
        self.ttl = ttl
        self._clock = clock

    @staticmethod
    def key(method: str, url: str, params: Mapping[str, Any] | None) -> str:
        pairs = sorted((str(k), str(v)) for k, v in (params or {}).items())
        canonical = json.dumps([method.upper(), url, pairs])
        return hashlib.sha256(canonical.encode("utf-8")).hexdigest()

    def _path(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key}.json"

    def get(self, key: str, *, allow_stale: bool = False) -> HttpResponse | None:
        try:
            entry = json.loads(self._path(key).read_text(encoding="utf-8"))
            stale = self._clock() - float(entry["stored_at"]) > self.ttl
            if stale and not allow_stale:
                return None
            body = str(entry["body"]).encode("utf-8", errors="surrogateescape")
            headers = {"content-type": str(entry.get("content_type", ""))}
            return HttpResponse(entry["url"], int(entry["status"]), headers, body,
                                from_cache=True, stale=stale)
        except (OSError, ValueError, KeyError, TypeError):
            return None  # missing or damaged entries are misses, never errors

    def put(self, key: str, response: HttpResponse) -> None:
        entry = {
            "url": response.url,
            "status": response.status,
            "content_type": response.headers.get("content-type", ""),
            "stored_at": self._clock(),
            "body": response.content.decode("utf-8", errors="surrogateescape"),
        }
        try:
            atomic_write_bytes(self._path(key), json.dumps(entry).encode("utf-8"), durable=False)
        except OSError as exc:  # a read-only or full cache must not break research
            log.debug("HTTP cache write failed: %s", exc)


class RateLimiter:
    """Minimum spacing between requests per host, by reservation: nobody sleeps holding a lock.

    With ``state_dir`` the next free slot lives in a small file guarded by a file lock, so agent
    processes running side by side share one budget per host.
    """

    def __init__(self, intervals: Mapping[str, float], default_interval: float, *, clock: Clock = time.time,
                 sleep: Sleep = time.sleep, state_dir: Path | None = None, max_wait: float = 300.0) -> None:
        self.intervals = {h.lower(): s for h, s in intervals.items()}
        self.default_interval = default_interval
        self._clock, self._sleep, self._state_dir, self._max_wait = clock, sleep, state_dir, max_wait
        self._next: dict[str, float] = {}
        self._lock = threading.Lock()

    def interval(self, host: str) -> float:
        return self.intervals.get(host.lower(), self.default_interval)

    def _reserve(self, host: str, now: float, previous: float) -> float:
        start = max(now, previous)
        return now if start - now > self._max_wait else start  # a clock jump must not stall us

    def wait(self, host: str) -> float:
        interval = self.interval(host)
        if interval <= 0:
            return 0.0
        with self._lock:
            now = self._clock()
            start = self._reserve(host, now, self._next.get(host, now))
            if self._state_dir is not None:
                start = self._reserve_shared(host, now, start, interval)
            self._next[host] = start + interval
        delay = start - now
        if delay > 0:
            self._sleep(delay)
        return max(delay, 0.0)

    def _reserve_shared(self, host: str, now: float, start: float, interval: float) -> float:
        assert self._state_dir is not None
        state = self._state_dir / f"{host}.next"
        try:
            self._state_dir.mkdir(parents=True, exist_ok=True)
            with filelock.FileLock(str(state) + ".lock", timeout=5):
                with contextlib.suppress(OSError, ValueError):
                    start = self._reserve(host, now, max(start, float(state.read_text())))
                state.write_text(repr(start + interval))
        except (OSError, filelock.Timeout):
            pass  # fall back to this process's own spacing
        return start


def _retry_after(value: str | None, now: float) -> float | None:
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        return max(0.0, email.utils.parsedate_to_datetime(value).timestamp() - now)
    except (TypeError, ValueError):
        return None


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
        _guard_http_logs()

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
        _remember_secrets(secrets)
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
                error = self._mark_down(host, provider, _scrub(_reason(exc), secrets))
                return self._stale_or(key, provider, error)
            except httpx2.TransportError as exc:
                if attempt < min(1, self.config.max_retries):  # one retry for a dropped connection
                    self._sleep(self.config.backoff)
                    continue
                error = self._mark_down(host, provider, _scrub(_reason(exc), secrets))
                return self._stale_or(key, provider, error)
            if response.status_code not in _RETRY_STATUSES or attempt == self.config.max_retries:
                break
            delay = _retry_after(response.headers.get("retry-after"), self._clock())
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
        excerpt = _scrub(" ".join(response.content[:2000].decode("utf-8", "replace").split()), secrets)[:300]
        if status == 429:
            after = _retry_after(response.headers.get("retry-after"), self._clock())
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


_SECRET_PARAM = re.compile(r"(?i)\b(api_key|apikey|access_token|token)=([^&\s\"']+)")
_known_secrets: frozenset[str] = frozenset()  # replaced, never mutated: safe to read from any thread


def _remember_secrets(secrets: list[str]) -> None:
    global _known_secrets
    if not _known_secrets.issuperset(secrets):
        _known_secrets = _known_secrets | frozenset(secrets)


def _scrub(text: str, secrets: list[str]) -> str:
    for secret in [*secrets, *_known_secrets]:
        text = text.replace(secret, "[REDACTED]")
    return redact(_SECRET_PARAM.sub(r"\1=[REDACTED]", text))


class _RedactFilter(logging.Filter):
    """httpx2 logs every request URL at INFO, and OpenAlex's key is a query parameter."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        clean = _scrub(message, [])
        if clean != message:
            record.msg, record.args = clean, ()
        return True


def _guard_http_logs() -> None:
    for name in ("httpx2", "httpx"):
        logger = logging.getLogger(name)
        if not any(isinstance(f, _RedactFilter) for f in logger.filters):
            logger.addFilter(_RedactFilter())


_shared: HttpClient | None = None
_shared_lock = threading.Lock()


def shared_client() -> HttpClient:
    """The process-wide client, so rate limits and the unreachable-host list are shared."""
    global _shared
    with _shared_lock:
        if _shared is None:
            _shared = HttpClient()
        return _shared
