"""Verifying labelgate's webhook deliveries, every event of the event catalog (contract §events).

The event types and each one's fields are generated from the catalog into :mod:`labelgate.events`
(``pnpm gen:events``): ``task.settled`` and ``task.revised`` come back as :class:`TaskSettledEvent`, the
others (``task.canceled``, ``job.completed``, ``job.failed``, ...) as :class:`WebhookEvent`.

A delivery is ``POST <callback_url>`` with the JSON event as its body and the headers
``X-SVC-Signature: sha256=<hex>`` (lowercase hex HMAC-SHA256, RFC 2104, of the raw body bytes keyed with
the webhook's secret), ``X-SVC-Event-Id: evt_...`` (the same on every retry of one event: dedupe on it)
and ``X-SVC-Delivery-Attempt: n``. The signed body carries ``timestamp`` (ISO 8601 UTC of the attempt);
a delivery more than ``tolerance_s`` (default 300 s) away from now, past or future, is refused, as in
Stripe's webhook signatures.

Behaves like the TypeScript verifier ``@labelgate/webhook-verify`` (packages/webhook-verify/src/index.ts):
same checks, same order, same ``reason`` strings.
"""

from __future__ import annotations

import datetime
import hashlib
import hmac
import json
import math
import re
import time
from calendar import timegm
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Union, cast

from .errors import SignatureVerificationError
from .events import EVENT_FIELDS, EVENT_TYPES
from .models import Consensus, consensus_from_dict

__all__ = [
    "DEFAULT_TOLERANCE_S",
    "EVENT_TYPES",
    "SignatureVerificationError",
    "TaskSettledEvent",
    "WebhookEvent",
    "construct_event",
    "sign_payload",
    "verify_signature",
]

#: Default timestamp tolerance, seconds (Stripe's default).
DEFAULT_TOLERANCE_S = 300.0

_SIGNATURE = re.compile(r"sha256=[0-9a-fA-F]{64}")
# ISO 8601 date-time with a zone designator; labelgate sends `Z` (JavaScript's Date#toISOString)
_ISO = re.compile(r"(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:Z|([+-])(\d{2}):(\d{2}))")

#: What ``headers`` may be: any mapping of header names to values (a ``dict``, ``http.client.HTTPMessage``,
#: Flask/werkzeug or Starlette headers), or the ``X-SVC-Signature`` value itself.
Headers = Union[Mapping[str, Any], Any, str, None]


@dataclass
class TaskSettledEvent:
    """The body of a ``task.settled`` delivery, with the delivery's headers that matter.

    ``confidence`` is the calibrated probability (0..1) of ``consensus_label``; ``settled_at`` and
    ``timestamp`` (this attempt) are ISO 8601 UTC strings; ``ledger_txid`` is the settlement's
    transaction id (``0x`` + 64 hex). ``event_id`` (``X-SVC-Event-Id``) and ``delivery_attempt``
    (``X-SVC-Delivery-Attempt``) are None when those headers were not passed. ``consensus`` is the typed
    consensus of a reserved task type (:class:`labelgate.models.MultiLabelConsensus`, ``BoxConsensus`` or
    ``SpanConsensus``; ``consensus_label`` is then its canonical JSON without the confidences), None for single
    choice. Unknown body fields (the API grows) are kept in ``extra``, and so is a ``consensus`` of a shape
    this client does not know.
    """

    event: str
    task_id: str
    consensus_label: str
    confidence: float
    ledger_txid: str
    settled_at: str
    timestamp: str
    event_id: str | None = None
    delivery_attempt: int | None = None
    consensus: Consensus | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """The body as sent (known fields and ``extra``), without the header values."""
        d = {k: getattr(self, k) for k in ("event", "task_id", "consensus_label", "confidence", "ledger_txid", "settled_at", "timestamp")}
        if self.consensus is not None:
            d["consensus"] = self.consensus.to_dict()
        d.update(self.extra)
        return d


@dataclass
class WebhookEvent:
    """The body of a delivery of any other event of the catalog (``task.canceled``, ``job.completed``,
    ``job.failed``; :data:`labelgate.events.EVENT_FIELDS` lists each one's fields), with the delivery's headers
    that matter. ``data`` is the whole body as sent (``event_id``, ``created_at`` and the event's fields
    included); ``event_id`` (``X-SVC-Event-Id``) and ``delivery_attempt`` (``X-SVC-Delivery-Attempt``) are None
    when those headers were not passed."""

    event: str
    timestamp: str
    data: dict[str, Any]
    event_id: str | None = None
    delivery_attempt: int | None = None

    def to_dict(self) -> dict[str, Any]:
        """The body as sent, without the header values."""
        return dict(self.data)


def _field_problem(value: Any, check: Mapping[str, Any], path: str) -> str | None:
    """Why ``value`` fails a field check of :data:`labelgate.events.EVENT_FIELDS` (as the TypeScript verifier
    words it), or None."""
    kind = check["type"]
    if kind == "string":
        if not isinstance(value, str):
            return f"{path} is not a string"
        if "enum" in check and value not in check["enum"]:
            return f"{path} is not one of {', '.join(check['enum'])}"
    elif kind == "number":
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            return f"{path} is not a number"
    elif kind == "integer":
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value != int(value):
            return f"{path} is not a whole number"
        if "minimum" in check and value < check["minimum"]:
            return f"{path} is not a whole number >= {check['minimum']}"
    elif kind == "boolean":
        if not isinstance(value, bool):
            return f"{path} is not a boolean"
    elif kind == "array":
        if not isinstance(value, list):
            return f"{path} is not an array"
    elif kind == "object":
        if not isinstance(value, Mapping):
            return f"{path} is not an object"
        return _fields_problem(cast("Mapping[str, Any]", value), check.get("fields", {}), f"{path}.")
    return None


def _fields_problem(body: Mapping[str, Any], fields: Mapping[str, Any], prefix: str) -> str | None:
    for name, check in fields.items():
        if name not in body:
            if check["required"]:
                return f"{prefix}{name} is missing"
            continue
        problem = _field_problem(body[name], check, prefix + name)
        if problem is not None:
            return problem
    return None


def _event_problem(body: Mapping[str, Any]) -> str | None:
    """Why a verified body is not an event of the catalog, or None."""
    event = body.get("event")
    if not isinstance(event, str) or event not in EVENT_TYPES:
        return f"event is not one of {', '.join(EVENT_TYPES)}"
    for name in ("event_id", "created_at"):
        if name in body and not isinstance(body[name], str):
            return f"{name} is not a string"
    return _fields_problem(body, EVENT_FIELDS[event], "")


def _header(headers: Headers, name: str) -> str | None:
    """A header's value from any mapping-like object, by case-insensitive name; None when absent."""
    if headers is None:
        return None
    if isinstance(headers, str):
        return headers if name.lower() == "x-svc-signature" else None
    if isinstance(headers, (bytes, bytearray)):
        return headers.decode("latin-1") if name.lower() == "x-svc-signature" else None
    get = getattr(headers, "get", None)
    if callable(get):
        for candidate in (name, name.lower()):
            v = get(candidate)
            if v is not None:
                return v if isinstance(v, str) else str(v)
    items = getattr(headers, "items", None)
    if callable(items):
        pairs: Any = items()
        for k, v in pairs:
            if isinstance(k, str) and k.lower() == name.lower():
                return v if isinstance(v, str) else str(v)
    return None


def _body_bytes(raw_body: bytes | bytearray | memoryview | str) -> bytes:
    if isinstance(raw_body, str):
        return raw_body.encode("utf-8")
    if isinstance(raw_body, (bytes, bytearray, memoryview)):
        return bytes(raw_body)
    raise TypeError("raw_body must be bytes (the request body exactly as received) or str")


def _key(secret: str) -> bytes:
    if not isinstance(secret, str) or secret == "":
        raise TypeError("secret must be a non-empty string")
    return secret.encode("utf-8")


def _tolerance(tolerance_s: float | None) -> float:
    if tolerance_s is None:
        return math.inf
    if isinstance(tolerance_s, bool) or not isinstance(tolerance_s, (int, float)) or math.isnan(tolerance_s) or tolerance_s < 0:
        raise ValueError("tolerance_s must be a number >= 0 (seconds), or None to disable the check")
    return float(tolerance_s)


def parse_iso_timestamp(value: str) -> float | None:
    """Seconds since the epoch of an ISO 8601 date-time with a zone (``2026-03-14T09:26:53.589Z``,
    ``...+02:00``), millisecond precision as JavaScript's ``Date.parse``; None when invalid (e.g. Feb 30)."""
    m = _ISO.fullmatch(value)
    if not m:
        return None
    year, month, day, hour, minute, second = (int(g) for g in m.groups()[:6])
    frac, sign, oh, om = m.group(7), m.group(8), m.group(9), m.group(10)
    try:
        # validates the day of the month (leap years included) and the ranges
        datetime.datetime(year, month, day, hour, minute, second)
        secs = timegm((year, month, day, hour, minute, second, 0, 0, 0))
    except ValueError:
        return None
    if sign is not None:
        if int(oh) > 23 or int(om) > 59:
            return None
        offset = int(oh) * 3600 + int(om) * 60
        secs -= offset if sign == "+" else -offset
    ms = int((frac or "0").ljust(3, "0")[:3])
    return secs + ms / 1000


def sign_payload(raw_body: bytes | str, secret: str) -> str:
    """The ``X-SVC-Signature`` value of ``raw_body``: ``sha256=`` + lowercase hex HMAC-SHA256 keyed with
    ``secret`` (str bodies are encoded as UTF-8). For tests of your receiver."""
    return "sha256=" + hmac.new(_key(secret), _body_bytes(raw_body), hashlib.sha256).hexdigest()


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _verify(raw_body: Any, signature: str | None, secret: str, tolerance_s: float | None, now: float | None) -> dict[str, Any]:
    key = _key(secret)
    tolerance = _tolerance(tolerance_s)
    now_s = time.time() if now is None else float(now)
    body = _body_bytes(raw_body)

    if signature is None or signature == "":
        raise SignatureVerificationError("missing_signature", "X-SVC-Signature header is missing")
    if not isinstance(signature, str) or not _SIGNATURE.fullmatch(signature):
        raise SignatureVerificationError("malformed_signature", "X-SVC-Signature is not of the form sha256=<64 hex digits>")
    received = bytes.fromhex(signature[len("sha256=") :])
    expected = hmac.new(key, body, hashlib.sha256).digest()
    if not hmac.compare_digest(received, expected):
        raise SignatureVerificationError("signature_mismatch", "X-SVC-Signature does not match the body and secret")

    try:
        text = body.decode("utf-8")
        if text.startswith("\ufeff"):  # TextDecoder drops a byte order mark
            text = text[1:]
        parsed = json.loads(text, parse_constant=_reject_constant)
    except ValueError:
        raise SignatureVerificationError("malformed_body", "body is not UTF-8 JSON") from None
    if not isinstance(parsed, dict):
        raise SignatureVerificationError("malformed_body", "body is not a JSON object")
    fields = cast("dict[str, Any]", parsed)
    ts: Any = fields.get("timestamp")
    if not isinstance(ts, str):
        raise SignatureVerificationError("malformed_body", "body has no string timestamp")
    sent = parse_iso_timestamp(ts)
    if sent is None:
        raise SignatureVerificationError("malformed_body", "timestamp is not a valid ISO 8601 date-time")
    # compared in whole milliseconds, as the TypeScript verifier does
    if abs(round(now_s * 1000) - round(sent * 1000)) > tolerance * 1000:
        raise SignatureVerificationError("timestamp_outside_tolerance", f"timestamp {ts} is more than {tolerance:g} s from now")
    return fields


def verify_signature(
    raw_body: bytes | str,
    headers: Headers,
    secret: str,
    tolerance_s: float | None = DEFAULT_TOLERANCE_S,
    *,
    now: float | None = None,
) -> bool:
    """True only when the signature header is ``sha256=<64 hex>``, matches the HMAC-SHA256 of
    ``raw_body`` under ``secret`` (constant-time comparison), and the body is a JSON object whose
    ``timestamp`` is within ``tolerance_s`` seconds of ``now`` (Unix seconds, default the current time).
    Never raises, except TypeError/ValueError on a misuse (empty secret, negative tolerance)."""
    _key(secret)
    _tolerance(tolerance_s)
    try:
        _verify(raw_body, _header(headers, "X-SVC-Signature"), secret, tolerance_s, now)
        return True
    except (SignatureVerificationError, TypeError):
        return False


def construct_event(
    raw_body: bytes | str,
    headers: Headers,
    secret: str,
    tolerance_s: float | None = DEFAULT_TOLERANCE_S,
    *,
    now: float | None = None,
) -> TaskSettledEvent | WebhookEvent:
    """Verifies a delivery and returns its event.

    - ``raw_body``: the request body exactly as received (bytes; never re-serialised JSON, whose bytes differ);
    - ``headers``: the request's headers (any mapping, case-insensitive: ``dict``, ``self.headers`` of
      ``http.server``, Flask's ``request.headers``, Starlette's ``request.headers``), or the
      ``X-SVC-Signature`` value itself;
    - ``secret``: the webhook's signing secret; ``tolerance_s``: seconds (None disables the check);
      ``now``: Unix seconds to compare against (tests).

    Returns a :class:`TaskSettledEvent` for ``task.settled`` and ``task.revised`` (a review changed a settled
    result; its ``revision`` and ``previous`` are in ``extra``), a :class:`WebhookEvent` for any other event of
    the catalog. Raises :class:`SignatureVerificationError` (``reason``: ``missing_signature``,
    ``malformed_signature``, ``signature_mismatch``, ``malformed_body``,
    ``timestamp_outside_tolerance``) when the delivery is not authentic, not fresh or not a body of an event of
    the catalog (its fields checked against :data:`labelgate.events.EVENT_FIELDS`); TypeError/ValueError on a
    misuse (empty secret, negative tolerance).
    """
    body = _verify(raw_body, _header(headers, "X-SVC-Signature"), secret, tolerance_s, now)
    problem = _event_problem(body)
    if problem is not None:
        raise SignatureVerificationError("malformed_body", problem)
    attempt = _header(headers, "X-SVC-Delivery-Attempt")
    delivery_attempt = int(attempt) if attempt is not None and attempt.strip().isdigit() else None
    if body["event"] not in ("task.settled", "task.revised"):
        return WebhookEvent(
            event=body["event"],
            timestamp=body["timestamp"],
            data=dict(body),
            event_id=_header(headers, "X-SVC-Event-Id"),
            delivery_attempt=delivery_attempt,
        )
    known = ["event", "task_id", "consensus_label", "confidence", "ledger_txid", "settled_at", "timestamp"]
    consensus = _consensus(body.get("consensus"))
    if consensus is not None:
        known.append("consensus")
    return TaskSettledEvent(
        event=body["event"],
        task_id=body["task_id"],
        consensus_label=body["consensus_label"],
        confidence=float(body["confidence"]),
        ledger_txid=body["ledger_txid"],
        settled_at=body["settled_at"],
        timestamp=body["timestamp"],
        event_id=_header(headers, "X-SVC-Event-Id"),
        delivery_attempt=delivery_attempt,
        consensus=consensus,
        extra={k: v for k, v in body.items() if k not in known},
    )


def _consensus(value: Any) -> Consensus | None:
    """The typed consensus of a body's ``consensus``; None when absent, or of a shape this client does not
    know (a newer gateway's: the caller keeps it in ``extra``)."""
    if not isinstance(value, Mapping):
        return None
    try:
        return consensus_from_dict(cast("Mapping[str, Any]", value))
    except (KeyError, ValueError):
        return None
