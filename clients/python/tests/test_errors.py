"""Every typed error, from a real gateway's answers (the 503 and connection errors, which a healthy
gateway never gives, are in test_transport.py against local servers)."""

from __future__ import annotations

import time
import unittest
import uuid

import labelgate

from . import stack

TASK = {"type": "image_classification", "data_url": "https://images.example/1.jpg", "label_spec": {"question": "errors?", "options": ["a", "b"]}}


class TypedErrorsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.stack = stack.get()
        cls.client, cls.key, cls.customer_id = cls.stack.customer()

    def test_authentication_error(self) -> None:
        for key in ("sk_sandbox_" + "x" * 43, "lk_" + "y" * 43):
            with self.subTest(key=key[:6]), self.assertRaises(labelgate.AuthenticationError) as ctx:
                labelgate.Client(key, base_url=self.stack.base_url).account.get()
            self.assertEqual((ctx.exception.status, ctx.exception.error), (401, "invalid API key"))
            self.assertTrue(ctx.exception.request_id)
        with self.assertRaises(labelgate.AuthenticationError):  # a customer key on a labeler route
            labelgate.LabelerClient(self.key, base_url=self.stack.base_url).claim()

    def test_validation_error_with_details(self) -> None:
        with self.assertRaises(labelgate.ValidationError) as ctx:
            self.client.tasks.create(type="image_classification", data_url="ftp://nope", label_spec={"question": "q", "options": ["only"]})
        e = ctx.exception
        self.assertEqual((e.status, e.error), (400, "validation failed"))
        paths = {d.path for d in e.details}
        self.assertEqual(paths, {"data_url", "label_spec.options"})
        self.assertIn("data_url", str(e))
        with self.assertRaises(labelgate.ValidationError) as ctx:
            self.client.tasks.create(**TASK, surprise_field=1)  # unknown fields are refused
        self.assertTrue(ctx.exception.details)
        with self.assertRaises(labelgate.ValidationError) as ctx:
            self.client.billing.usage("2026-13")
        self.assertEqual([d.path for d in ctx.exception.details], ["month"])

    def test_not_found_error(self) -> None:
        c = self.client
        for call, message in (
            (lambda: c.tasks.get("tsk_" + "0" * 22), "task not found"),
            (lambda: c.tasks.result("tsk_" + "0" * 22), "task not found"),
            (lambda: c.jobs.get("job_" + "0" * 22), "job not found"),
            (lambda: c.batches.get("bat_" + "0" * 22), "batch not found"),
            (lambda: c.webhooks.delete("whk_" + "0" * 22), "webhook not found"),
        ):
            with self.subTest(message=message), self.assertRaises(labelgate.NotFoundError) as ctx:
                call()
            self.assertEqual((ctx.exception.status, ctx.exception.error), (404, message))
        lab = self.stack.labeler()
        with self.assertRaises(labelgate.NotFoundError) as ctx:
            lab.label("clm_" + "0" * 22, "a")
        self.assertEqual(ctx.exception.error, "claim not found")

    def test_conflict_error(self) -> None:
        email = f"py-dup-{uuid.uuid4().hex}@example.com"
        labelgate.Client.register("dup", email, base_url=self.stack.base_url)
        with self.assertRaises(labelgate.ConflictError) as ctx:
            labelgate.Client.register("dup", email, base_url=self.stack.base_url)
        self.assertEqual((ctx.exception.status, ctx.exception.error), (409, "email already registered"))

        task = self.client.tasks.create(**TASK, consensus_threshold=1)
        lab = self.stack.labeler()
        claim = lab.claim(task_id=task.task_id)
        assert claim is not None
        lab.label(claim.claim_id, "a")
        with self.assertRaises(labelgate.ConflictError) as ctx:
            lab.label(claim.claim_id, "a")
        self.assertEqual(ctx.exception.error, "claim already labeled")
        self.client.tasks.wait(task.task_id, timeout_s=60, interval_s=0.25)
        with self.assertRaises(labelgate.ConflictError) as ctx:
            self.client.tasks.cancel(task.task_id)
        self.assertEqual(ctx.exception.error, "task cannot be canceled")
        self.assertEqual(ctx.exception.body["status"], "settled")  # the error body's extra fields

    def test_idempotency_error(self) -> None:
        key = "py-idem-" + uuid.uuid4().hex
        first = self.client.tasks.create(**TASK, idempotency_key=key)
        self.assertEqual(self.client.tasks.create(**TASK, idempotency_key=key).task_id, first.task_id)  # replay
        with self.assertRaises(labelgate.IdempotencyError) as ctx:
            self.client.tasks.create(**{**TASK, "data_url": "https://images.example/2.jpg"}, idempotency_key=key)
        self.assertEqual((ctx.exception.status, ctx.exception.error), (422, "idempotency key reused with a different request"))

    def test_quota_exhausted_error(self) -> None:
        client, _, _ = self.stack.customer(quota=2)
        with self.assertRaises(labelgate.QuotaExhaustedError) as ctx:
            client.tasks.create(**TASK, consensus_threshold=3)  # reserves 3 labels, 2 left
        e = ctx.exception
        self.assertIsInstance(e, labelgate.PermissionDeniedError)
        self.assertEqual((e.status, e.error), (403, "quota exhausted"))
        self.assertEqual(client.dashboard.overview().tasks_by_status.pending, 0)  # nothing was created

    def test_payload_too_large_error(self) -> None:
        with self.assertRaises(labelgate.PayloadTooLargeError) as ctx:
            self.client.tasks.create(**TASK, metadata={"blob": "x" * 1_100_000})
        self.assertEqual((ctx.exception.status, ctx.exception.error), (413, "payload too large"))

    def test_rate_limit_error(self) -> None:
        """A sandbox key has 20 requests per 2 s on this stack; without retries the 429 surfaces."""
        client, _, _ = self.stack.customer(production=False, max_retries=0)
        with self.assertRaises(labelgate.RateLimitError) as ctx:
            for _ in range(stack.SANDBOX_BUDGET * 3):
                client.account.get()
        e = ctx.exception
        self.assertEqual((e.status, e.error, e.attempts), (429, "rate limit exceeded", 1))
        assert e.retry_after is not None
        self.assertTrue(1 <= e.retry_after <= stack.WINDOW_S)

    def test_rate_limited_calls_wait_retry_after_and_succeed(self) -> None:
        """The same sandbox budget with retries on: every call succeeds, those that met a 429 after
        waiting the gateway's Retry-After (at least 1 s)."""
        events: list[labelgate.ResponseEvent] = []
        client, _, _ = self.stack.customer(production=False, max_retries=5, on_response=events.append)
        for _ in range(stack.SANDBOX_BUDGET * 2 + 5):
            client.account.get()
        retried = [e for e in events if e.attempts > 1]
        self.assertTrue(retried, "no call met the rate limit")
        self.assertTrue(all(e.status == 200 for e in events))
        self.assertTrue(all(e.duration_s >= 1.0 for e in retried), [e.duration_s for e in retried])

    def test_wait_timeout_error(self) -> None:
        task = self.client.tasks.create(**TASK)
        t0 = time.monotonic()
        with self.assertRaises(labelgate.WaitTimeoutError) as ctx:
            self.client.tasks.wait(task.task_id, timeout_s=0.5, interval_s=0.2)
        self.assertLess(time.monotonic() - t0, 5)
        self.assertIsInstance(ctx.exception, TimeoutError)
        self.assertIsInstance(ctx.exception, labelgate.LabelgateError)

    def test_every_error_is_a_labelgate_error(self) -> None:
        for cls in (labelgate.AuthenticationError, labelgate.ValidationError, labelgate.NotFoundError, labelgate.ConflictError,
                    labelgate.IdempotencyError, labelgate.QuotaExhaustedError, labelgate.PayloadTooLargeError, labelgate.RateLimitError,
                    labelgate.ServiceUnavailableError, labelgate.InternalServerError, labelgate.APIConnectionError,
                    labelgate.ResponseError, labelgate.WaitTimeoutError):  # fmt: skip
            self.assertTrue(issubclass(cls, labelgate.LabelgateError), cls)


if __name__ == "__main__":
    unittest.main()
