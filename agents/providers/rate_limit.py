"""Request spacing per host, shared by the agent processes of a run, and the server's Retry-After.

Scholarly APIs ask for a bounded request rate (arXiv: one request every three seconds), and
several researcher agents run in parallel; so the next free slot per host is reserved under a
lock (in a small file next to the cache when processes share it) and the wait happens outside the
lock. How long a server asked us to wait (``Retry-After``, seconds or an HTTP date) is read here too.
"""

from __future__ import annotations

import contextlib
import email.utils
import threading
import time
from collections.abc import Mapping
from pathlib import Path

import filelock

from agents.providers.http_config import Clock, Sleep

__all__ = ["RateLimiter", "parse_retry_after"]


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


def parse_retry_after(value: str | None, now: float) -> float | None:
    """Seconds asked for by a ``Retry-After`` header (delta or HTTP date), or None if absent or unreadable."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        return max(0.0, email.utils.parsedate_to_datetime(value).timestamp() - now)
    except (TypeError, ValueError):
        return None
