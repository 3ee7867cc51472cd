"""The HTTP layer: http.client with kept-alive connections (one per thread), JSON in and out, typed
errors and retries.

Retries (contract §wire, the same policy as the TypeScript SDK's packages/sdk/src/transport.ts):

- 429 is retried for every request: the gateway answers it before any handler runs, so the request had
  no effect;
- 503 and connection failures (refused, reset, per-attempt timeout) only for requests that are safe to
  repeat: GET/HEAD/PUT/DELETE, routes marked idempotent, and requests carrying an ``Idempotency-Key``;
- the wait is the server's ``Retry-After`` (delta seconds or an HTTP date, RFC 9110 §10.2.3) when sent;
  one longer than ``max_retry_after`` is not waited for (the error is raised at once); otherwise capped
  exponential backoff with jitter: half of min(8 s, 0.25 s x 2^(retry-1)) plus a random half.

A kept-alive connection idle for more than ``_IDLE_REUSE_S`` is not reused (Node's server closes idle
connections after 5 s; reusing one that is being closed loses the request), and a request that fails
on a reused connection before any answer is sent once more on a fresh one when it is safe to repeat
(Go's net/http does the same).
"""

from __future__ import annotations

import email.utils
import http.client
import json
import random
import socket
import threading
import time
import urllib.parse
import uuid
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, cast

from . import __version__
from .errors import APIConnectionError, ErrorDetail, LabelgateError, ResponseError, error_for_status

_SAFE_METHODS = frozenset({"GET", "HEAD", "PUT", "DELETE", "OPTIONS"})
_IDLE_REUSE_S = 2.0
_INITIAL_BACKOFF_S = 0.25
_MAX_BACKOFF_S = 8.0


def new_idempotency_key() -> str:
    """A fresh idempotency key: ``lgpy_`` + a random UUID (version 4, RFC 9562) in hex."""
    return f"lgpy_{uuid.uuid4().hex}"


def parse_retry_after(value: str | None, now: float | None = None) -> float | None:
    """``Retry-After`` in seconds (>= 0): delta seconds or an HTTP date; None when absent or malformed."""
    if value is None:
        return None
    v = value.strip()
    try:
        secs = float(v)
        if secs >= 0 and v.replace(".", "", 1).isdigit():
            return secs
        return None
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(v)
    except (TypeError, ValueError):
        return None
    if when is None:
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


@dataclass(frozen=True)
class ResponseEvent:
    """Given to ``on_response`` once per call: the final ``status`` (0 without an answer), the attempts
    made, the wall time of the whole call in seconds (retries and waits included), the request id."""

    method: str
    path: str
    status: int
    attempts: int
    duration_s: float
    request_id: str | None


@dataclass
class Answer:
    """A 2xx answer: status, headers and the parsed JSON body (None when empty)."""

    status: int
    headers: http.client.HTTPMessage
    data: Any
    attempts: int
    request_id: str | None


class _Conn:
    __slots__ = ("conn", "dedicated", "last_used")

    def __init__(self, conn: http.client.HTTPConnection, dedicated: bool = False) -> None:
        self.conn = conn
        self.dedicated = dedicated
        self.last_used = 0.0


class StreamedAnswer:
    """A 2xx answer whose body is read as it arrives, on a connection of its own: iterate
    :meth:`lines` (or read ``response``) to the end, or :meth:`close` it (also a context manager)."""

    def __init__(self, response: http.client.HTTPResponse, conn: http.client.HTTPConnection, attempts: int, request_id: str | None) -> None:
        self.response = response
        self.attempts = attempts
        self.request_id = request_id
        self._conn = conn

    def lines(self) -> Iterator[bytes]:
        """The body's lines without their line ends, read as they arrive; closes the answer at the end."""
        try:
            while True:
                line = self.response.readline()
                if not line:
                    return
                yield line.rstrip(b"\r\n")
        finally:
            self.close()

    def close(self) -> None:
        """Closes the answer and its connection (an unread rest of the body is dropped)."""
        self.response.close()
        self._conn.close()

    def __enter__(self) -> StreamedAnswer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class Transport:
    """HTTP client of one base URL and one credential, shared by the namespaces of a client.

    ``base_url``: ``http(s)://host[:port][/prefix]``; ``token``: sent as ``Authorization: Bearer``;
    ``timeout``: seconds per attempt (connect and each socket read); ``max_retries``: retries after the
    first attempt (0 turns them off); ``max_retry_after``: longest ``Retry-After`` waited for, seconds.
    Thread-safe: each thread keeps its own connection.
    """

    def __init__(
        self,
        base_url: str,
        token: str | None,
        *,
        timeout: float = 60.0,
        max_retries: int = 2,
        max_retry_after: float = 60.0,
        user_agent: str | None = None,
        on_response: Callable[[ResponseEvent], None] | None = None,
    ) -> None:
        parts = urllib.parse.urlsplit(base_url.rstrip("/"))
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"base_url must be http(s)://host[:port], got {base_url!r}")
        if max_retries < 0:
            raise ValueError("max_retries must be >= 0")
        self.base_url = base_url.rstrip("/")
        self._https = parts.scheme == "https"
        self._host = parts.hostname
        self._port = parts.port
        self._prefix = parts.path
        self._token = token
        self.timeout = timeout
        self.max_retries = max_retries
        self.max_retry_after = max_retry_after
        self._ua = user_agent or f"labelgate-python/{__version__}"
        self._on_response = on_response
        self._local = threading.local()
        self._open: set[_Conn] = set()  # every thread's kept-alive connection, for close()
        self._open_lock = threading.Lock()

    # --- connections ----------------------------------------------------------------------------

    def _new_connection(self) -> http.client.HTTPConnection:
        if self._https:
            return http.client.HTTPSConnection(self._host, self._port, timeout=self.timeout)
        return http.client.HTTPConnection(self._host, self._port, timeout=self.timeout)

    def _pooled(self) -> tuple[_Conn, bool]:
        """This thread's connection and whether it was used before (fresh when idle too long)."""
        c: _Conn | None = getattr(self._local, "conn", None)
        if c is not None and time.monotonic() - c.last_used <= _IDLE_REUSE_S:
            return c, True
        if c is not None:
            self._drop()
        c = _Conn(self._new_connection())
        self._local.conn = c
        with self._open_lock:
            self._open.add(c)
        return c, False

    def _drop(self) -> None:
        c: _Conn | None = getattr(self._local, "conn", None)
        if c is not None:
            c.conn.close()
            self._local.conn = None
            with self._open_lock:
                self._open.discard(c)

    def close(self) -> None:
        """Closes every kept-alive connection of this transport (of every thread); later calls open new ones."""
        with self._open_lock:
            conns, self._open = list(self._open), set()
        for c in conns:
            c.conn.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # noqa: BLE001 (interpreter shutdown: nothing left to close)
            pass

    # --- requests -------------------------------------------------------------------------------

    def path(self, route: str, query: Mapping[str, Any] | None = None) -> str:
        """``route`` (already filled) with the query (None and "" values left out) appended."""
        q = {k: str(v).lower() if isinstance(v, bool) else str(v) for k, v in (query or {}).items() if v is not None and v != ""}
        return route + ("?" + urllib.parse.urlencode(q) if q else "")

    def query(self, call: tuple[str, str], query: Mapping[str, Any] | None) -> tuple[str, str]:
        """``call``, a ``(method, path)`` of :func:`labelgate._routes.route`, with the query appended as :meth:`path` does."""
        method, route = call
        return method, self.path(route, query)

    def _headers(self, body: bytes | None, idempotency_key: str | None, extra: Mapping[str, str] | None) -> dict[str, str]:
        h = {"Accept": "application/json", "User-Agent": self._ua}
        if self._token:
            h["Authorization"] = f"Bearer {self._token}"
        if body is not None:
            h["Content-Type"] = "application/json"
        if idempotency_key is not None:
            h["Idempotency-Key"] = idempotency_key
        if extra:
            h.update(extra)
        return h

    def _backoff(self, retry: int) -> float:
        cap = min(_MAX_BACKOFF_S, _INITIAL_BACKOFF_S * 2 ** (retry - 1))
        return cap / 2 + random.random() * cap / 2

    def request(
        self,
        method: str,
        path: str,
        *,
        body: Any = None,
        idempotency_key: str | None = None,
        idempotent: bool = False,
        headers: Mapping[str, str] | None = None,
    ) -> Answer:
        """One call: the parsed JSON of its 2xx answer. Raises a :class:`LabelgateError` subclass."""
        answer = self._call(method, path, body, idempotency_key, idempotent, headers, stream=False)
        assert isinstance(answer, Answer)
        return answer

    def stream(self, method: str, path: str) -> StreamedAnswer:
        """A call whose 2xx answer is returned unread, on a connection of its own (the caller reads it to
        the end or closes it). Raises a :class:`LabelgateError` subclass."""
        res = self._call(method, path, None, None, False, None, stream=True)
        assert isinstance(res, StreamedAnswer)
        return res

    def _call(
        self,
        method: str,
        path: str,
        body: Any,
        idempotency_key: str | None,
        idempotent: bool,
        extra_headers: Mapping[str, str] | None,
        *,
        stream: bool,
    ) -> Answer | StreamedAnswer:
        payload = None if body is None else json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
        headers = self._headers(payload, idempotency_key, extra_headers)
        safe = method in _SAFE_METHODS or idempotent or idempotency_key is not None
        url = self._prefix + path
        started = time.monotonic()
        attempt = 0
        status = 0
        request_id: str | None = None
        try:
            while True:
                attempt += 1
                try:
                    res, conn = self._send(method, url, payload, headers, safe, stream)
                except OSError as err:  # refused, reset, timed out (socket.timeout is an OSError)
                    status = 0
                    failure: LabelgateError = APIConnectionError(
                        0, f"no answer from {self.base_url}: {_describe(err)}", attempts=attempt, method=method, path=path
                    )
                    if not safe or attempt > self.max_retries:
                        raise failure from err
                    time.sleep(self._backoff(attempt))
                    continue
                status = res.status
                request_id = res.getheader("X-Request-Id")
                if 200 <= res.status < 300:
                    if stream:
                        assert conn is not None
                        return StreamedAnswer(res, conn.conn, attempt, request_id)
                    return self._read_json(res, conn, method, path, attempt, request_id)
                failure = self._error(res, conn, method, path, attempt)
                request_id = failure.request_id
                retryable = res.status == 429 or (res.status == 503 and safe)
                if not retryable or attempt > self.max_retries:
                    raise failure
                hinted = failure.retry_after
                if hinted is not None and hinted > self.max_retry_after:
                    raise failure
                time.sleep(hinted + random.random() * 0.1 if hinted is not None else self._backoff(attempt))
        finally:
            if self._on_response is not None:
                self._on_response(ResponseEvent(method, path, status, attempt, time.monotonic() - started, request_id))

    def _send(
        self, method: str, url: str, payload: bytes | None, headers: dict[str, str], safe: bool, stream: bool
    ) -> tuple[http.client.HTTPResponse, _Conn]:
        """Sends once (twice when a reused connection turns out closed and the request is safe to repeat)."""
        if stream:
            conn = self._new_connection()
            try:
                conn.request(method, url, body=payload, headers=headers)
                return conn.getresponse(), _Conn(conn, dedicated=True)
            except (OSError, http.client.HTTPException) as err:
                conn.close()
                raise _as_os_error(err) from err
        for _ in range(2):
            c, reused = self._pooled()
            try:
                c.conn.request(method, url, body=payload, headers=headers)
                res = c.conn.getresponse()
                return res, c
            except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError) as err:
                self._drop()
                if not (reused and safe):
                    raise _as_os_error(err) from err
            except (OSError, http.client.HTTPException) as err:
                self._drop()
                raise _as_os_error(err) from err
        raise ConnectionError("the connection was closed twice")

    def _finish(self, res: http.client.HTTPResponse, conn: _Conn) -> None:
        """After the body was read: keep the connection for the next call unless the server closes it."""
        if conn.dedicated:
            conn.conn.close()
        elif res.will_close:
            self._drop()
        else:
            conn.last_used = time.monotonic()

    def _read_body(self, res: http.client.HTTPResponse, conn: _Conn) -> bytes:
        try:
            data = res.read()
        except (OSError, http.client.HTTPException):
            if conn.dedicated:
                conn.conn.close()
            else:
                self._drop()
            raise
        self._finish(res, conn)
        return data

    def _read_json(self, res: http.client.HTTPResponse, conn: _Conn, method: str, path: str, attempts: int, request_id: str | None) -> Answer:
        try:
            raw = self._read_body(res, conn)
        except (OSError, http.client.HTTPException) as err:
            raise ResponseError(res.status, f"answer cut short: {_describe(err)}", attempts=attempts, method=method, path=path, request_id=request_id) from err
        data: Any = None
        if raw:
            try:
                data = json.loads(raw)
            except ValueError as err:
                raise ResponseError(
                    res.status, f"answer is not JSON: {raw[:200]!r}", attempts=attempts, method=method, path=path, request_id=request_id
                ) from err
        return Answer(res.status, res.headers, data, attempts, request_id)

    def _error(self, res: http.client.HTTPResponse, conn: _Conn, method: str, path: str, attempts: int) -> LabelgateError:
        try:
            raw = self._read_body(res, conn)
        except (OSError, http.client.HTTPException):
            raw = b""  # the body was cut: the status alone speaks
        body: dict[str, Any] | None = None
        try:
            parsed: Any = json.loads(raw) if raw else None
            if isinstance(parsed, dict) and isinstance(cast("dict[str, Any]", parsed).get("error"), str):
                body = cast("dict[str, Any]", parsed)
        except ValueError:
            pass  # not JSON (a proxy's page): the text is the message
        details: list[ErrorDetail] = []
        raw_details: Any = body.get("details") if body is not None else None
        if isinstance(raw_details, list):
            for d in cast("list[Any]", raw_details):
                if isinstance(d, dict):
                    item = cast("dict[str, Any]", d)
                    details.append(ErrorDetail(str(item.get("path", "")), str(item.get("message", ""))))
        message = body["error"] if body is not None else (raw.decode("utf-8", "replace").strip()[:200] or res.reason or "error")
        rid: Any = body.get("request_id") if body is not None else None
        request_id = rid if isinstance(rid, str) else None
        return error_for_status(
            res.status,
            message,
            details=details,
            request_id=request_id or res.getheader("X-Request-Id"),
            body=body,
            attempts=attempts,
            method=method,
            path=path,
            retry_after=parse_retry_after(res.getheader("Retry-After")),
        )


def _as_os_error(err: BaseException) -> OSError:
    return err if isinstance(err, OSError) else ConnectionError(str(err) or type(err).__name__)


def _describe(err: BaseException) -> str:
    if isinstance(err, (socket.timeout, TimeoutError)):
        return "timed out"
    cause = err.__cause__
    text = str(err) or type(err).__name__
    return f"{text}: {cause}" if cause is not None and str(cause) not in text else text
