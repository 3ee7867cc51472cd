"""A labelgate webhook receiver on the standard library's http.server.

Run:  LABELGATE_WEBHOOK_SECRET=<the secret you registered> python examples/webhook_receiver.py 8080
then register it:  client.webhooks.create("https://your.host/hook", secret=...)

Each delivery is verified on its raw bytes (``construct_event``: HMAC-SHA256 in constant time, timestamp
within 300 s), deduplicated on ``X-SVC-Event-Id`` (delivery is at-least-once) and answered 204 at once
(labelgate waits at most 10 s and retries anything but a 2xx). A refused delivery gets 400 with the reason.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from labelgate.webhooks import SignatureVerificationError, TaskSettledEvent, WebhookEvent, construct_event


def make_server(
    secret: str,
    port: int = 8080,
    on_event: Callable[[TaskSettledEvent | WebhookEvent], None] | None = None,
    host: str = "127.0.0.1",
) -> ThreadingHTTPServer:
    """An HTTP server whose ``POST /hook`` (any path) verifies deliveries with ``secret`` and calls
    ``on_event`` once per event id (default: print it). Call ``serve_forever()`` on it."""
    seen: set[str] = set()  # use a durable store (a table with a unique key) in production
    lock = threading.Lock()

    def show(e: TaskSettledEvent | WebhookEvent) -> None:
        if isinstance(e, TaskSettledEvent):
            print(f"task {e.task_id}: {e.consensus_label} ({e.confidence:.3f}) {e.ledger_txid}", flush=True)
        else:  # task.canceled, job.completed, job.failed: the body as sent
            print(f"{e.event}: {e.data}", flush=True)

    handle = on_event or show

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
            length = int(self.headers.get("Content-Length", "0"))
            raw = self.rfile.read(length)  # the raw bytes: verify them before any JSON parsing
            try:
                event = construct_event(raw, self.headers, secret)
            except SignatureVerificationError as err:
                self.send_response(400)
                self.send_header("Content-Type", "text/plain")
                self.end_headers()
                self.wfile.write(err.reason.encode())
                return
            with lock:
                first = event.event_id is None or event.event_id not in seen
                if event.event_id is not None:
                    seen.add(event.event_id)
            if first:
                handle(event)
            self.send_response(204)
            self.end_headers()

        def log_message(self, format: str, *args: object) -> None:  # quiet access log
            pass

    return ThreadingHTTPServer((host, port), Handler)


if __name__ == "__main__":
    server = make_server(os.environ["LABELGATE_WEBHOOK_SECRET"], int(sys.argv[1]) if len(sys.argv) > 1 else 8080)
    print(f"listening on http://{server.server_address[0]}:{server.server_address[1]}/hook", flush=True)
    server.serve_forever()
