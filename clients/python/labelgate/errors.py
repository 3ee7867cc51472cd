"""Typed errors of the labelgate client.

Every non-2xx answer raises a :class:`LabelgateError` subclass chosen by its HTTP status (contract §errors, §wire): ``status``, the server's ``error`` message, validation ``details``, the ``request_id`` to quote
to support (the body's ``request_id``, else the ``X-Request-Id`` header) and the whole parsed ``body``.
A request that got no answer at all (refused, reset, timed out) raises :class:`APIConnectionError`
(``status`` 0). Webhook verification failures raise :class:`SignatureVerificationError`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = [
    "APIConnectionError",
    "AuthenticationError",
    "ConflictError",
    "ErrorDetail",
    "IdempotencyError",
    "InternalServerError",
    "LabelgateError",
    "NotFoundError",
    "PayloadTooLargeError",
    "PermissionDeniedError",
    "QuotaExhaustedError",
    "RateLimitError",
    "ResponseError",
    "ServiceUnavailableError",
    "SignatureVerificationError",
    "ValidationError",
    "WaitTimeoutError",
    "error_for_status",
]


@dataclass(frozen=True)
class ErrorDetail:
    """One validation problem of a 400: ``path`` is the dotted field (``tasks.3.data_url``, ``""`` for the body)."""

    path: str
    message: str


class LabelgateError(Exception):
    """Base class of every error the client raises for an HTTP answer or a failed request.

    Attributes: ``status`` (HTTP status, 0 without an answer), ``error`` (the server's message, e.g.
    ``task not found``), ``details`` (list of :class:`ErrorDetail`, empty unless a 400), ``request_id``,
    ``body`` (the parsed error body or None), ``attempts`` (attempts made, first included),
    ``method`` and ``path`` of the request, ``retry_after`` (the server's ``Retry-After``, seconds, or None).
    """

    def __init__(
        self,
        status: int,
        error: str,
        *,
        details: list[ErrorDetail] | None = None,
        request_id: str | None = None,
        body: Any = None,
        attempts: int = 1,
        method: str | None = None,
        path: str | None = None,
        retry_after: float | None = None,
    ) -> None:
        where = f"{method} {path}: " if method and path else ""
        code = f"HTTP {status} " if status > 0 else ""
        extra = ""
        if details:
            extra = " (" + "; ".join(f"{d.path or 'body'}: {d.message}" for d in details) + ")"
        super().__init__(f"{where}{code}{error}{extra}")
        self.status = status
        self.error = error
        self.details: list[ErrorDetail] = list(details or [])
        self.request_id = request_id
        self.body = body
        self.attempts = attempts
        self.method = method
        self.path = path
        self.retry_after = retry_after


class ValidationError(LabelgateError):
    """400: the body or query failed validation (``details`` names each field), or the body is not JSON."""


class AuthenticationError(LabelgateError):
    """401 ``invalid API key``: missing, wrong or revoked key (or a labeler key on a customer route)."""


class PermissionDeniedError(LabelgateError):
    """403: the key is valid but the action is refused."""


class QuotaExhaustedError(PermissionDeniedError):
    """403 ``quota exhausted``: the label quota cannot cover the request; nothing was created."""


class NotFoundError(LabelgateError):
    """404: unknown resource, or another customer's (ids of others do not exist for you)."""


class ConflictError(LabelgateError):
    """409: the resource's state forbids it (``task canceled``, ``claim expired``, ``job not completed``,
    ``email already registered``...); ``body`` may carry the current ``status``."""


class PayloadTooLargeError(LabelgateError):
    """413: body over 1 MB (10 MB for a batch)."""


class IdempotencyError(LabelgateError):
    """422 ``idempotency key reused with a different request``."""


class RateLimitError(LabelgateError):
    """429 ``rate limit exceeded`` (after the client's retries); ``retry_after`` is the server's wait, seconds."""


class InternalServerError(LabelgateError):
    """500 (and other 5xx without a class of their own): quote ``request_id`` to support."""


class ServiceUnavailableError(LabelgateError):
    """503 ``service unavailable``: Postgres or the queue is down (after the client's retries)."""


class APIConnectionError(LabelgateError):
    """No HTTP answer: connection refused or reset, DNS failure, or the per-attempt timeout. ``status`` is 0."""


class ResponseError(LabelgateError):
    """A 2xx answer whose body is not what the route returns (not JSON, cut short)."""


class WaitTimeoutError(LabelgateError, TimeoutError):
    """:meth:`labelgate.Client.tasks.wait` (or a job wait) reached its deadline first. ``status`` is 0."""


class SignatureVerificationError(Exception):
    """A webhook delivery failed verification; ``reason`` is one of ``missing_signature``,
    ``malformed_signature``, ``signature_mismatch``, ``malformed_body``, ``timestamp_outside_tolerance``."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


_BY_STATUS: dict[int, type[LabelgateError]] = {
    400: ValidationError,
    401: AuthenticationError,
    403: PermissionDeniedError,
    404: NotFoundError,
    409: ConflictError,
    413: PayloadTooLargeError,
    422: IdempotencyError,
    429: RateLimitError,
    500: InternalServerError,
    503: ServiceUnavailableError,
}


def error_for_status(status: int, error: str, **kwargs: Any) -> LabelgateError:
    """The error of an HTTP answer: its class by status (403 ``quota exhausted`` is
    :class:`QuotaExhaustedError`; another 5xx is :class:`InternalServerError`), else :class:`LabelgateError`."""
    cls: type[LabelgateError]
    if status == 403 and error == "quota exhausted":
        cls = QuotaExhaustedError
    elif status in _BY_STATUS:
        cls = _BY_STATUS[status]
    elif 500 <= status < 600:
        cls = InternalServerError
    else:
        cls = LabelgateError
    return cls(status, error, **kwargs)
