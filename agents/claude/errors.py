"""The Claude backend's failures, and how an HTTP error of the Messages API becomes one of them.

The orchestrator acts on the class of a failure (see :func:`agents.claude.agent_entry`): a spent
budget ends the run, a :class:`ModelCallError` is worth another attempt, a :class:`ModelFailure`
would repeat (and be paid for again). Keeping the hierarchy and the status classification in one
module means the client, the conversation and the entry wrapper agree on what each one means.
"""

from __future__ import annotations

from typing import Any

from agents.claude.retrying import RETRY_STATUSES, Transient, retry_after_seconds
from orchestrator.model.redact import redact

__all__ = [
    "EXIT_BUDGET_EXCEEDED",
    "BudgetExceeded",
    "ClaudeError",
    "InvalidOutputError",
    "ModelCallError",
    "ModelFailure",
    "ModelRequestRejected",
    "RefusalError",
    "StructuredOutputError",
    "status_failure",
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


class StructuredOutputError(ModelFailure):
    """The model did not produce a usable artifact within the attempt (another attempt would repeat it)."""

    kind = "no_output"


class RefusalError(StructuredOutputError):
    kind = "refusal"


class InvalidOutputError(StructuredOutputError):
    kind = "invalid_output"


def status_failure(purpose: str, exc: Any, model: str) -> Exception:
    """An ``anthropic.APIStatusError`` as a :class:`Transient` (retried) or a :class:`ModelRequestRejected`."""
    status = int(exc.status_code)
    detail = redact(str(getattr(exc, "message", exc)))
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
        "unknown_model": f"the model id {model!r} is not served to this account; choose a current "
                         "model in the config (models.research / models.cheap; `cconductor agents` lists them)",
        "request_rejected": "the request is not valid for this model; check the model's capabilities in the "
                            "config, or report it as a bug",
    }[kind]
    return ModelRequestRejected(
        f"the Messages API rejected {purpose} with HTTP {status} (request id {exc.request_id}): {detail}. {hint}",
        kind,
    )
