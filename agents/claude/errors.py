"""The Claude backend's failures, and how an error of the Messages API becomes one of them.

The orchestrator acts on the class of a failure (see :func:`agents.claude.agent_entry`): a spent
budget ends the run; every other failure of a model call is the agent's one typed failure, with
its reason, and is not dispatched (and paid for) again. What is worth another try is retried
inside the agent, within its time, by one bounded loop (``retrying``): a :class:`Transient`.

An API error is classified by what the documentation says it means: the error body's ``type``,
its ``error.details.error_code`` (a spend cap is a 429 that must not be retried) and, where the
documentation names one, its message (a workspace spend limit, an over-long prompt); the HTTP
status decides only when the body is not the API's (a proxy's HTML page) or names no known type.
"""

from __future__ import annotations

import re
from typing import Any

from agents.claude.retrying import Transient, retry_after_seconds
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
    "api_failure",
    "not_the_api",
]

#: Exit status of an agent process that stopped because the run's budget is spent.
EXIT_BUDGET_EXCEEDED = 3


class ClaudeError(RuntimeError):
    """Base of the backend's errors; the message says what happened and what to do."""


class BudgetExceeded(ClaudeError):
    """The run's budget is spent (or the next call could overspend it): the agent writes nothing, exits 3."""


class ModelFailure(ClaudeError):
    """A failure another attempt would repeat (and pay for again): the orchestrator does not retry it."""

    kind = "model_failure"
    request_id: str | None = None  # the failed call's, when the API answered
    status: int | None = None  # its HTTP status (200: an error event inside the stream)

    def __init__(self, message: str, kind: str | None = None, request_id: str | None = None):
        super().__init__(message)
        if kind:
            self.kind = kind
        self.request_id = request_id


class ModelCallError(ModelFailure):
    """The Messages API stayed unavailable through the agent's bounded retries (or its time ran out)."""

    kind = "api_unavailable"


class ModelRequestRejected(ModelFailure):
    """The API refused the request for a reason that retrying cannot change (key, model, size, money)."""

    kind = "request_rejected"


class StructuredOutputError(ModelFailure):
    """The model did not produce a usable artifact within the attempt (another attempt would repeat it)."""

    kind = "no_output"


class RefusalError(StructuredOutputError):
    kind = "refusal"


class InvalidOutputError(StructuredOutputError):
    kind = "invalid_output"


#: The transient error types of the documentation, by ``error.type``.
_TRANSIENT_TYPES = {
    "overloaded_error": "overloaded",  # 529, or an error event inside a 200 stream
    "rate_limit_error": "rate_limited",
    "api_error": "server_error",
    "timeout_error": "timeout",  # 504: "consider streaming" (every call here streams)
    "conflict_error": "server_error",
}
#: 429s that mean money, not speed: "retrying fails until access resumes" (error.details.error_code).
_SPEND_CODES = frozenset({"enforced_spend_limit_reached", "contract_spend_limit_reached"})
#: Final error types, by ``error.type``.
_FINAL_TYPES = {
    "authentication_error": "authentication",
    "permission_error": "authentication",
    "billing_error": "billing",
    "not_found_error": "unknown_model",
    "request_too_large": "request_too_large",
    "invalid_request_error": "request_rejected",
}
_BY_STATUS = {400: "request_rejected", 401: "authentication", 402: "billing", 403: "authentication",
              404: "unknown_model", 413: "request_too_large", 408: "timeout", 409: "server_error",
              429: "rate_limited", 529: "overloaded"}
#: Documented messages that are not a malformed request or a passing rate limit (errors page; rate limits page).
_SPEND_MESSAGE = re.compile(r"\bspend (limit|cap)|\busage limits?\b|\bmonthly (spend|usage)", re.IGNORECASE)
_CREDIT_MESSAGE = re.compile(r"credit balance is too low", re.IGNORECASE)
_CONTEXT_MESSAGE = re.compile(r"prompt is too long|context (window|limit)|too many (input )?tokens", re.IGNORECASE)


def not_the_api(detail: str) -> ModelRequestRejected:
    """An answer that did not come from the Messages API (a proxy's page): final, with the fix."""
    return ModelRequestRejected(f"{detail}. {_hint('not_the_api', '')}", "not_the_api")


def _hint(kind: str, model: str) -> str:
    return {
        "authentication": "the API key was refused or lacks permission for this model; check ANTHROPIC_API_KEY "
                          "(and the organisation's access to the model and its server tools in the Console)",
        "billing": "the organisation's billing or credit balance stops every call; fix it in the Console "
                   "(Plans & Billing), then run again",
        "spend_limit": "a spend limit of the organisation or workspace is reached and no call will succeed "
                       "until it is raised or the period resets (Console, Limits); not retried",
        "context_overflow": "the conversation is longer than the model's context window; ask for fewer or "
                            "shorter sources, or choose a model with a larger window",
        "request_too_large": "the request is larger than the API accepts (32 MB for Messages); ask for fewer "
                             "or smaller sources",
        "unknown_model": f"the model id {model!r} is not served to this account; choose a current model in "
                         "the config (models.research / models.cheap; `cconductor models` lists them)",
        "request_rejected": "the request is not valid for this model; check the model's capabilities "
                            "(`cconductor models`) and the config, or report it as a bug",
        "not_the_api": "the answer did not come from the Messages API (a proxy or gateway answered); check "
                       "anthropic.base_url / ANTHROPIC_BASE_URL and any HTTP proxy between here and the API",
    }[kind]


def _body_of(exc: Any) -> tuple[str | None, str | None, str]:
    """(error.type, error.details.error_code, message) of an SDK status error, None where absent."""
    kind = getattr(exc, "type", None)
    code = getattr(exc, "error_code", None)
    message = getattr(exc, "api_message", None)
    body = getattr(exc, "body", None)
    if not isinstance(kind, str) and isinstance(body, dict) and isinstance(body.get("error"), dict):
        kind = body["error"].get("type")
        message = body["error"].get("message")
    text = message if isinstance(message, str) else str(getattr(exc, "message", exc))
    return (kind if isinstance(kind, str) else None, code if isinstance(code, str) else None, redact(text))


def _content_type(exc: Any) -> str:
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None) or {}
    return str(headers.get("content-type", "")).split(";")[0].strip()


_TRANSIENT_KINDS = frozenset(_TRANSIENT_TYPES.values())


def api_failure(purpose: str, exc: Any, model: str) -> Exception:
    """An ``anthropic.APIStatusError`` (an HTTP error, or an ``error`` event inside a 200 stream) as a
    :class:`Transient` (retried within the agent's time) or a final :class:`ModelRequestRejected`."""
    status = int(getattr(exc, "status_code", 0) or 0)
    kind, code, message = _body_of(exc)
    where = "an error event inside the HTTP 200 stream" if status == 200 else f"HTTP {status}"
    named = f"{kind}" + (f" ({code})" if code else "") + ": " if kind else ""
    detail = f"{where} for {purpose} (request id {getattr(exc, 'request_id', None)}): {named}{message[:500]}"
    retry_after = retry_after_seconds(getattr(getattr(exc, "response", None), "headers", None))
    if kind == "rate_limit_error" and (code in _SPEND_CODES or (code is None and _SPEND_MESSAGE.search(message))):
        final = "spend_limit"  # the usage tier's monthly spend cap: "retrying fails until access resumes"
    elif kind in _TRANSIENT_TYPES:
        return Transient(_TRANSIENT_TYPES[kind], detail, retry_after)
    elif kind == "invalid_request_error" and _SPEND_MESSAGE.search(message):
        final = "spend_limit"
    elif kind == "invalid_request_error" and _CREDIT_MESSAGE.search(message):
        final = "billing"
    elif kind in ("invalid_request_error", "request_too_large") and _CONTEXT_MESSAGE.search(message):
        final = "context_overflow"
    elif kind == "not_found_error":
        final = "unknown_model" if "model" in message.lower() or model in message else "not_the_api"
    elif kind in _FINAL_TYPES:
        final = _FINAL_TYPES[kind]
    else:  # no documented type: the status decides
        final = _BY_STATUS.get(status) or ("server_error" if status >= 500 or status == 200 else "request_rejected")
        foreign = kind is None and "json" not in _content_type(exc)
        if foreign:
            detail += f" [a {_content_type(exc) or 'non-JSON'} body, not the API's JSON error]"
        if final in _TRANSIENT_KINDS:
            return Transient(final, detail, retry_after)
        if foreign:
            final = "not_the_api"
    failure = ModelRequestRejected(f"the Messages API refused {detail}. {_hint(final, model)}", final,
                                   getattr(exc, "request_id", None))
    failure.status = status
    return failure
