"""The transport against real local HTTP servers: retries on 429 (Retry-After honoured), 503 and lost
connections only when the request is safe to repeat, the same idempotency key on every attempt,
timeouts, error bodies that are not JSON, kept-alive connections the server closed."""

from __future__ import annotations

import json
import socket
import time
import unittest

import labelgate
from labelgate._transport import ResponseEvent, parse_retry_after

from .servers import Reply, ScriptedServer

TASK = {"type": "image_classification", "data_url": "https://x.example/1.jpg", "label_spec": {"question": "q", "options": ["a", "b"]}}
ACCEPTED = json.dumps({"task_id": "tsk_1", "status": "pending", "created_at": "2026-03-14T09:26:53.589Z"}).encode()
WEBHOOK = json.dumps({"webhook_id": "whk_1", "callback_url": "https://h", "events": ["task.settled"], "active": True}).encode()
ME = json.dumps({"customer_id": "cust_1", "name": "n", "email": "e@x.io", "tier": "sandbox", "label_quota": 500, "created_at": 1}).encode()


def err(status: int, message: str, retry_after: str | None = None) -> Reply:
    headers = {"Content-Type": "application/json", "X-Request-Id": f"req-{status}"}
    if retry_after is not None:
        headers["Retry-After"] = retry_after
    return Reply(status, json.dumps({"error": message}).encode(), headers)


class RetryTest(unittest.TestCase):
    def test_429_waits_retry_after_then_succeeds(self) -> None:
        events: list[ResponseEvent] = []
        with ScriptedServer([err(429, "rate limit exceeded", "1"), Reply(200, ME)]) as srv:
            c = labelgate.Client("sk_test", base_url=srv.url, on_response=events.append)
            t0 = time.monotonic()
            me = c.account.get()
            waited = time.monotonic() - t0
        self.assertEqual(me.customer_id, "cust_1")
        self.assertEqual(len(srv.requests), 2)
        self.assertGreaterEqual(waited, 1.0)
        self.assertEqual((events[-1].status, events[-1].attempts), (200, 2))

    def test_429_is_retried_even_for_a_post_without_key(self) -> None:
        # the gateway answers 429 before any handler runs: nothing happened, repeating is safe
        with ScriptedServer([err(429, "rate limit exceeded", "0"), Reply(201, WEBHOOK)]) as srv:
            w = labelgate.Client("sk_test", base_url=srv.url).webhooks.create("https://h", "s" * 16)
        self.assertEqual((w.webhook_id, len(srv.requests)), ("whk_1", 2))

    def test_429_gives_up_with_rate_limit_error(self) -> None:
        with ScriptedServer([err(429, "rate limit exceeded", "0")]) as srv:
            with self.assertRaises(labelgate.RateLimitError) as ctx:
                labelgate.Client("sk_test", base_url=srv.url, max_retries=2).account.get()
        e = ctx.exception
        self.assertEqual((e.status, e.error, e.attempts, e.retry_after, e.request_id), (429, "rate limit exceeded", 3, 0.0, "req-429"))
        self.assertEqual(len(srv.requests), 3)

    def test_retry_after_beyond_the_cap_is_raised_at_once(self) -> None:
        with ScriptedServer([err(429, "rate limit exceeded", "120")]) as srv:
            t0 = time.monotonic()
            with self.assertRaises(labelgate.RateLimitError) as ctx:
                labelgate.Client("sk_test", base_url=srv.url, max_retry_after=5).account.get()
        self.assertLess(time.monotonic() - t0, 2)
        self.assertEqual((ctx.exception.retry_after, len(srv.requests)), (120.0, 1))

    def test_503_retried_for_get_and_keyed_create_not_for_other_posts(self) -> None:
        with ScriptedServer([err(503, "service unavailable", "0"), Reply(200, ME)]) as srv:
            self.assertEqual(labelgate.Client("sk_test", base_url=srv.url).account.get().tier, "sandbox")
            self.assertEqual(len(srv.requests), 2)
        with ScriptedServer([err(503, "service unavailable", "0"), Reply(202, ACCEPTED)]) as srv:
            self.assertEqual(labelgate.Client("sk_test", base_url=srv.url).tasks.create(**TASK).task_id, "tsk_1")
            keys = [r.headers["idempotency-key"] for r in srv.requests]
            self.assertEqual(len(keys), 2)
            self.assertEqual(keys[0], keys[1])  # the same generated key on the retry: no second task
            self.assertTrue(keys[0].startswith("lgpy_"))
        with ScriptedServer([err(503, "service unavailable", "0"), Reply(201, WEBHOOK)]) as srv:
            with self.assertRaises(labelgate.ServiceUnavailableError):
                labelgate.Client("sk_test", base_url=srv.url).webhooks.create("https://h", "s" * 16)
            self.assertEqual(len(srv.requests), 1)

    def test_given_idempotency_key_is_sent(self) -> None:
        with ScriptedServer([Reply(202, ACCEPTED)]) as srv:
            labelgate.Client("sk_test", base_url=srv.url).tasks.create(**TASK, idempotency_key="order-1001")
        self.assertEqual(srv.requests[0].headers["idempotency-key"], "order-1001")
        self.assertEqual(json.loads(srv.requests[0].body), TASK)  # None fields left out

    def test_lost_connection_retried_only_when_safe(self) -> None:
        with ScriptedServer([Reply(drop=True), Reply(202, ACCEPTED)]) as srv:
            labelgate.Client("sk_test", base_url=srv.url).tasks.create(**TASK)
            self.assertEqual(len(srv.requests), 2)
        with ScriptedServer([Reply(drop=True), Reply(201, WEBHOOK)]) as srv:
            with self.assertRaises(labelgate.APIConnectionError) as ctx:
                labelgate.Client("sk_test", base_url=srv.url).webhooks.create("https://h", "s" * 16)
            self.assertEqual((ctx.exception.status, len(srv.requests)), (0, 1))

    def test_refused_connection_and_timeout(self) -> None:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]  # bound, never listening: refused
            with self.assertRaises(labelgate.APIConnectionError) as ctx:
                labelgate.Client("sk_test", base_url=f"http://127.0.0.1:{port}", max_retries=1).account.get()
        self.assertEqual((ctx.exception.status, ctx.exception.attempts), (0, 2))
        with ScriptedServer([Reply(200, ME, delay_s=1.5)]) as srv:
            with self.assertRaises(labelgate.APIConnectionError) as ctx:
                labelgate.Client("sk_test", base_url=srv.url, timeout=0.3, max_retries=0).account.get()
        self.assertIn("timed out", str(ctx.exception))

    def test_answers_that_are_not_json(self) -> None:
        with ScriptedServer([Reply(502, b"<html>Bad Gateway</html>", {"Content-Type": "text/html"})]) as srv:
            with self.assertRaises(labelgate.InternalServerError) as ctx:
                labelgate.Client("sk_test", base_url=srv.url).account.get()
        self.assertEqual((ctx.exception.status, ctx.exception.error, ctx.exception.body), (502, "<html>Bad Gateway</html>", None))
        with ScriptedServer([Reply(200, b"not json")]) as srv:
            with self.assertRaises(labelgate.ResponseError):
                labelgate.Client("sk_test", base_url=srv.url).account.get()

    def test_kept_alive_connection_closed_by_the_server(self) -> None:
        with ScriptedServer([Reply(200, ME)], idle_close_s=0.2) as srv:
            c = labelgate.Client("sk_test", base_url=srv.url)
            c.account.get()
            c.account.get()  # same connection, still open
            self.assertEqual(srv.connections, 1)
            time.sleep(0.6)  # the server closed it meanwhile; reused within 2 s: one replay on a fresh one
            c.account.get()
        self.assertEqual((len(srv.requests), srv.connections), (3, 2))

    def test_parse_retry_after(self) -> None:
        now = 1_800_000_000.0
        self.assertEqual(parse_retry_after("3", now), 3.0)
        self.assertEqual(parse_retry_after(" 1.5 ", now), 1.5)
        self.assertEqual(parse_retry_after("Fri, 15 Jan 2027 08:00:10 GMT", now), 10.0)
        self.assertEqual(parse_retry_after("Fri, 15 Jan 2027 07:00:00 GMT", now), 0.0)
        for bad in (None, "", "-1", "soon"):
            self.assertIsNone(parse_retry_after(bad, now))


class LabelerTransportTest(unittest.TestCase):
    def test_claim_sends_an_idempotency_key_and_204_is_none(self) -> None:
        with ScriptedServer([Reply(204, b"", {})]) as srv:
            lab = labelgate.LabelerClient("lk_test", base_url=srv.url)
            self.assertIsNone(lab.claim(idempotency_key="claim-7"))
            self.assertIsNone(lab.claim(task_id="tsk_1"))
        first, second = srv.requests
        self.assertEqual((first.method, first.path, first.headers["idempotency-key"]), ("POST", "/v1/labeling/claims", "claim-7"))
        self.assertEqual(json.loads(first.body), {})
        self.assertTrue(second.headers["idempotency-key"].startswith("lgpy_"))  # generated
        self.assertEqual(json.loads(second.body), {"task_id": "tsk_1"})
        self.assertEqual(first.headers["authorization"], "Bearer lk_test")

    def test_claim_is_retried_with_the_same_key(self) -> None:
        claim = {"claim_id": "clm_1", "task_id": "tsk_1", "data_url": "https://x/1", "label_spec": {"question": "q", "options": ["a", "b"]},
                 "expires_at": "2026-03-14T09:36:53.589Z"}  # fmt: skip
        with ScriptedServer([Reply(drop=True), Reply(201, json.dumps(claim).encode())]) as srv:
            c = labelgate.LabelerClient("lk_test", base_url=srv.url).claim()
        assert c is not None
        self.assertEqual(c.claim_id, "clm_1")
        self.assertEqual(srv.requests[0].headers["idempotency-key"], srv.requests[1].headers["idempotency-key"])


if __name__ == "__main__":
    unittest.main()
