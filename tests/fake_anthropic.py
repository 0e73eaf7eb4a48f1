"""A scripted fake of the Anthropic Messages API, reached through the real SDK.

:class:`FakeAnthropic` plays a conversation step by step: each step sees the request body
(model, system, tools, tool_choice, messages) and returns a reply shaped like the recorded
exchanges in ``shared/data/anthropic-messages`` (``tool_use`` blocks, ``server_tool_use`` plus
``web_search_tool_result``/``web_fetch_tool_result`` blocks, usage with cache and server-tool
fields, a ``request-id`` header) or an error status (429 with ``retry-after-ms``, 529
overloaded). It is injected as an ``httpx2.MockTransport`` through the SDK's ``http_client``,
or served on 127.0.0.1 (:meth:`FakeAnthropic.serve`) where real timeouts apply. A failed
assertion inside a step is kept and re-raised by :meth:`FakeAnthropic.assert_done`.
"""

from __future__ import annotations

import contextlib
import itertools
import json
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


#: Models that answer forced tool use, and sampling parameters, with HTTP 400 (as the API documents).
REFUSE_FORCED = frozenset({"claude-sonnet-5-5", "claude-opus-5-5", "claude-fable-5-1"})
REFUSE_SAMPLING_PREFIXES = ("claude-sonnet-5", "claude-opus-5", "claude-fable-5", "claude-haiku-5")


def documented_rejection(body: Body) -> Reply | None:
    """What the real API rejects before any scripted step runs."""
    model = str(body.get("model", ""))
    if (body.get("tool_choice") or {}).get("type") in ("tool", "any") and model in REFUSE_FORCED:
        return error(400, "invalid_request_error",
                     f"tool_choice with type 'tool' or 'any' is not supported with {model}; use structured outputs")
    if "temperature" in body and model.startswith(REFUSE_SAMPLING_PREFIXES):
        return error(400, "invalid_request_error", f"temperature is not supported with {model}")
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


def sse(message_body: Body) -> bytes:
    """A message as the server-sent events of a streamed response (what ``messages.stream`` reads)."""
    events: list[Body] = []
    usage_ = dict(message_body.get("usage") or {})
    start = {**message_body, "content": [], "stop_reason": None, "usage": {**usage_, "output_tokens": 1}}
    events.append({"type": "message_start", "message": start})
    for index, block in enumerate(message_body.get("content") or []):
        if block.get("type") == "text":
            events.append({"type": "content_block_start", "index": index,
                           "content_block": {"type": "text", "text": ""}})
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
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events).encode()


def _payload(reply: Reply, streamed: bool) -> tuple[bytes, dict[str, str]]:
    if streamed and reply.status == 200:
        return sse(reply.body), {**reply.headers, "content-type": "text/event-stream"}
    return json.dumps(reply.body).encode(), {**reply.headers, "content-type": "application/json"}


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
                return error(500, "api_error", "fake: no scripted step left", {"x-should-retry": "false"})
            step = self.steps.popleft()
            try:
                reply = step(body) if callable(step) else step
            except BaseException as exc:  # keep it for assert_done; the SDK must not retry it
                self.failures.append(exc)
                return error(500, "api_error", f"fake step failed: {exc}", {"x-should-retry": "false"})
            return reply if isinstance(reply, Reply) else Reply(200, reply)

    def handler(self, request: httpx2.Request) -> httpx2.Response:
        reply = self.respond(request.url.path, dict(request.headers), request.content)
        body, headers = _payload(reply, _streamed(request.content))
        return httpx2.Response(reply.status, content=body, headers=headers)

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
                body, headers = _payload(reply, _streamed(raw))
                self.send(reply.status, headers, body)

        with serve_local(Handler) as base_url:
            yield base_url

    def assert_done(self) -> None:
        """Every step was used and no step's assertion failed."""
        if self.failures:
            raise self.failures[0]
        assert not self.steps, f"{len(self.steps)} scripted step(s) were never requested"
