"""One bounded retry loop for Messages API calls, owned here and not by the SDK.

The SDK's own retries obey any ``retry-after`` (a 429 asking for 400 s slept silently until the
agent was killed) and retry timeouts four times; so the SDK gets ``max_retries=0`` and this
loop decides: what ``errors.api_failure`` and the client call transient (rate limits, overload,
server errors, connection failures, streams cut off midway, answers that are not the API's) is
retried with exponential backoff and full jitter, a server's ``retry-after`` is honoured only
while it fits the agent's remaining time, and every wait is said (agent log, events.jsonl,
terminal). Anything else fails at once.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

T = TypeVar("T")

#: An attempt needs at least this much of the agent's time, besides the wait before it.
MIN_ATTEMPT_SECONDS = 1.0


@dataclass
class TimeBudget:
    """The agent's remaining wall-clock time, shared by all its model calls and waits."""

    ends_at: float | None = None  # time.monotonic() value; None: no limit

    @classmethod
    def of_seconds(cls, seconds: float | None) -> TimeBudget:
        return cls(None if seconds is None else time.monotonic() + seconds)

    def remaining(self) -> float | None:
        return None if self.ends_at is None else max(0.0, self.ends_at - time.monotonic())


@dataclass(frozen=True)
class Transient(Exception):
    """A failure worth another try: what happened and what the server asked us to wait."""

    kind: str  # rate_limited | overloaded | server_error | connection | timeout | stream_interrupted | bad_response
    detail: str
    retry_after: float | None = None

    def __str__(self) -> str:
        return self.detail


class RetriesExhausted(Exception):
    def __init__(self, last: Transient, attempts: int, waited: float, why: str):
        super().__init__(f"{last.detail}; gave up after {attempts} attempt(s) and {waited:.0f} s of waiting: {why}")
        self.last = last
        self.attempts = attempts


def retry_after_seconds(headers: Any) -> float | None:
    """``retry-after-ms`` or ``retry-after`` (seconds), when the server sent one."""
    if headers is None:
        return None
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            return max(0.0, float(value) * scale)
        except ValueError:
            continue
    return None


_LABEL = {
    "rate_limited": "rate limited",
    "overloaded": "the API is overloaded",
    "server_error": "the API failed",
    "connection": "cannot reach the API",
    "timeout": "the API did not answer in time",
    "stream_interrupted": "the answer was cut off midway",
    "bad_response": "the answer was not the API's",
}


def call_with_retries(
    call: Callable[[], T],
    *,
    budget: TimeBudget,
    max_attempts: int,
    base_delay: float,
    max_delay: float,
    announce: Callable[[Transient, float, int], None],
    rng: random.Random | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> T:
    """Run ``call`` (which raises Transient for retryable failures) at most ``max_attempts`` times."""
    rng = rng or random.Random()
    waited = 0.0
    for attempt in range(1, max_attempts + 1):
        try:
            return call()
        except Transient as failure:
            if attempt == max_attempts:
                raise RetriesExhausted(failure, attempt, waited, f"{max_attempts} attempts is the limit") from None
            backoff = rng.uniform(0, min(max_delay, base_delay * 2 ** (attempt - 1)))  # full jitter
            wait = failure.retry_after if failure.retry_after is not None else backoff
            remaining = budget.remaining()
            if remaining is not None and wait + MIN_ATTEMPT_SECONDS >= remaining:
                why = (f"the server asked to wait {wait:.0f} s but the agent has {remaining:.0f} s left"
                       if failure.retry_after is not None else f"the agent has only {remaining:.0f} s left")
                raise RetriesExhausted(failure, attempt, waited, why) from None
            announce(failure, wait, attempt)
            sleep(wait)
            waited += wait
    raise AssertionError("unreachable")  # pragma: no cover


def describe(failure: Transient, wait: float) -> str:
    """The line a person sees: 'rate limited, retrying in 12 s'."""
    return f"{_LABEL.get(failure.kind, failure.kind)}, retrying in {wait:.0f} s" if wait >= 1 else (
        f"{_LABEL.get(failure.kind, failure.kind)}, retrying in {wait * 1000:.0f} ms")
