"""The one Messages API client of an agent process: budget, deadline, retries, usage and cost per call.

Every call goes through :meth:`ClaudeClient.create`: it checks that the most the call could
cost fits the budget (so a budget is never overshot by a call), streams the call
(``streamed_call``: the read timeout per wait, a deadline for the whole call, every failure
typed), retries what is transient in one bounded loop inside the agent's time (``retrying``;
each wait said on the console and in events.jsonl), then prices the usage and appends one line
to ``<session>/costs.jsonl`` with the call's request id. Nothing is cached between calls or
attempts. ``anthropic`` is imported on first use (it takes >1 s). The API key is left to the SDK
(``ANTHROPIC_API_KEY``) or passed in, and never written out.

The seam for other features (for example describing figures with a vision model): make a client
with :meth:`ClaudeClient.for_session` (or :meth:`for_context` inside an agent) and call
:meth:`create` with any Messages API content blocks (``image``, ``document``); the failures it
raises are those of ``errors`` (:class:`BudgetExceeded`, and :class:`ModelFailure` subclasses
whose ``kind`` names the reason).
"""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from agents.claude.budget import Budget, worst_case_usd
from agents.claude.capabilities import Capabilities, cached_profile, profile_for
from agents.claude.config import ClaudeConfig, ModelSettings, load_config
from agents.claude.cost_ledger import CallRecord, append_cost_line
from agents.claude.deadline import seconds_left
from agents.claude.errors import ModelCallError, ModelFailure
from agents.claude.pricing import UsageCounts
from agents.claude.retrying import RetriesExhausted, TimeBudget, Transient, call_with_retries, describe
from agents.claude.streamed_call import Deadline, stream_message
from orchestrator.model.layout import SessionPaths
from orchestrator.model.redact import redact
from orchestrator.session.events import EventLog

if TYPE_CHECKING:
    from agents.runtime import AgentContext

__all__ = ["ClaudeClient"]


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
    _priced: bool = field(default=False, repr=False)

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

    @classmethod
    def for_session(
        cls,
        session_root: Path,
        agent: str,
        tier: str = "cheap",
        *,
        attempt: int = 1,
        config: ClaudeConfig | None = None,
        budget_usd: float | None = None,
        seconds: float | None = None,
        log: TextIO | None = None,
        http_client: Any = None,
        api_key: str | None = None,
    ) -> ClaudeClient:
        """A client outside an agent task (a command's own model calls): costs go to the session's
        ledger under ``agent``, checked against ``budget_usd`` (the session's budget) when given, and
        no call outlives ``seconds`` (None: no limit but the retries')."""
        config = config or load_config()
        return cls(
            config=config,
            settings=config.settings_for(tier, agent),
            session_root=session_root,
            agent=agent,
            attempt=attempt,
            budget=Budget(session_root, budget_usd) if budget_usd is not None else None,
            time_budget=TimeBudget.of_seconds(seconds),
            http_client=http_client,
            api_key=api_key,
            log=log,
        )

    # -- plumbing ------------------------------------------------------------------------
    def _say(self, message: str) -> None:
        print(
            redact(f"[claude {self.agent}#{self.attempt}] {message}"), file=self.log or sys.stdout, flush=True
        )

    def _event(self, type_: str, message: str, **data: Any) -> None:
        with contextlib.suppress(Exception):  # the audit trail, and from there the terminal
            paths = SessionPaths(self.session_root)
            EventLog(paths.events, paths.events_mutex).emit(type_, redact(message), agent=self.agent,
                                                            attempt=self.attempt, **data)

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
                    f"cannot create the Anthropic client ({redact(str(exc))}); set ANTHROPIC_API_KEY",
                    "authentication",
                ) from None
        return self._sdk_client

    def close(self) -> None:
        if self._sdk_client is not None:
            self._sdk_client.close()
            self._sdk_client = None

    def _timeout(self) -> Any:
        """Connect, and each wait for bytes of the stream: never longer than the agent has left."""
        import httpx2

        read = self.config.timeout_seconds
        remaining = self.time_budget.remaining()
        if remaining is not None:
            read = max(1.0, min(read, remaining))
        return httpx2.Timeout(read, connect=self.config.connect_timeout_seconds)

    def _deadline(self, max_tokens: int) -> Deadline:
        """The whole call's end: its own limit (slower than min_output_tokens_per_second: retried) or the
        agent's (final), whichever comes first."""
        own = max(self.config.timeout_seconds, max_tokens / self.config.min_output_tokens_per_second)
        remaining = self.time_budget.remaining()
        if remaining is not None and remaining <= own:
            return Deadline(time.monotonic() + remaining, agents=True)
        return Deadline(time.monotonic() + own, agents=False)

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
            self._say(f"{purpose}: {describe(failure, wait)} (attempt {attempt}: {failure.detail})")
            self._event("model.retry_wait", f"{self.agent}: {describe(failure, wait)}", reason=failure.kind,
                        wait_s=round(wait, 3), call_attempt=attempt, purpose=purpose)

        return announce

    def _check_price(self) -> None:
        """Say once when the model is priced from another row (or at the highest rate)."""
        if not self._priced:
            self._priced = True
            note = self.config.prices.lookup(self.settings.model).note
            if note:
                self._say(f"warning: {note}")
                self._event("model.warning", f"{self.agent}: {note}", model=self.settings.model)

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
        max_tokens = max_tokens or self.settings.max_tokens
        request: dict[str, Any] = {
            "model": self.settings.model,
            "max_tokens": max_tokens,
            "messages": list(messages),
        }
        if system:
            request["system"] = system if isinstance(system, str) else list(system)
        if tools:
            request["tools"] = list(tools)
        if tool_choice:
            request["tool_choice"] = dict(tool_choice)
        if output_format:
            request["output_config"] = {"format": dict(output_format)}
        if self.settings.temperature is not None and self.capabilities.sampling_parameters:
            request["extra_body"] = {"temperature": self.settings.temperature}
        self._check_price()
        if self.budget is not None:
            worst = worst_case_usd(self.config.prices, self.settings.model, request, max_tokens, self.config.cache_ttl)
            self.budget.check(worst, f"the next call ({purpose}, up to {max_tokens} output tokens)")
        client = self._sdk()

        def partial(snapshot: Any, request_id: str | None, why: str) -> None:
            self._record(purpose, snapshot, request_id, why)

        def once() -> Any:
            return stream_message(client, request, purpose=purpose, model=self.settings.model,
                                  timeout=self._timeout(), deadline=self._deadline(max_tokens), on_partial=partial)

        try:
            message, request_id = call_with_retries(
                once, budget=self.time_budget, max_attempts=self.config.max_retries + 1,
                base_delay=self.config.retry_base_seconds, max_delay=self.config.retry_max_seconds,
                announce=self._announce(purpose),
            )
        except RetriesExhausted as exc:
            self._say(f"{purpose}: {exc}")
            raise ModelCallError(f"the Messages API failed for {purpose}: {exc}") from None
        except ModelFailure as exc:
            said = {None: "", 200: "error event "}.get(exc.status, f"HTTP {exc.status} ")
            self._say(f"{purpose}: {said}request_id={exc.request_id} failed ({exc.kind}): {exc}")
            raise
        self._record(purpose, message, request_id)
        return message

    def _record(self, purpose: str, message: Any, request_id: str | None, interrupted: str | None = None) -> CallRecord:
        usage = UsageCounts.from_usage(getattr(message, "usage", None))
        cost = self.config.prices.cost(self.settings.model, usage)
        stop = None if interrupted else getattr(message, "stop_reason", None)
        record = CallRecord(purpose, self.settings.model, request_id, stop, usage, cost, interrupted)
        self.calls.append(record)
        if self.budget is not None:
            self.budget.spent_usd += cost
        append_cost_line(self.session_root, self.agent, self.attempt, record)
        self._say(
            f"{purpose}: model={record.model} request_id={request_id} stop={record.stop_reason} "
            f"in={usage.input_tokens} out={usage.output_tokens} cache_read={usage.cache_read_input_tokens} "
            f"cache_write={usage.cache_creation_input_tokens} searches={usage.web_search_requests} "
            f"fetches={usage.web_fetch_requests} cost=${cost:.6f}" + (f" (interrupted: {interrupted})"
                                                                      if interrupted else "")
        )
        return record

    @property
    def total_cost_usd(self) -> float:
        return round(sum(c.cost_usd for c in self.calls), 8)
