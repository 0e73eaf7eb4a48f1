"""Successful API answers kept on disk, so a repeated query costs no request and survives an outage.

A cached answer is keyed by method, URL and the public parameters only (never an API key), and
written atomically, one JSON file per entry; a missing or damaged entry is a miss, never an
error. Past its time-to-live an entry is no longer served fresh, but :class:`HttpClient` may still
serve it, flagged ``stale``, when the provider is down: an old answer beats none.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agents.providers.errors import ProviderResponseError
from agents.providers.http_config import Clock
from orchestrator.session.atomic import atomic_write_bytes

__all__ = ["HttpCache", "HttpResponse"]

log = logging.getLogger("cconductor.providers")


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
