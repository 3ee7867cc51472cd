"""Real local HTTP peers of the tests: a scripted server (answers from a script, records what it got) and
a file server for manifests. Each runs on 127.0.0.1, a free port, in a thread."""

from __future__ import annotations

import http.server
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Recorded:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes


@dataclass
class Reply:
    """One scripted answer: ``status``, ``headers``, ``body``; ``drop`` closes the connection without
    answering; ``delay_s`` waits first."""

    status: int = 200
    body: bytes = b"{}"
    headers: dict[str, str] = field(default_factory=lambda: {"Content-Type": "application/json"})
    drop: bool = False
    delay_s: float = 0.0


class ScriptedServer:
    """Answers each request with the next :class:`Reply` of ``script`` (the last one repeats); records
    every request. HTTP/1.1 with keep-alive; ``idle_close_s`` closes a connection idle that long."""

    def __init__(self, script: list[Reply] | Callable[[Recorded], Reply], idle_close_s: float | None = None) -> None:
        self.requests: list[Recorded] = []
        self.connections = 0
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            timeout = idle_close_s

            def setup(self) -> None:
                super().setup()
                outer.connections += 1

            def _any(self) -> None:
                length = int(self.headers.get("Content-Length", "0") or 0)
                rec = Recorded(self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, self.rfile.read(length))
                outer.requests.append(rec)
                reply = script(rec) if callable(script) else script[min(len(outer.requests), len(script)) - 1]
                if reply.delay_s:
                    time.sleep(reply.delay_s)
                if reply.drop:
                    self.close_connection = True
                    self.connection.close()
                    return
                try:
                    self.send_response(reply.status)
                    for k, v in reply.headers.items():
                        self.send_header(k, v)
                    self.send_header("Content-Length", str(len(reply.body)))
                    self.end_headers()
                    self.wfile.write(reply.body)
                except (BrokenPipeError, ConnectionResetError):
                    self.close_connection = True  # the client gave up first (its timeout tests)

            do_GET = do_POST = do_DELETE = do_PATCH = _any  # noqa: N815

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def __enter__(self) -> ScriptedServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def serve(server: http.server.HTTPServer) -> threading.Thread:
    """Runs ``server`` in a daemon thread."""
    t = threading.Thread(target=server.serve_forever, daemon=True)
    t.start()
    return t


def load_example(name: str) -> Any:
    """The module ``examples/<name>.py`` (the examples are scripts, not a package)."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "examples" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"labelgate_example_{name}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def eventually(check: Callable[[], Any], timeout_s: float = 30.0, interval_s: float = 0.2, what: str = "condition") -> Any:
    """Polls ``check`` until it returns a truthy value (returned) or ``timeout_s`` passes (AssertionError)."""
    deadline = time.monotonic() + timeout_s
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} not reached within {timeout_s:g} s")
        time.sleep(interval_s)
