"""The one Messages API client of an agent process: budget, timeouts, retries, cost ledger.

Every call goes through :meth:`ClaudeClient.create`, which checks the budget first (so an
exhausted budget sends no request), calls the SDK with explicit timeouts and retries, logs
the request id, prices the usage and appends one line to ``<session>/costs.jsonl``. Nothing
is cached between calls or attempts. ``anthropic`` is imported on first use (it takes >1 s).
The API key is left to the SDK (``ANTHROPIC_API_KEY``) or passed in, and never written out.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from filelock import FileLock

from agents.claude.capabilities import Capabilities, cached_profile, profile_for
from agents.claude.config import ClaudeConfig, ModelSettings, load_config
from agents.claude.pricing import UsageCounts
from agents.claude.retrying import (
    RETRY_STATUSES,
    RetriesExhausted,
    TimeBudget,
    Transient,
    call_with_retries,
    describe,
    retry_after_seconds,
)
from orchestrator.model.clock import iso_timestamp
from orchestrator.model.layout import SessionPaths
from orchestrator.model.redact import redact
from orchestrator.session.costs import costs_path, total_cost_usd
from orchestrator.session.events import EventLog

if TYPE_CHECKING:
    from agents.runtime import AgentContext

__all__ = [
    "EXIT_BUDGET_EXCEEDED",
    "Budget",
    "BudgetExceeded",
    "CallRecord",
    "ClaudeClient",
    "ClaudeError",
    "ModelCallError",
    "ModelFailure",
    "ModelRequestRejected",
]

#: Exit status of an agent process that stopped because the run's budget is spent.
EXIT_BUDGET_EXCEEDED = 3


class ClaudeError(RuntimeError):
    """Base of the backend's errors; the message says what happened and what to do."""


class BudgetExceeded(ClaudeError):
    """The run's budget is spent: the agent writes nothing and exits with status 3."""


class ModelCallError(ClaudeError):
    """The Messages API stayed unavailable through our bounded retries: a later attempt may succeed."""


class ModelFailure(ClaudeError):
    """A failure another attempt would repeat (and pay for again): the orchestrator does not retry it."""

    kind = "model_failure"

    def __init__(self, message: str, kind: str | None = None):
        super().__init__(message)
        if kind:
            self.kind = kind


class ModelRequestRejected(ModelFailure):
    """HTTP 400/401/403/404/413: the request itself is wrong for this model or account."""

    kind = "request_rejected"


#: Above this max_tokens the SDK requires streaming (its estimate exceeds 10 minutes).
STREAMING_THRESHOLD_TOKENS = 128_000 * 600 // 3600


@dataclass
class Budget:
    """Checked before every call: this process's spending against ``budget_usd_remaining``
    (what was left when the task was written) and the session ledger against ``budget_usd``."""

    session_root: Path
    limit_usd: float | None = None
    remaining_usd: float | None = None
    spent_usd: float = 0.0

    @classmethod
    def from_options(cls, session_root: Path, options: Mapping[str, Any]) -> Budget:
        def number(key: str) -> float | None:
            value = options.get(key)
            return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None

        return cls(session_root, number("budget_usd"), number("budget_usd_remaining"))

    def check(self) -> None:
        if self.remaining_usd is not None and self.spent_usd >= self.remaining_usd:
            raise BudgetExceeded(
                f"budget exhausted: this agent spent ${self.spent_usd:.4f} of the ${self.remaining_usd:.4f} "
                "that remained when it started; no further model call was made"
            )
        if self.limit_usd is not None:
            total = total_cost_usd(self.session_root)
            if total >= self.limit_usd:
                raise BudgetExceeded(
                    f"budget exhausted: the session has spent ${total:.4f} of its ${self.limit_usd:.4f} "
                    "budget (costs.jsonl); no further model call was made"
                )


@dataclass(frozen=True)
class CallRecord:
    purpose: str
    model: str
    request_id: str | None
    stop_reason: str | None
    usage: UsageCounts
    cost_usd: float


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
            time_budget=TimeBudget.of_seconds(_seconds_left()),
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
        status = int(exc.status_code)
        detail = redact(str(getattr(exc, "message", exc)))
        self._say(f"{purpose}: HTTP {status} request_id={exc.request_id}")
        if status in RETRY_STATUSES:
            kind = {429: "rate_limited", 529: "overloaded"}.get(status, "server_error")
            headers = getattr(getattr(exc, "response", None), "headers", None)
            return Transient(kind, f"HTTP {status} for {purpose} (request id {exc.request_id}): {detail}",
                             retry_after_seconds(headers))
        lowered = detail.lower()
        if status in (401, 403):
            kind = "authentication"
        elif status in (400, 413) and ("context" in lowered or "too long" in lowered or "too many tokens" in lowered):
            kind = "context_overflow"
        elif status == 404 or ("model" in lowered and status == 400 and "not" in lowered):
            kind = "unknown_model"
        else:
            kind = "request_rejected"
        hint = {
            "authentication": "the API key was refused or lacks permission for this model; check ANTHROPIC_API_KEY "
                              "(and the organisation's access to the model and its server tools in the Console)",
            "context_overflow": "the conversation is longer than the model's context window; ask for fewer or "
                                "shorter sources, or choose a model with a larger window",
            "unknown_model": f"the model id {self.settings.model!r} is not served to this account; choose a current "
                             "model in the config (models.research / models.cheap; `cconductor agents` lists them)",
            "request_rejected": "the request is not valid for this model; check the model's capabilities in the "
                                "config, or report it as a bug",
        }[kind]
        return ModelRequestRejected(
            f"the Messages API rejected {purpose} with HTTP {status} (request id {exc.request_id}): {detail}. {hint}",
            kind,
        )

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
        self._append_cost_line(record)
        self._say(
            f"{purpose}: model={record.model} request_id={request_id} stop={record.stop_reason} "
            f"in={usage.input_tokens} out={usage.output_tokens} cache_read={usage.cache_read_input_tokens} "
            f"cache_write={usage.cache_creation_input_tokens} searches={usage.web_search_requests} "
            f"fetches={usage.web_fetch_requests} cost=${cost:.6f}"
        )
        return record

    def _append_cost_line(self, record: CallRecord) -> None:
        """One JSON line per call, written in a single append under the session's costs mutex."""
        usage = record.usage
        line = {
            "timestamp": iso_timestamp(),
            "agent": self.agent,
            "attempt": self.attempt,
            "model": record.model,
            "request_id": record.request_id,
            "input_tokens": usage.input_tokens,
            "output_tokens": usage.output_tokens,
            "cache_creation_input_tokens": usage.cache_creation_input_tokens,
            "cache_read_input_tokens": usage.cache_read_input_tokens,
            "web_search_requests": usage.web_search_requests,
            "web_fetch_requests": usage.web_fetch_requests,
            "cost_usd": record.cost_usd,
        }
        data = (redact(json.dumps(line, ensure_ascii=False)) + "\n").encode("utf-8")
        paths = SessionPaths(self.session_root)
        paths.state.mkdir(parents=True, exist_ok=True)
        with FileLock(paths.state / "costs.mutex"):
            fd = os.open(costs_path(self.session_root), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                os.write(fd, data)
            finally:
                os.close(fd)

    @property
    def total_cost_usd(self) -> float:
        return round(sum(c.cost_usd for c in self.calls), 8)


#: The agent's time limit, passed by the orchestrator; the clock starts when this module is imported.
TIMEOUT_ENV = "CCONDUCTOR_TIMEOUT_SECONDS"
_STARTED = time.monotonic()
#: Time kept back to write artifacts and exit before the orchestrator's timeout kills the process.
EXIT_MARGIN_SECONDS = 10.0


def _seconds_left() -> float | None:
    try:
        limit = float(os.environ[TIMEOUT_ENV])
    except (KeyError, ValueError):
        return None
    return max(1.0, limit - EXIT_MARGIN_SECONDS - (time.monotonic() - _STARTED))
