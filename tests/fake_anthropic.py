"""A scripted fake of the Anthropic Messages API, reached through the real SDK.

:class:`FakeAnthropic` plays a conversation step by step: each step sees the request body
(model, system, tools, tool_choice, messages) and returns a reply shaped like the recorded
exchanges in ``tests/data/anthropic-messages`` (``tool_use`` blocks, ``server_tool_use`` plus
``web_search_tool_result``/``web_fetch_tool_result`` blocks, cited text, usage with cache and
server-tool fields, a ``request-id`` header) or an error status (429 with ``retry-after-ms``, 529
overloaded). Streamed requests get server-sent events, and a reply can fail the way a stream
does: cut off midway (:func:`cut_stream`), an ``error`` event inside the 200 stream
(:func:`stream_error`), events that trickle (:func:`slow_stream`), or a body that is not the
API's at all (:func:`html_page`). It is injected as an ``httpx2.MockTransport`` through the
SDK's ``http_client``, or served on 127.0.0.1 (:meth:`FakeAnthropic.serve`) where real sockets,
timeouts and resets apply. Before any step, :func:`documented_rejection` answers what the real
API refuses (forced tool use and sampling parameters on the models that refuse them, structured
outputs together with citations). A failed assertion inside a step is kept and re-raised by
:meth:`FakeAnthropic.assert_done`.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import re
import socket
import struct
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx2

from tests.helpers.local_http import QuietHandler, serve_local

Body = dict[str, Any]


@dataclass
class Reply:
    status: int = 200
    body: Body = field(default_factory=dict)
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0  # seconds before answering (only the local server really waits)
    raw: bytes | None = None  # sent as it is (with headers' content-type), whatever was asked
    cut_after: int | None = None  # streamed: only the first n events, then the connection drops (reset)
    reset: bool = True  # with cut_after: False ends the stream cleanly instead, still incomplete
    error_event: Body | None = None  # streamed: this error event after the first n (cut_after) events
    event_delay: float = 0.0  # streamed: seconds between events


Step = Reply | Body | Callable[[Body], "Reply | Body"]


@dataclass
class Seen:
    body: Body
    headers: dict[str, str]


_ids = itertools.count(1)


def _id(prefix: str) -> str:
    return f"{prefix}_fake{next(_ids):06d}"


# -- response builders (shapes as in the recorded exchanges) -----------------------------------


def usage(
    input_tokens: int = 100,
    output_tokens: int = 50,
    *,
    cache_read: int = 0,
    cache_write: int = 0,
    cache_write_1h: int = 0,
    searches: int | None = None,
    fetches: int | None = None,
) -> Body:
    data: Body = {
        "input_tokens": input_tokens,
        "output_tokens": output_tokens,
        "cache_creation_input_tokens": cache_write,
        "cache_read_input_tokens": cache_read,
        "cache_creation": {
            "ephemeral_1h_input_tokens": cache_write_1h,
            "ephemeral_5m_input_tokens": cache_write - cache_write_1h,
        },
        "service_tier": "standard",
    }
    if searches is not None or fetches is not None:
        data["server_tool_use"] = {"web_search_requests": searches or 0, "web_fetch_requests": fetches or 0}
    return data


def message(
    content: list[Body],
    stop_reason: str = "end_turn",
    *,
    model: str = "claude-haiku-5-5-20251001",
    use: Body | None = None,
) -> Body:
    return {
        "id": _id("msg"),
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": use or usage(),
    }


def text(value: str) -> Body:
    return {"type": "text", "text": value}


def tool_use(name: str, tool_input: Body, block_id: str | None = None) -> Body:
    return {"type": "tool_use", "id": block_id or _id("toolu"), "name": name, "input": tool_input}


def server_tool_use(name: str, tool_input: Body, block_id: str) -> Body:
    return {"type": "server_tool_use", "id": block_id, "name": name, "input": tool_input}


def web_search_result(tool_use_id: str, results: list[tuple[str, str]]) -> Body:
    return {
        "type": "web_search_tool_result",
        "tool_use_id": tool_use_id,
        "content": [
            {
                "type": "web_search_result",
                "url": url,
                "title": title,
                "page_age": "2 days ago",
                "encrypted_content": "EroTCioIBxgCIiQ0NGFlNjc2Yy05NThm",
            }
            for url, title in results
        ],
    }


def web_fetch_result(tool_use_id: str, url: str, page_text: str, title: str) -> Body:
    return {
        "type": "web_fetch_tool_result",
        "tool_use_id": tool_use_id,
        "content": {
            "type": "web_fetch_result",
            "url": url,
            "retrieved_at": "2025-11-14T23:34:21.151000+00:00",
            "content": {
                "type": "document",
                "title": title,
                "source": {"type": "text", "media_type": "text/plain", "data": page_text},
            },
        },
    }


def error(status: int, kind: str, text_: str, headers: dict[str, str] | None = None) -> Reply:
    return Reply(status, {"type": "error", "error": {"type": kind, "message": text_}}, headers or {})


def rate_limited(retry_after_ms: int = 5) -> Reply:
    return error(
        429,
        "rate_limit_error",
        "Number of request tokens has exceeded your per-minute rate limit",
        {"retry-after-ms": str(retry_after_ms)},
    )


def overloaded(retry_after_ms: int = 5) -> Reply:
    return error(529, "overloaded_error", "Overloaded", {"retry-after-ms": str(retry_after_ms)})


def spend_capped() -> Reply:
    """The 429 of an organisation at its usage tier's monthly spend cap: no retry-after, not to be retried."""
    reply = error(429, "rate_limit_error", "Your organization has reached its monthly usage limit for this "
                                           "usage tier. Access resumes on 2026-12-01 at 00:00 UTC.")
    reply.body["error"]["details"] = {"error_code": "enforced_spend_limit_reached"}
    return reply


def workspace_limit() -> Reply:
    """The documented 400 of a spend limit the user set (errors page: 'usage reaches ... a spend limit you set')."""
    return error(400, "invalid_request_error", "You have reached your specified workspace API usage limits. "
                                               "You will regain access on 2026-12-01 at 00:00 UTC.")


def html_page(status: int = 200) -> Reply:
    """A proxy's or captive portal's HTML page where the API's answer should be."""
    return Reply(status, raw=b"<!doctype html><html><head><title>Gateway</title></head><body>Please sign in to "
                             b"the network</body></html>", headers={"content-type": "text/html; charset=utf-8"})


def cut_stream(body: Body, after: int = 3, *, reset: bool = True) -> Reply:
    """A 200 stream of ``body`` that stops after ``after`` events (before message_delta): the connection
    is reset, or (``reset=False``) the body simply ends."""
    return Reply(200, body, cut_after=after, reset=reset)


def stream_error(kind: str = "overloaded_error", text_: str = "Overloaded", after: int = 2,
                 body: Body | None = None) -> Reply:
    """A 200 stream that, after ``after`` events of ``body``, carries an ``error`` event and ends."""
    return Reply(200, body or message([text("partial answer")]), cut_after=after,
                 error_event={"type": "error", "error": {"type": kind, "message": text_}})


def slow_stream(body: Body, event_delay: float) -> Reply:
    """A 200 stream of ``body`` whose events come ``event_delay`` seconds apart."""
    return Reply(200, body, event_delay=event_delay)


def forced(
    tool_input: Body | Callable[[Body], Body],
    *,
    use: Body | None = None,
    check: Callable[[Body], None] | None = None,
) -> Callable[[Body], Body]:
    """Answer a request for the final output: a forced tool call (a ``tool_use`` of the tool named in
    ``tool_choice``) or, on models that refuse forcing, a structured-output request (JSON text)."""

    def step(request: Body) -> Body:
        choice = request.get("tool_choice") or {}
        json_format = (request.get("output_config") or {}).get("format")
        assert choice.get("type") == "tool" or json_format, (
            f"expected a forced tool call or a structured-output request, got tool_choice={choice}")
        if check is not None:
            check(request)
        data = tool_input(request) if callable(tool_input) else tool_input
        if choice.get("type") == "tool":
            return message([tool_use(choice["name"], data)], "tool_use", use=use)
        assert json_format["type"] == "json_schema" and json_format["schema"]["type"] == "object"
        return message([text(json.dumps(data))], "end_turn", use=use)

    return step


def _release(model: str) -> tuple[str, tuple[int, ...]] | None:
    """("opus", (5, 5)) for claude-opus-5-5 (or a dated snapshot of it); None for other ids."""
    found = re.fullmatch(r"claude-([a-z]+)-(\d{1,2})(?:-(\d{1,2}))?(?:-\d{8})?", model)
    if found is None:
        return None
    return found.group(1), tuple(int(g) for g in found.groups()[1:] if g is not None)


def refuses_forcing(model: str) -> bool:
    """Forced tool_choice answers 400 on Fable and Mythos from 5.1, Opus and Sonnet from 5.5 (and later)."""
    release = _release(model)
    return release is not None and release[1] >= {"fable": (5, 1), "mythos": (5, 1), "opus": (5, 5),
                                                   "sonnet": (5, 5)}.get(release[0], (99,))


def refuses_sampling(model: str) -> bool:
    """Non-default sampling parameters answer 400 on Opus from 4.7, every 5-series model, Fable and Mythos."""
    release = _release(model)
    return release is not None and release[1] >= {"fable": (0,), "mythos": (0,), "opus": (4, 7), "sonnet": (5,),
                                                   "haiku": (5,)}.get(release[0], (99,))


def _cited(node: Any) -> bool:
    if isinstance(node, dict):
        kind = node.get("type")
        if kind == "web_search_tool_result" or (kind == "text" and node.get("citations")):
            return True
        if kind in ("document", "search_result") and (node.get("citations") or {}).get("enabled"):
            return True
        return any(_cited(v) for v in node.values())
    return isinstance(node, list) and any(_cited(v) for v in node)


def documented_rejection(body: Body) -> Reply | None:
    """What the real API rejects before any scripted step runs."""
    model = str(body.get("model", ""))
    if (body.get("tool_choice") or {}).get("type") in ("tool", "any") and refuses_forcing(model):
        return error(400, "invalid_request_error",
                     f"tool_choice with type 'tool' or 'any' is not supported with {model}; use structured outputs")
    if any(k in body for k in ("temperature", "top_p", "top_k")) and refuses_sampling(model):
        return error(400, "invalid_request_error", "`temperature` is deprecated for this model.")
    if (body.get("output_config") or {}).get("format"):
        tools = body.get("tools") or []
        if _cited(body.get("messages")) or _cited(body.get("system")) or any(
                t.get("name") == "web_search" or (t.get("citations") or {}).get("enabled") for t in tools):
            return error(400, "invalid_request_error",
                         "Citations are not supported with structured outputs (output_config.format): remove the "
                         "cited content (search results, documents with citations enabled) or the output format")
    return None


def calls(
    name: str, tool_input: Body, *, check: Callable[[Body], None] | None = None, use: Body | None = None
) -> Callable[[Body], Body]:
    """Answer with a (client) tool call the model chose itself (``tool_choice`` auto)."""

    def step(request: Body) -> Body:
        if check is not None:
            check(request)
        return message([text("Let me look that up."), tool_use(name, tool_input)], "tool_use", use=use)

    return step


def last_user_blocks(request: Body) -> list[Body]:
    last = request["messages"][-1]
    assert last["role"] == "user", f"the last message is from {last['role']}"
    content = last["content"]
    return [{"type": "text", "text": content}] if isinstance(content, str) else list(content)


def tool_results(request: Body) -> list[Body]:
    return [b for b in last_user_blocks(request) if b.get("type") == "tool_result"]


def all_text(request: Body) -> str:
    """Everything the request carries as text (system, messages, tool results), for assertions."""
    return json.dumps(request, ensure_ascii=False)


def _streamed(raw: bytes) -> bool:
    try:
        return bool(json.loads(raw or b"{}").get("stream"))
    except (ValueError, AttributeError):
        return False


def sse_events(message_body: Body) -> list[Body]:
    """A message as the events of a streamed response (what ``messages.stream`` reads)."""
    events: list[Body] = []
    usage_ = dict(message_body.get("usage") or {})
    start = {**message_body, "content": [], "stop_reason": None, "usage": {**usage_, "output_tokens": 1}}
    events.append({"type": "message_start", "message": start})
    for index, block in enumerate(message_body.get("content") or []):
        if block.get("type") == "text":
            events.append({"type": "content_block_start", "index": index,
                           "content_block": {"type": "text", "text": ""}})
            for citation in block.get("citations") or ():
                events.append({"type": "content_block_delta", "index": index,
                               "delta": {"type": "citations_delta", "citation": citation}})
            events.append({"type": "content_block_delta", "index": index,
                           "delta": {"type": "text_delta", "text": block["text"]}})
        elif block.get("type") == "tool_use":
            events.append({"type": "content_block_start", "index": index,
                           "content_block": {**block, "input": {}}})
            events.append({"type": "content_block_delta", "index": index,
                           "delta": {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}})
        else:
            events.append({"type": "content_block_start", "index": index, "content_block": block})
        events.append({"type": "content_block_stop", "index": index})
    events.append({"type": "message_delta", "delta": {"stop_reason": message_body.get("stop_reason"),
                                                       "stop_sequence": None},
                   "usage": {"output_tokens": usage_.get("output_tokens", 0)}})
    events.append({"type": "message_stop"})
    return events


def _event_bytes(event: Body) -> bytes:
    return f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode()


def sse(message_body: Body) -> bytes:
    """A message as the bytes of a streamed response."""
    return b"".join(_event_bytes(e) for e in sse_events(message_body))


@dataclass
class Rendered:
    """What goes on the wire for one reply: status, headers, body chunks, and whether the connection drops."""

    status: int
    headers: dict[str, str]
    chunks: list[bytes]
    dropped: bool = False
    event_delay: float = 0.0


def render(reply: Reply, streamed: bool) -> Rendered:
    if reply.raw is not None:
        return Rendered(reply.status, {"content-type": "text/html", **reply.headers}, [reply.raw])
    if not (streamed and reply.status == 200):
        return Rendered(reply.status, {**reply.headers, "content-type": "application/json"},
                        [json.dumps(reply.body).encode()])
    events = sse_events(reply.body)
    headers = {**reply.headers, "content-type": "text/event-stream"}
    if reply.error_event is not None:
        kept = events[: reply.cut_after if reply.cut_after is not None else 1]
        return Rendered(200, headers, [*map(_event_bytes, kept), _event_bytes(reply.error_event)],
                        event_delay=reply.event_delay)
    if reply.cut_after is not None:
        return Rendered(200, headers, list(map(_event_bytes, events[: reply.cut_after])), dropped=reply.reset,
                        event_delay=reply.event_delay)
    return Rendered(200, headers, list(map(_event_bytes, events)), event_delay=reply.event_delay)


# -- the fake ---------------------------------------------------------------------------------


class FakeAnthropic:
    def __init__(self, *steps: Step) -> None:
        self.steps: deque[Step] = deque(steps)
        self.seen: list[Seen] = []
        self.failures: list[BaseException] = []
        #: What GET /v1/models/{id} answers (the Models API); by default: not found, so the shipped table decides.
        self.model_info: dict[str, Body] = {}
        self.model_lookups: list[str] = []
        self._lock = threading.Lock()

    def add(self, *steps: Step) -> FakeAnthropic:
        self.steps.extend(steps)
        return self

    @property
    def requests(self) -> list[Body]:
        return [s.body for s in self.seen]

    def respond(self, path: str, headers: dict[str, str], raw: bytes) -> Reply:
        reply = self._respond(path, headers, raw)
        reply.headers.setdefault("request-id", _id("req"))
        return reply

    def _respond(self, path: str, headers: dict[str, str], raw: bytes) -> Reply:
        if path.startswith("/v1/models/"):
            model = path.split("?")[0].rsplit("/", 1)[-1]
            with self._lock:
                self.model_lookups.append(model)
            if model in self.model_info:
                return Reply(200, self.model_info[model])
            return error(404, "not_found_error", f"model: {model}")
        with self._lock:
            try:
                body = json.loads(raw or b"{}")
            except ValueError:
                body = {"_raw": raw.decode("utf-8", "replace")}
            self.seen.append(Seen(body, {k.lower(): v for k, v in headers.items()}))
            if path.split("?")[0] != "/v1/messages":
                return error(404, "not_found_error", f"the fake serves only /v1/messages, not {path}")
            rejected = documented_rejection(body)
            if rejected is not None:
                return rejected
            if not self.steps:
                self.failures.append(AssertionError(f"unexpected request #{len(self.seen)}: no step left"))
                return error(400, "invalid_request_error", "fake: no scripted step left")
            step = self.steps.popleft()
            try:
                reply = step(body) if callable(step) else step
            except BaseException as exc:  # kept for assert_done; a 400, so that nothing retries it
                self.failures.append(exc)
                return error(400, "invalid_request_error", f"fake step failed: {exc}")
            return reply if isinstance(reply, Reply) else Reply(200, reply)

    def handler(self, request: httpx2.Request) -> httpx2.Response:
        reply = self.respond(request.url.path, dict(request.headers), request.content)
        out = render(reply, _streamed(request.content))

        def body() -> Iterator[bytes]:
            for n, chunk in enumerate(out.chunks):
                if n and out.event_delay:
                    time.sleep(out.event_delay)
                yield chunk
            if out.dropped:
                raise httpx2.ReadError("[Errno 104] Connection reset by peer (fake)")

        return httpx2.Response(out.status, content=body(), headers=out.headers)

    def http_client(self) -> httpx2.Client:
        return httpx2.Client(transport=httpx2.MockTransport(self.handler))

    @contextlib.contextmanager
    def serve(self) -> Iterator[str]:
        """Speak the Messages API on 127.0.0.1 (real sockets, so timeouts are real); yields base_url."""
        fake = self

        class Handler(QuietHandler):
            def do_GET(self) -> None:
                reply = fake.respond(self.path, dict(self.headers.items()), b"")
                self.send(reply.status, {**reply.headers, "content-type": "application/json"},
                          json.dumps(reply.body).encode())

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("content-length") or 0))
                reply = fake.respond(self.path, dict(self.headers.items()), raw)
                if reply.delay:
                    time.sleep(reply.delay)
                out = render(reply, _streamed(raw))
                if len(out.chunks) == 1 and not out.dropped:
                    self.send(out.status, out.headers, out.chunks[0])
                    return
                try:  # event by event, chunked; a dropped connection is reset mid-body
                    self.send_response(out.status)
                    for key, value in out.headers.items():
                        self.send_header(key, value)
                    self.send_header("transfer-encoding", "chunked")
                    self.end_headers()
                    for n, chunk in enumerate(out.chunks):
                        if n and out.event_delay:
                            time.sleep(out.event_delay)
                        self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                        self.wfile.flush()
                    if out.dropped:
                        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                        self.connection.close()
                        self.close_connection = True
                        return
                    self.wfile.write(b"0\r\n\r\n")
                except OSError:  # the client gave up (its deadline): not an error of the fake
                    self.close_connection = True

        with serve_local(Handler) as base_url:
            yield base_url

    def assert_done(self) -> None:
        """Every step was used and no step's assertion failed."""
        if self.failures:
            raise self.failures[0]
        assert not self.steps, f"{len(self.steps)} scripted step(s) were never requested"
