"""Every documented way a Messages API call or its stream fails ends in a bounded retry inside the
agent's time or in one typed failure with the true reason: through the real SDK, against the fake
API (in memory, and on a real socket where resets and deadlines need one)."""

from __future__ import annotations

import io
import json
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from agents.claude.client import ClaudeClient
from agents.claude.config import ClaudeConfig
from agents.claude.conversation import converse
from agents.claude.errors import ModelCallError, ModelRequestRejected
from agents.claude.retrying import TimeBudget
from orchestrator.session.events import read_events
from tests import fake_anthropic as fa
from tests.test_claude_client import GOOD_PLAN, KEY, PLAN, cost_lines, make_client

HELLO = [{"role": "user", "content": "hi"}]


def answer(text: str = "the whole answer", **use: Any) -> fa.Body:
    return fa.message([fa.text(text)], "end_turn", use=fa.usage(**use) if use else None)


def served(root: Path, base_url: str, *, seconds: float | None = None, **settings: Any) -> ClaudeClient:
    config = replace(ClaudeConfig(max_retries=2, retry_base_seconds=0.01), base_url=base_url, **settings)
    return ClaudeClient(config=config, settings=config.settings_for("cheap"), session_root=root, agent="tester",
                        attempt=1, api_key=KEY, log=io.StringIO(), time_budget=TimeBudget.of_seconds(seconds))


def waits(root: Path) -> list[dict[str, Any]]:
    return [e for e in read_events(root / "events.jsonl") if e["type"] == "model.retry_wait"]


# -- streams that break ---------------------------------------------------------------------------


def test_a_stream_cut_off_midway_is_retried_and_its_billed_part_recorded(tmp_path: Path) -> None:
    fake = fa.FakeAnthropic(fa.cut_stream(answer(input_tokens=500, output_tokens=80), after=3), answer())
    log = io.StringIO()
    message = make_client(tmp_path, fake, log=log).create(purpose="plan", messages=HELLO)
    fake.assert_done()
    assert message.content[0].text == "the whole answer" and len(fake.requests) == 2
    partial, whole = cost_lines(tmp_path)
    assert partial["interrupted"].startswith("the connection broke") and partial["request_id"].startswith("req_")
    assert partial["input_tokens"] == 500 and partial["cost_usd"] > 0  # what the cut stream read was billed
    assert "interrupted" not in whole and whole["request_id"].startswith("req_")
    [wait] = waits(tmp_path)
    assert wait["data"]["reason"] == "stream_interrupted" and "cut off midway" in wait["message"]
    assert "cut off midway, retrying" in log.getvalue()


def test_a_connection_reset_on_a_real_socket_is_retried(tmp_path: Path) -> None:
    fake = fa.FakeAnthropic(fa.cut_stream(answer(), after=2), answer())
    with fake.serve() as url:
        message = served(tmp_path, url).create(purpose="plan", messages=HELLO)
    fake.assert_done()
    assert message.stop_reason == "end_turn" and [w["data"]["reason"] for w in waits(tmp_path)] == [
        "stream_interrupted"]


def test_a_stream_that_ends_before_its_message_is_complete_is_not_taken_for_an_answer(tmp_path: Path) -> None:
    fake = fa.FakeAnthropic(*[fa.cut_stream(answer(), after=4, reset=False)] * 3)
    with pytest.raises(ModelCallError, match=r"ended before the message was complete.*3 attempts is the limit") as fail:
        make_client(tmp_path, fake).create(purpose="plan", messages=HELLO)
    assert fail.value.kind == "api_unavailable" and len(fake.requests) == 3
    assert [line["interrupted"] for line in cost_lines(tmp_path)] == ["the stream ended early"] * 3


def test_an_overloaded_error_event_inside_a_200_stream_is_retried(tmp_path: Path) -> None:
    fake = fa.FakeAnthropic(fa.stream_error("overloaded_error", "Overloaded", after=2), answer())
    message = make_client(tmp_path, fake).create(purpose="plan", messages=HELLO)
    fake.assert_done()
    assert message.content[0].text == "the whole answer"
    [wait] = waits(tmp_path)
    assert wait["data"]["reason"] == "overloaded" and wait["message"].startswith("tester: the API is overloaded")


def test_an_error_event_of_a_final_type_fails_at_once_with_the_reason(tmp_path: Path) -> None:
    fake = fa.FakeAnthropic(fa.stream_error("invalid_request_error", "prompt is too long: 1200000 tokens > "
                                                                     "1000000 maximum", after=1))
    with pytest.raises(ModelRequestRejected, match="error event inside the HTTP 200 stream") as failed:
        make_client(tmp_path, fake).create(purpose="plan", messages=HELLO)
    assert failed.value.kind == "context_overflow" and len(fake.requests) == 1


def test_an_html_page_instead_of_the_api_fails_once_named_and_never_priced(tmp_path: Path) -> None:
    fake = fa.FakeAnthropic(fa.html_page())
    with pytest.raises(ModelRequestRejected, match=r"HTTP 200 with a text/html body.*proxy") as failed:
        make_client(tmp_path, fake).create(purpose="plan", messages=HELLO)
    assert failed.value.kind == "not_the_api" and len(fake.requests) == 1  # it would answer the same again
    assert cost_lines(tmp_path) == []  # no $0 line for an answer that never came
    assert waits(tmp_path) == [] and "Please sign in" in str(failed.value)


def test_garbage_inside_an_event_stream_is_retried(tmp_path: Path) -> None:
    garbage = fa.Reply(200, raw=b"event: message_start\ndata: <html>oops</html>\n\n",
                       headers={"content-type": "text/event-stream"})
    fake = fa.FakeAnthropic(garbage, answer())
    assert make_client(tmp_path, fake).create(purpose="plan", messages=HELLO).stop_reason == "end_turn"
    assert [w["data"]["reason"] for w in waits(tmp_path)] == ["bad_response"]


def test_a_gateways_html_error_pages(tmp_path: Path) -> None:
    fake = fa.FakeAnthropic(fa.html_page(502), answer(), fa.html_page(403))
    client = make_client(tmp_path, fake)
    assert client.create(purpose="plan", messages=HELLO).stop_reason == "end_turn"  # a 502 page: retried
    with pytest.raises(ModelRequestRejected, match="text/html body, not the API's JSON error") as failed:
        client.create(purpose="plan", messages=HELLO)
    assert failed.value.kind == "not_the_api" and "anthropic.base_url" in str(failed.value)


def test_a_json_message_where_a_stream_was_asked_is_still_the_answer(tmp_path: Path) -> None:
    body = answer(output_tokens=7)
    fake = fa.FakeAnthropic(fa.Reply(200, raw=json.dumps(body).encode(), headers={"content-type": "application/json"}))
    message = make_client(tmp_path, fake).create(purpose="plan", messages=HELLO)
    assert message.content[0].text == "the whole answer" and cost_lines(tmp_path)[0]["output_tokens"] == 7


# -- deadlines ------------------------------------------------------------------------------------------


def test_a_slow_stream_is_cut_at_the_agents_deadline_and_fails_once(tmp_path: Path) -> None:
    slow = fa.slow_stream(answer(input_tokens=300), event_delay=1.0)  # 10 events: ~9 s
    fake = fa.FakeAnthropic(slow)
    with fake.serve() as url:
        client = served(tmp_path, url, seconds=2.5, timeout_seconds=30.0)
        started = time.monotonic()
        with pytest.raises(ModelCallError, match="time ran out while the answer was still streaming") as failed:
            client.create(purpose="plan", messages=HELLO)
        took = time.monotonic() - started
    assert failed.value.kind == "out_of_time" and len(fake.requests) == 1
    assert 2.0 < took < 4.0, f"the stream outlived the agent's deadline: {took:.1f} s"
    [line] = cost_lines(tmp_path)
    assert line["interrupted"] == "cut off at the deadline" and line["input_tokens"] == 300


def test_a_stream_slower_than_a_call_may_take_is_cut_and_retried(tmp_path: Path) -> None:
    fake = fa.FakeAnthropic(fa.slow_stream(answer(), event_delay=0.6), answer())
    with fake.serve() as url:
        client = served(tmp_path, url, timeout_seconds=1.0, min_output_tokens_per_second=1e9)
        started = time.monotonic()
        assert client.create(purpose="plan", messages=HELLO).stop_reason == "end_turn"
    assert time.monotonic() - started < 4.0
    [wait] = waits(tmp_path)
    assert wait["data"]["reason"] == "timeout" and len(fake.requests) == 2


def test_a_529_storm_longer_than_the_agents_time_stops_when_the_time_does(tmp_path: Path) -> None:
    storm = fa.error(529, "overloaded_error", "Overloaded", {"retry-after": "1"})
    fake = fa.FakeAnthropic(*[storm] * 20)
    client = make_client(tmp_path, fake, config=ClaudeConfig(max_retries=50))
    client.time_budget = TimeBudget.of_seconds(3.5)
    started = time.monotonic()
    with pytest.raises(ModelCallError, match=r"has only|but the agent has") as failed:
        client.create(purpose="plan", messages=HELLO)
    assert time.monotonic() - started < 3.5 and failed.value.kind == "api_unavailable"
    assert 2 <= len(fake.requests) <= 4 and cost_lines(tmp_path) == []


# -- errors by their documented type, not by loose words ------------------------------------------------


@pytest.mark.parametrize(("reply", "kind"), [
    (fa.spend_capped(), "spend_limit"),
    (fa.error(429, "rate_limit_error", "You have reached your monthly spend cap for this usage tier."),
     "spend_limit"),
    (fa.workspace_limit(), "spend_limit"),
    (fa.error(402, "billing_error", "There is an issue with your payment method."), "billing"),
    (fa.error(400, "invalid_request_error", "Your credit balance is too low to access the Anthropic API."),
     "billing"),
    (fa.error(400, "invalid_request_error", "prompt is too long: 210000 tokens > 200000 maximum"),
     "context_overflow"),
    (fa.error(413, "request_too_large", "Request exceeds the maximum allowed number of bytes."), "request_too_large"),
    (fa.error(401, "authentication_error", "invalid x-api-key"), "authentication"),
    (fa.error(403, "permission_error", "Your API key does not have permission to use the specified resource."),
     "authentication"),
    (fa.error(404, "not_found_error", "model: claude-nova-9"), "unknown_model"),
    # a 400 that merely mentions a model and "not" is a rejected request, not an unknown model
    (fa.error(400, "invalid_request_error", "tools.0.input_schema: this model does not accept 'oneOf' here"),
     "request_rejected"),
], ids=["spend-cap-429", "spend-cap-429-message", "workspace-limit-400", "billing-402", "credit-400", "context",
        "too-large", "auth", "permission", "unknown-model", "loose-words"])
def test_final_errors_are_classified_by_their_documented_type_and_not_retried(
        tmp_path: Path, reply: fa.Reply, kind: str) -> None:
    fake = fa.FakeAnthropic(reply)
    with pytest.raises(ModelRequestRejected) as failed:
        make_client(tmp_path, fake).create(purpose="plan", messages=HELLO)
    assert failed.value.kind == kind and len(fake.requests) == 1 and cost_lines(tmp_path) == []
    assert failed.value.request_id and failed.value.request_id in str(failed.value)
    assert waits(tmp_path) == []


def test_a_rate_limit_429_is_retried_but_a_spend_cap_429_is_not(tmp_path: Path) -> None:
    fake = fa.FakeAnthropic(fa.rate_limited(retry_after_ms=1), answer(), fa.spend_capped())
    client = make_client(tmp_path, fake)
    client.create(purpose="plan", messages=HELLO)
    with pytest.raises(ModelRequestRejected, match=r"enforced_spend_limit_reached.*not retried"):
        client.create(purpose="plan", messages=HELLO)
    assert len(fake.requests) == 3 and len(waits(tmp_path)) == 1


def test_every_streamed_call_records_its_request_id(tmp_path: Path) -> None:
    fake = fa.FakeAnthropic(fa.forced(GOOD_PLAN))
    converse(make_client(tmp_path, fake), system="s", user="u", spec=PLAN, purpose="plan")
    [line] = cost_lines(tmp_path)
    assert fake.requests[0]["stream"] is True and str(line["request_id"]).startswith("req_fake")
