"""One Messages API call, streamed, read to its end or cut at a deadline; every way it can fail, typed.

Every call streams: a long answer needs it (the SDK refuses a non-streamed call it estimates
at over ten minutes), and a stream is the one shape in which a dead connection, an ``error``
event inside a 200 response, a body that is not the API's, and a call that outlives the agent
can all be told apart. The read timeout bounds each wait for bytes; a watchdog bounds the
whole call: at its deadline it shuts the socket, so a stream that keeps trickling stops at
once instead of at its next byte. What comes back:

- the final ``Message`` and its request id;
- :class:`~agents.claude.retrying.Transient` for what another try may fix (the SDK's
  connection errors and timeouts, a stream cut off before ``message_delta``, an error event of
  a transient type, events the SDK cannot read, the call's own deadline);
- :class:`~agents.claude.errors.ModelCallError` ``out_of_time`` when the agent's deadline cut it;
- :class:`~agents.claude.errors.ModelRequestRejected` for what the API refuses for good, and for a
  200 whose body is not the API's (a proxy's HTML page: ``not_the_api``, it would answer the same).

A stream cut off after ``message_start`` was billed for what it read: ``on_partial`` receives
that usage so that the cost ledger never under-counts.
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from agents.claude.errors import ModelCallError, ModelFailure, api_failure, not_the_api
from agents.claude.retrying import Transient

__all__ = ["Deadline", "OnPartial", "stream_message"]

#: Called with (the message snapshot so far, request id, why) when a billed stream was cut off.
OnPartial = Callable[[Any, "str | None", str], None]


@dataclass(frozen=True)
class Deadline:
    """When the call must be over (``time.monotonic()``), and whether that is the agent's own end."""

    at: float | None
    agents: bool  # True: the agent's time is up (final); False: this call's own limit (retried)

    def left(self) -> float | None:
        return None if self.at is None else self.at - time.monotonic()


class _Watchdog:
    """Shuts the response's socket at the deadline, which ends a blocked read at once."""

    def __init__(self, response: Any, deadline: Deadline):
        self.fired = False
        self._response = response
        left = deadline.left()
        self._timer = threading.Timer(max(0.0, left), self._fire) if left is not None else None
        if self._timer is not None:
            self._timer.daemon = True
            self._timer.start()

    def _fire(self) -> None:
        self.fired = True
        stream = (getattr(self._response, "extensions", None) or {}).get("network_stream")
        sock = stream.get_extra_info("socket") if stream is not None else None
        with contextlib.suppress(Exception):
            if sock is not None:
                sock.shutdown(socket.SHUT_RDWR)
            else:
                self._response.close()

    def cancel(self) -> None:
        if self._timer is not None:
            self._timer.cancel()


def _out_of_time(purpose: str, deadline: Deadline, started: float) -> Exception:
    took = time.monotonic() - started
    if deadline.agents:
        return ModelCallError(
            f"{purpose}: the agent's time ran out while the answer was still streaming ({took:.0f} s into the "
            "call); the call was cut off at the agent's deadline. Raise the agent's timeout, or lower "
            "max_tokens or anthropic.max_turns", "out_of_time")
    return Transient("timeout", f"the answer to {purpose} was still streaming after {took:.0f} s, longer than a "
                                "call may take (anthropic.timeout_seconds, anthropic.min_output_tokens_per_second)")


def _not_a_stream(purpose: str, response: Any, request_id: str | None) -> Any:
    """A 200 that is not an event stream: the API's JSON message is accepted; anything else (a proxy's
    or captive portal's page, a web server at a wrong base URL) would come back the same: final."""
    import anthropic

    kind = str(response.headers.get("content-type", "")).split(";")[0].strip() or "no content type"
    raw = response.read()
    if "json" in kind:
        with contextlib.suppress(ValueError, TypeError):
            data = json.loads(raw)
            if isinstance(data, Mapping) and data.get("type") == "message":
                return anthropic.types.Message.model_validate(dict(data))
    start = raw[:120].decode("utf-8", "replace").replace("\n", " ").strip()
    raise not_the_api(f"the answer to {purpose} (request id {request_id}) was HTTP 200 with a {kind} body, not "
                      f"the API's message stream (it began {start!r})")


def _snapshot(stream: Any) -> Any:
    """The message accumulated so far (None before ``message_start``)."""
    try:
        return stream.current_message_snapshot if stream is not None else None
    except AssertionError:
        return None


def stream_message(sdk: Any, request: Mapping[str, Any], *, purpose: str, model: str, timeout: Any,
                   deadline: Deadline, on_partial: OnPartial) -> tuple[Any, str | None]:
    """Send ``request`` (``messages.create`` arguments) as a stream; returns (message, request id)."""
    import anthropic
    import httpx2

    started = time.monotonic()
    stream: Any = None
    request_id: str | None = None
    watchdog: _Watchdog | None = None

    def cut(why: str) -> None:
        snapshot = _snapshot(stream)
        if snapshot is not None and getattr(snapshot, "usage", None) is not None:
            on_partial(snapshot, request_id, why)

    try:
        with sdk.messages.stream(**request, timeout=timeout) as stream:
            request_id = stream.request_id
            if "text/event-stream" not in str(stream.response.headers.get("content-type", "")):
                return _not_a_stream(purpose, stream.response, request_id), request_id
            watchdog = _Watchdog(stream.response, deadline)
            for _ in stream:
                left = deadline.left()
                if left is not None and left <= 0:
                    watchdog.fired = True
                    break
            snapshot = _snapshot(stream)
            if snapshot is not None and getattr(snapshot, "stop_reason", None) is not None:
                return snapshot, request_id  # complete, even if the deadline came as it ended
            if watchdog.fired:
                cut("cut off at the deadline")
                raise _out_of_time(purpose, deadline, started)
            cut("the stream ended early")
            raise Transient("stream_interrupted", f"the answer to {purpose} (request id {request_id}) ended "
                                                  "before the message was complete")
    except (Transient, ModelFailure):
        raise
    except anthropic.APIStatusError as exc:
        cut(f"an error event: {getattr(exc, 'type', None)}")
        raise api_failure(purpose, exc, model) from None
    except anthropic.APITimeoutError:
        raise Transient("timeout", f"the Messages API did not answer {purpose} within {timeout.read:.1f} s "
                                   "(raise anthropic.timeout_seconds in the config if answers are slow)") from None
    except anthropic.APIConnectionError as exc:
        raise Transient("connection", f"cannot reach the Messages API for {purpose} ({type(exc).__name__}); "
                                      "check the network or anthropic.base_url") from None
    except (httpx2.TransportError, httpx2.StreamError) as exc:  # the connection died while the answer streamed
        if watchdog is not None and watchdog.fired:
            cut("cut off at the deadline")
            raise _out_of_time(purpose, deadline, started) from None
        cut(f"the connection broke ({type(exc).__name__})")
        raise Transient("stream_interrupted", f"the connection broke while the answer to {purpose} was streaming "
                                              f"(request id {request_id}; {type(exc).__name__}: {exc})") from None
    except (ValueError, RuntimeError, AssertionError, KeyError, TypeError) as exc:  # events the SDK cannot read
        cut("unreadable events")
        raise Transient("bad_response", f"the answer to {purpose} (request id {request_id}) was not a readable "
                                        f"message stream ({type(exc).__name__}: {str(exc)[:200]})") from None
    finally:
        if watchdog is not None:
            watchdog.cancel()
