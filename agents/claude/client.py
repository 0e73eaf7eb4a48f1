"""The one Messages API client of an agent process: timeouts, retries, usage and cost per call.

Every call goes through :meth:`ClaudeClient.create`, which checks the budget first (so an
exhausted budget sends no request), calls the SDK with explicit timeouts and retries, logs
the request id, prices the usage and appends one line to ``<session>/costs.jsonl``. Nothing
is cached between calls or attempts. ``anthropic`` is imported on first use (it takes >1 s).
The API key is left to the SDK (``ANTHROPIC_API_KEY``) or passed in, and never written out.
The failure types live in ``errors``, the money check in ``budget``, the ledger line in
``cost_ledger`` and the process deadline in ``deadline``.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from agents.claude.budget import Budget
from agents.claude.capabilities import Capabilities, cached_profile, profile_for
from agents.claude.config import ClaudeConfig, ModelSettings, load_config
from agents.claude.cost_ledger import CallRecord, append_cost_line
from agents.claude.deadline import seconds_left
from agents.claude.errors import ModelCallError, status_failure
from agents.claude.pricing import UsageCounts
from agents.claude.retrying import (
    RetriesExhausted,
    TimeBudget,
    Transient,
    call_with_retries,
    describe,
)
from orchestrator.model.layout import SessionPaths
from orchestrator.model.redact import redact
from orchestrator.session.events import EventLog

if TYPE_CHECKING:
    from agents.runtime import AgentContext

__all__ = ["ClaudeClient"]

#: Above this max_tokens the SDK requires streaming (its estimate exceeds 10 minutes).
STREAMING_THRESHOLD_TOKENS = 128_000 * 600 // 3600


@dataclass
class ClaudeClient:
    """Wraps ``anthropic.Anthropic`` for one agent attempt (model settings fixed per agent)."""

    config: ClaudeConfig
    settings: ModelSettings
    session_root: Path
    agent: str
    attempt: int
    budget: Budget | None = None
    http_client: Any = None
    api_key: str | None = None
    log: TextIO | None = None
    calls: list[CallRecord] = field(default_factory=list)
    time_budget: TimeBudget = field(default_factory=TimeBudget)
    _sdk_client: Any = field(default=None, repr=False)
    _capabilities: Capabilities | None = field(default=None, repr=False)

    @classmethod
    def for_context(
        cls,
        context: AgentContext,
        tier: str,
        *,
        config: ClaudeConfig | None = None,
        http_client: Any = None,
        api_key: str | None = None,
        log: TextIO | None = None,
    ) -> ClaudeClient:
        """The client for a task: model by tier and agent overrides, budget from the task options."""
        task = context.task
        config = config or load_config(task.options)
        return cls(
            config=config,
            settings=config.settings_for(tier, task.agent, task.definition),
            session_root=context.paths.root,
            agent=task.agent,
            attempt=task.attempt,
            budget=Budget.from_options(context.paths.root, task.options),
            time_budget=TimeBudget.of_seconds(seconds_left()),
            http_client=http_client,
            api_key=api_key,
            log=log,
        )

    # -- plumbing ------------------------------------------------------------------------
    def _say(self, message: str) -> None:
        print(
            redact(f"[claude {self.agent}#{self.attempt}] {message}"), file=self.log or sys.stdout, flush=True
        )

    def _sdk(self) -> Any:
        if self._sdk_client is None:
            import anthropic
            import httpx2

            kwargs: dict[str, Any] = {
                "timeout": httpx2.Timeout(
                    self.config.timeout_seconds, connect=self.config.connect_timeout_seconds
                ),
                "max_retries": 0,  # one bounded loop of our own decides (agents/claude/retrying.py)
            }
            if self.config.base_url:
                kwargs["base_url"] = self.config.base_url
            if self.http_client is not None:
                kwargs["http_client"] = self.http_client
            if self.api_key is not None:
                kwargs["api_key"] = self.api_key
            try:
                self._sdk_client = anthropic.Anthropic(**kwargs)
            except anthropic.AnthropicError as exc:
                raise ModelCallError(
                    f"cannot create the Anthropic client ({redact(str(exc))}); set ANTHROPIC_API_KEY"
                ) from None
        return self._sdk_client

    def close(self) -> None:
        if self._sdk_client is not None:
            self._sdk_client.close()
            self._sdk_client = None

    def _timeout(self, max_tokens: int) -> Any:
        import httpx2

        read = max(self.config.timeout_seconds, max_tokens / self.config.min_output_tokens_per_second)
        remaining = self.time_budget.remaining()
        if remaining is not None:
            read = max(1.0, min(read, remaining))  # no single call may outlive the agent
        return httpx2.Timeout(read, connect=self.config.connect_timeout_seconds)

    @property
    def capabilities(self) -> Capabilities:
        """What this agent's model accepts (Models API when reachable, cached; else the shipped table)."""
        if self._capabilities is None:
            if self.config.discover_capabilities:
                profile, note = cached_profile(self.settings.model, lambda m: self._sdk().models.retrieve(m))
                if note:
                    self._say(note)
            else:
                profile = profile_for(self.settings.model)
            self._capabilities = profile
        return self._capabilities

    def _announce(self, purpose: str) -> Any:
        def announce(failure: Transient, wait: float, attempt: int) -> None:
            line = f"{self.agent}: {describe(failure, wait)}"
            self._say(f"{purpose}: {describe(failure, wait)} (attempt {attempt}: {failure.detail})")
            with contextlib.suppress(Exception):  # the audit trail, and from there the terminal
                paths = SessionPaths(self.session_root)
                EventLog(paths.events, paths.events_mutex).emit(
                    "model.retry_wait", line, agent=self.agent, attempt=self.attempt, reason=failure.kind,
                    wait_s=round(wait, 3), call_attempt=attempt, purpose=purpose,
                )

        return announce

    # -- the call --------------------------------------------------------------------------
    def create(
        self,
        *,
        purpose: str,
        messages: Sequence[Mapping[str, Any]],
        system: str | Sequence[Mapping[str, Any]] | None = None,
        tools: Sequence[Mapping[str, Any]] | None = None,
        tool_choice: Mapping[str, Any] | None = None,
        max_tokens: int | None = None,
        output_format: Mapping[str, Any] | None = None,
    ) -> Any:
        """One Messages API call through our bounded retry loop; returns the SDK ``Message``."""
        if self.budget is not None:
            self.budget.check()
        client = self._sdk()
        import anthropic

        max_tokens = max_tokens or self.settings.max_tokens
        kwargs: dict[str, Any] = {
            "model": self.settings.model,
            "max_tokens": max_tokens,
            "messages": list(messages),
        }
        if system:
            kwargs["system"] = system if isinstance(system, str) else list(system)
        if tools:
            kwargs["tools"] = list(tools)
        if tool_choice:
            kwargs["tool_choice"] = dict(tool_choice)
        if output_format:
            kwargs["output_config"] = {"format": dict(output_format)}
        if self.settings.temperature is not None and self.capabilities.sampling_parameters:
            kwargs["extra_body"] = {"temperature": self.settings.temperature}
        streamed = max_tokens > STREAMING_THRESHOLD_TOKENS

        def once() -> Any:
            timeout = self._timeout(max_tokens)
            try:
                if streamed:  # a long answer: the SDK requires streaming, and the read timeout is per chunk
                    with client.messages.stream(**kwargs, timeout=timeout) as stream:
                        return stream.get_final_message()
                return client.messages.create(**kwargs, timeout=timeout)
            except anthropic.APIStatusError as exc:
                raise self._status_failure(purpose, exc) from None
            except anthropic.APITimeoutError:
                raise Transient("timeout", f"the Messages API did not answer {purpose} within "
                                           f"{timeout.read:.1f} s (raise anthropic.timeout_seconds in the config "
                                           "if answers are slow)") from None
            except anthropic.APIConnectionError as exc:
                raise Transient("connection", f"cannot reach the Messages API for {purpose} ({type(exc).__name__}); "
                                              "check the network or anthropic.base_url") from None

        try:
            message = call_with_retries(
                once, budget=self.time_budget, max_attempts=self.config.max_retries + 1,
                base_delay=self.config.retry_base_seconds, max_delay=self.config.retry_max_seconds,
                announce=self._announce(purpose),
            )
        except RetriesExhausted as exc:
            self._say(f"{purpose}: {exc}")
            raise ModelCallError(f"the Messages API failed for {purpose}: {exc}") from None
        self._record(purpose, message)
        return message

    def _status_failure(self, purpose: str, exc: Any) -> Exception:
        self._say(f"{purpose}: HTTP {int(exc.status_code)} request_id={exc.request_id}")
        return status_failure(purpose, exc, self.settings.model)

    def _record(self, purpose: str, message: Any) -> CallRecord:
        usage = UsageCounts.from_usage(getattr(message, "usage", None))
        cost = self.config.prices.cost(self.settings.model, usage)
        request_id = getattr(message, "_request_id", None)
        record = CallRecord(
            purpose, self.settings.model, request_id, getattr(message, "stop_reason", None), usage, cost
        )
        self.calls.append(record)
        if self.budget is not None:
            self.budget.spent_usd += cost
        append_cost_line(self.session_root, self.agent, self.attempt, record)
        self._say(
            f"{purpose}: model={record.model} request_id={request_id} stop={record.stop_reason} "
            f"in={usage.input_tokens} out={usage.output_tokens} cache_read={usage.cache_read_input_tokens} "
            f"cache_write={usage.cache_creation_input_tokens} searches={usage.web_search_requests} "
            f"fetches={usage.web_fetch_requests} cost=${cost:.6f}"
        )
        return record

    @property
    def total_cost_usd(self) -> float:
        return round(sum(c.cost_usd for c in self.calls), 8)
