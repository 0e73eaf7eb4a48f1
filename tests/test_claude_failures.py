"""How `cconductor run --backend anthropic` meets a Messages API that misbehaves as documented.

Each case runs the real CLI and agent processes against a fake Messages API on 127.0.0.1 (the
real SDK code path) and asserts what the user sees: the exit code, the reason on the terminal
and in --json, how many calls were made and paid for, the cost lines, no traceback and no key
on disk. The planner (cheap tier, Haiku 5.5 by default) makes the first model call.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests import fake_anthropic as fa
from tests.test_claude_mission import KEY, QUESTION, Run, base_env, cconductor, events

pytestmark = pytest.mark.slow  # a stress or long end-to-end case: `pytest -m slow` (CI runs it)

PLAN = {"query": QUESTION, "sub_questions": [{"id": "Q1", "question": "What is measured?", "priority": "high"}]}


@contextlib.contextmanager
def fake_api(tmp: Path, *steps: fa.Step, config: dict[str, Any] | None = None) -> Iterator[tuple[dict[str, str],
                                                                                                 fa.FakeAnthropic]]:
    fake = fa.FakeAnthropic(*steps)
    with fake.serve() as url:
        env = {**base_env(tmp), "ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": url}
        if config is not None:
            path = Path(env["XDG_CONFIG_HOME"]) / "cconductor" / "config.json"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(config))
        yield env, fake


def run(env: dict[str, str], *extra: str) -> Run:
    return cconductor(["run", QUESTION, "--backend", "anthropic", "--json", *extra], env, timeout=120)


def cost_lines(root: Path) -> list[dict[str, Any]]:
    path = root / "costs.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def assert_clean(result: Run) -> None:
    assert result.root is not None
    assert "Traceback" not in result.stderr + result.stdout
    for path in result.root.rglob("*"):
        if path.is_file():
            assert KEY not in path.read_text(errors="replace"), f"the API key reached {path}"


def result_env(result: Run) -> dict[str, str]:
    assert result.root is not None
    return {**base_env(result.root.parent.parent), "CCONDUCTOR_SESSIONS_DIR": str(result.root.parent)}


def planner_failure(result: Run) -> dict[str, Any]:
    assert result.root is not None
    [failed] = [e for e in events(result.root, "agent.failed") if e["data"]["agent"] == "research-planner"]
    return failed


def test_a_refusal_fails_the_run_once_with_the_reason_and_is_paid_once(tmp_path: Path) -> None:
    refusal = fa.message([fa.text("I can't help with that.")], "refusal")
    with fake_api(tmp_path, refusal) as (env, fake):
        result = run(env)
    fake.assert_done()
    assert result.returncode == 1 and result.result["status"] == "failed"
    assert "research-planner failed (refusal)" in result.result["reason"]
    assert len(fake.requests) == 1 and len(cost_lines(result.root)) == 1  # not re-run three times
    assert planner_failure(result)["data"] == {**planner_failure(result)["data"], "kind": "refusal", "retried": False}
    assert [e["data"]["agent"] for e in events(result.root, "agent.dispatched")].count("research-planner") == 1
    session = json.loads((result.root / "session.json").read_text())
    assert "refusal" in session["status_reason"]
    assert "research-planner failed (refusal)" in (result.root / "mission-report.md").read_text()
    status = cconductor(["status", str(result.root)], result_env(result), timeout=60)
    assert "refusal" in status.stdout and status.returncode == 0, status.stderr
    assert_clean(result)


def test_output_cut_off_twice_inside_a_tool_call_fails_once_as_truncated(tmp_path: Path) -> None:
    cut = fa.message([fa.tool_use("submit_plan", {"query": QUESTION})], "max_tokens")
    with fake_api(tmp_path, cut, dict(cut)) as (env, fake):
        result = run(env)
    fake.assert_done()
    assert result.returncode == 1 and "research-planner failed (truncated)" in result.result["reason"]
    assert [r["max_tokens"] for r in fake.requests] == [4096, 8192]  # raised once, then given up
    assert len(cost_lines(result.root)) == 2
    assert_clean(result)


def test_output_still_invalid_after_the_reasks_fails_once_as_invalid_output(tmp_path: Path) -> None:
    bad = fa.forced({"query": QUESTION, "sub_questions": "none"})
    with fake_api(tmp_path, bad, bad, bad) as (env, fake):
        result = run(env)
    fake.assert_done()
    assert result.returncode == 1 and "research-planner failed (invalid_output)" in result.result["reason"]
    assert len(fake.requests) == 3 and len(cost_lines(result.root)) == 3  # the first try and two re-asks
    assert_clean(result)


def test_forced_tool_use_answered_with_400_is_not_retried(tmp_path: Path) -> None:
    # Sonnet 5 accepts forced tool use in the shipped table; this server says otherwise
    rejected = fa.error(400, "invalid_request_error", "tool_choice forcing is not supported", {"request-id": "req_f"})
    with fake_api(tmp_path, rejected, config={"models": {"cheap": "claude-sonnet-5"}}) as (env, fake):
        result = run(env)
    fake.assert_done()
    assert result.returncode == 1 and "research-planner failed (request_rejected)" in result.result["reason"]
    assert "HTTP 400" in result.result["reason"] and "req_f" in result.result["reason"]
    assert len(fake.requests) == 1 and cost_lines(result.root) == []
    assert_clean(result)


@pytest.mark.parametrize("model", ["claude-sonnet-5-5", "claude-fable-5-2", "claude-opus-5-6"])
def test_models_that_refuse_forcing_get_structured_output_and_succeed(tmp_path: Path, model: str) -> None:
    def plan(request: fa.Body) -> fa.Body:
        assert request["tool_choice"] == {"type": "none"} and "temperature" not in request
        assert request["output_config"]["format"]["type"] == "json_schema" and request["model"] == model
        return fa.message([fa.text(json.dumps(PLAN))], "end_turn")

    # the fake answers 400 to forced tool use on these, as the API does: we never send it (Fable 5.2 and a
    # future Opus 5.6 are not named in the code: they inherit their family's newest known behaviour)
    with fake_api(tmp_path, plan, config={"models": {"cheap": model}}) as (env, fake):
        result = run(env, "--max-invocations", "2")
    fake.assert_done()
    assert result.result["status"] == "budget_exhausted", result.result  # the plan merged; then the cap
    assert result.root is not None and "research-planner" in json.loads(
        (result.root / "knowledge-graph.json").read_text())


def test_an_unknown_model_id_uses_the_safe_default_and_fails_once_with_the_fix(tmp_path: Path) -> None:
    def first(request: fa.Body) -> fa.Reply:
        assert request["model"] == "claude-nova-9"
        assert "output_config" in request and request.get("tool_choice") != {"type": "tool", "name": "submit_plan"}
        return fa.error(404, "not_found_error", "model: claude-nova-9")

    with fake_api(tmp_path, first, config={"models": {"cheap": "claude-nova-9"}}) as (env, fake):
        result = run(env)
    fake.assert_done()
    assert "claude-nova-9" in fake.model_lookups  # the Models API was asked first
    assert result.returncode == 1 and "research-planner failed (unknown_model)" in result.result["reason"]
    assert "choose a current model in the config" in result.result["reason"]
    assert len(fake.requests) == 1
    assert_clean(result)


def test_529_always_is_retried_within_bounds_then_fails_once_with_the_reason(tmp_path: Path) -> None:
    with fake_api(tmp_path, *[fa.overloaded(retry_after_ms=5)] * 5) as (env, fake):
        result = run(env)
    fake.assert_done()
    assert result.returncode == 1 and "research-planner failed (api_unavailable)" in result.result["reason"]
    assert "529" in result.result["reason"] and "overloaded_error" in result.result["reason"]
    assert len(fake.requests) == 5  # one bounded loop inside the agent (1 + 4 retries); the agent is not re-run
    assert cost_lines(result.root) == []
    waits = events(result.root, "model.retry_wait")
    assert len(waits) == 4 and waits[0]["message"] == "research-planner: the API is overloaded, retrying in 5 ms"
    assert planner_failure(result)["data"]["retried"] is False
    assert [e["data"]["agent"] for e in events(result.root, "agent.dispatched")].count("research-planner") == 1
    assert "api_unavailable" in (result.root / "mission-report.md").read_text()
    assert_clean(result)


def test_a_retry_after_longer_than_the_agents_time_is_not_slept(tmp_path: Path) -> None:
    long = fa.error(429, "rate_limit_error", "slow down", {"retry-after": "400"})
    with fake_api(tmp_path, long) as (env, fake):
        result = run(env)
    fake.assert_done()
    assert result.seconds < 60, "the agent slept through a retry-after it could never wait out"
    assert result.returncode == 1 and "asked to wait 400 s but the agent has" in result.result["reason"]
    assert_clean(result)


@pytest.mark.parametrize("wait_ms", [20])
def test_a_short_retry_after_is_waited_and_said(tmp_path: Path, wait_ms: int) -> None:
    short = fa.rate_limited(retry_after_ms=wait_ms)
    with fake_api(tmp_path, short, fa.forced(PLAN)) as (env, fake):
        result = run(env, "--max-invocations", "2")
    fake.assert_done()
    assert result.result["status"] == "budget_exhausted"
    [wait] = events(result.root, "model.retry_wait")
    assert wait["message"] == f"research-planner: rate limited, retrying in {wait_ms} ms"
    log = next((result.root / "logs").glob("research-planner-1.log")).read_text()
    assert "rate limited, retrying in 20 ms" in log
    # and on the terminal: the run's --json output carries the agent's wait as it happens
    shown = [json.loads(line) for line in result.stdout.splitlines() if '"model.retry_wait"' in line]
    assert [e["message"] for e in shown] == [f"research-planner: rate limited, retrying in {wait_ms} ms"]


def test_a_spend_capped_429_fails_the_run_once_and_is_not_retried(tmp_path: Path) -> None:
    with fake_api(tmp_path, fa.spend_capped()) as (env, fake):
        result = run(env)
    fake.assert_done()
    assert result.returncode == 1 and "research-planner failed (spend_limit)" in result.result["reason"]
    assert "enforced_spend_limit_reached" in result.result["reason"]
    assert len(fake.requests) == 1 and events(result.root, "model.retry_wait") == []
    assert planner_failure(result)["data"]["kind"] == "spend_limit"
    status = cconductor(["status", str(result.root)], result_env(result), timeout=60)
    assert "spend_limit" in status.stdout and status.returncode == 0, status.stderr
    assert "spend_limit" in (result.root / "mission-report.md").read_text()
    assert_clean(result)


def test_streams_cut_off_midway_until_the_retries_are_spent_fail_once_with_the_reason(tmp_path: Path) -> None:
    cut = fa.cut_stream(fa.message([fa.text("...")], use=fa.usage(400, 10)), after=2)
    with fake_api(tmp_path, *[cut] * 5) as (env, fake):
        result = run(env)
    fake.assert_done()
    reason = result.result["reason"]
    assert result.returncode == 1 and "research-planner failed (api_unavailable)" in reason
    assert "connection broke while the answer to plan was streaming" in reason
    assert len(fake.requests) == 5  # 1 + 4 retries inside the agent, and the agent is not dispatched again
    lines = cost_lines(result.root)
    assert len(lines) == 5 and all(line["request_id"] and line["interrupted"] for line in lines)
    assert [e["data"]["reason"] for e in events(result.root, "model.retry_wait")] == ["stream_interrupted"] * 4
    assert "api_unavailable" in json.loads((result.root / "session.json").read_text())["status_reason"]
    assert_clean(result)


def test_an_error_event_inside_the_stream_is_retried_and_the_run_goes_on(tmp_path: Path) -> None:
    with fake_api(tmp_path, fa.stream_error(), fa.forced(PLAN)) as (env, fake):
        result = run(env, "--max-invocations", "2")
    fake.assert_done()
    assert result.result["status"] == "budget_exhausted", result.result  # the plan merged; then the cap
    [wait] = events(result.root, "model.retry_wait")
    assert wait["data"]["reason"] == "overloaded" and "the API is overloaded, retrying" in wait["message"]
    assert len(cost_lines(result.root)) == 2  # the cut stream's billed part, then the answer
    assert_clean(result)
