"""The whole customer flow on a real gateway: create → label through LabelerClient → result → the
task.settled webhook received by a local http.server receiver (examples/webhook_receiver.py) and
verified; then deliveries and redelivery, batches, cancel, settings, billing, dashboard, records."""

from __future__ import annotations

import datetime
import threading
import unittest
import uuid

import labelgate
from labelgate.webhooks import TaskSettledEvent

from . import stack
from .servers import eventually, load_example, serve


class CustomerFlowTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.stack = stack.get()
        cls.client, _, cls.customer_id = cls.stack.customer()
        cls.labelers = [cls.stack.labeler(f"py-flow-{i}") for i in range(2)]
        cls.events: list[TaskSettledEvent] = []
        cls.secret = "whsec_" + uuid.uuid4().hex
        receiver = load_example("webhook_receiver")
        cls.receiver = receiver.make_server(cls.secret, 0, on_event=cls.events.append)
        serve(cls.receiver)
        cls.hook_url = f"http://127.0.0.1:{cls.receiver.server_address[1]}/hook"
        cls.webhook = cls.client.webhooks.create(cls.hook_url, cls.secret)

    @classmethod
    def tearDownClass(cls) -> None:
        cls.receiver.shutdown()
        cls.receiver.server_close()
        cls.client.close()

    def _label(self, task_id: str, answer: str, labeler: labelgate.LabelerClient) -> labelgate.RecordedLabel:
        claim = labeler.claim(task_id=task_id)
        assert claim is not None
        self.assertEqual(claim.task_id, task_id)
        return labeler.label(claim.claim_id, answer)

    def test_create_label_result_webhook(self) -> None:
        c = self.client
        spec = {"question": f"flow {uuid.uuid4().hex[:6]}: which animal?", "options": ["cat", "dog"]}
        accepted = c.tasks.create(type="image_classification", data_url="https://images.example/cat-1.jpg", label_spec=spec,
                                  consensus_threshold=2, metadata={"sku": "A-1"})  # fmt: skip
        self.assertEqual(accepted.status, "pending")
        self.assertIsNone(c.tasks.result(accepted.task_id))  # 202 while labeling

        first = self._label(accepted.task_id, "cat", self.labelers[0])
        self.assertGreater(first.labels_needed, 0)
        self.assertIsNone(c.tasks.result(accepted.task_id))
        second = self._label(accepted.task_id, "cat", self.labelers[1])
        self.assertEqual(second.labels_needed, 0)  # this label decided the task

        result = c.tasks.wait(accepted.task_id, timeout_s=60, interval_s=0.25)
        self.assertIsInstance(result, labelgate.TaskResult)
        self.assertEqual((result.task_id, result.status, result.consensus_label), (accepted.task_id, "settled", "cat"))
        self.assertGreater(result.confidence, 0.5)
        self.assertEqual(result.label_counts, {"cat": 2, "dog": 0})
        self.assertEqual(result.settlement.ledger, "evm")
        self.assertRegex(result.settlement.ledger_txid, r"^0x[0-9a-f]{64}$")
        self.assertTrue(labelgate.verify_settlement(result, self.stack.rpc_url))

        # the webhook, received and verified by the example receiver
        event = eventually(lambda: next((e for e in self.events if e.task_id == accepted.task_id), None), 60, what="the task.settled webhook")
        self.assertEqual((event.event, event.consensus_label, event.ledger_txid), ("task.settled", "cat", result.settlement.ledger_txid))
        self.assertAlmostEqual(event.confidence, result.confidence)
        self.assertTrue(event.event_id and event.event_id.startswith("evt_"))
        self.assertEqual(event.delivery_attempt, 1)

        task = eventually(lambda: (t := c.tasks.get(accepted.task_id)).webhook_status == "delivered" and t, 30, what="webhook_status delivered")
        self.assertEqual((task.status, task.metadata, task.consensus_label), ("settled", {"sku": "A-1"}, "cat"))

        # the delivery log, and a redelivery: one more attempt of the same event
        page = c.webhooks.deliveries(self.webhook.webhook_id, status="delivered")
        delivery = next(d for d in page if d.task_id == accepted.task_id)
        self.assertEqual((delivery.event_id, delivery.attempts), (event.event_id, 1))
        self.assertTrue(delivery.attempt_log[0].success)
        queued = c.webhooks.redeliver(self.webhook.webhook_id, delivery.delivery_id)
        self.assertEqual((queued.delivery_id, queued.status), (delivery.delivery_id, "queued"))

        def redelivered() -> labelgate.Delivery | None:
            d = next(d for d in c.webhooks.deliveries(self.webhook.webhook_id) if d.delivery_id == delivery.delivery_id)
            return d if d.attempts == 2 and d.attempt_log[0].success else None

        again = eventually(redelivered, 60, what="the redelivery")
        self.assertTrue(again.attempt_log[0].manual)
        self.assertIn(self.webhook.webhook_id, [w.webhook_id for w in c.webhooks.list()])

    def test_batches_cancel_and_records(self) -> None:
        c = self.client
        spec = {"question": f"batch {uuid.uuid4().hex[:6]}", "options": ["yes", "no"]}
        tasks = [{"type": "text_classification", "data_url": f"https://texts.example/{i}.txt", "label_spec": spec} for i in range(3)]
        key = "batch-" + uuid.uuid4().hex
        accepted = c.tasks.batch(tasks, max_labels=5, idempotency_key=key)
        self.assertEqual((accepted.task_count, len(accepted.task_ids)), (3, 3))
        again = c.tasks.batch(tasks, max_labels=5, idempotency_key=key)  # a replay: the same batch, no new task
        self.assertEqual((again.batch_id, again.task_ids), (accepted.batch_id, accepted.task_ids))
        batch = c.batches.get(accepted.batch_id)
        self.assertEqual((batch.task_count, batch.counts.pending), (3, 3))

        canceled = c.tasks.cancel(accepted.task_ids[0])
        self.assertEqual(canceled.status, "canceled")
        with self.assertRaises(labelgate.ConflictError) as ctx:
            c.tasks.result(accepted.task_ids[0])
        self.assertEqual(ctx.exception.error, "task canceled")
        self.assertEqual(c.batches.get(accepted.batch_id).counts.canceled, 1)

        records = c.tasks.to_records(c.tasks.get(t) for t in accepted.task_ids)
        self.assertEqual([r["task_id"] for r in records], accepted.task_ids)
        self.assertEqual(records[0]["label_spec.question"], spec["question"])
        self.assertEqual(records[0]["status"], "canceled")
        everything = c.tasks.to_records()
        self.assertTrue(set(accepted.task_ids) <= {r["task_id"] for r in everything})
        self.assertEqual({r["task_id"] for r in c.tasks.to_records(status="canceled")} & set(accepted.task_ids), {accepted.task_ids[0]})

    def test_account_settings_billing_dashboard(self) -> None:
        c = self.client
        me = c.account.get()
        self.assertEqual((me.customer_id, me.tier), (self.customer_id, "production"))
        self.assertTrue(me.api_key_hint and me.api_key_hint.startswith("sk_live_"))

        s = c.settings.update(task_defaults={"confidence_target": 0.9, "min_labels": 2}, quality={"gold_rate": 0.05})
        self.assertEqual((s.task_defaults.confidence_target, s.task_defaults.min_labels, s.quality.gold_rate), (0.9, 2, 0.05))
        s = c.settings.update(task_defaults={"min_gain": 0.05})
        self.assertEqual(s.task_defaults.min_gain, 0.05)
        with self.assertRaises(labelgate.ValidationError) as gain:
            c.settings.update(task_defaults={"min_gain": 0.9})
        self.assertEqual([d.path for d in gain.exception.details], ["task_defaults.min_gain"])
        s = c.settings.update(task_defaults={"confidence_target": None, "min_labels": None, "min_gain": None})
        self.assertIsNone(s.task_defaults.confidence_target)
        self.assertIsNone(s.task_defaults.min_gain)
        self.assertEqual(c.settings.get().quality.gold_rate, 0.05)
        with self.assertRaises(labelgate.ValidationError) as ctx:
            c.settings.update(task_defaults={"consensus_threshold": 5, "max_labels": 3})
        self.assertTrue(any(d.path.startswith("task_defaults") for d in ctx.exception.details))

        month = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m")
        usage = c.billing.usage(month)
        self.assertEqual((usage.month, usage.currency), (month, "usd"))
        self.assertIsInstance(usage.amount_cents, int)
        invoices = c.billing.invoices()
        self.assertEqual([i.status for i in invoices if i.month == month], ["open"])

        overview = c.dashboard.overview()
        self.assertGreaterEqual(overview.label_quota, overview.label_quota_remaining)
        self.assertEqual(len(c.dashboard.usage().days), 30)
        self.assertEqual(c.dashboard.quality().window_days, 90)
        self.assertIsInstance(c.dashboard.labelers().items, list)
        self.assertTrue(c.health().ok)

    def test_claim_idempotency_key(self) -> None:
        """LabelerClient.claim always sends Idempotency-Key (tests/test_transport.py checks the header). A gateway
        whose OpenAPI document lists the header on POST /v1/labeling/claims (contract §labelers) must answer the same key
        with the same claim; one that does not yet is skipped here."""
        import json
        import urllib.request

        with urllib.request.urlopen(f"{self.stack.base_url}/v1/openapi.json", timeout=30) as res:  # noqa: S310
            doc = json.loads(res.read())
        params = doc["paths"]["/v1/labeling/claims"]["post"].get("parameters", [])
        names = {p.get("name") or p.get("$ref", "").rsplit("/", 1)[-1] for p in params}
        spec = {"question": f"claim key {uuid.uuid4().hex[:6]}", "options": ["a", "b"]}
        task = self.client.tasks.create(type="image_classification", data_url="https://x.example/k.jpg", label_spec=spec)
        lab = self.stack.labeler("py-claim-key")
        key = "claim-" + uuid.uuid4().hex
        first = lab.claim(task_id=task.task_id, idempotency_key=key)
        assert first is not None
        if "Idempotency-Key" not in names:
            lab.release(first.claim_id)
            self.skipTest("this gateway does not document Idempotency-Key on claims yet (contract §labelers)")
        again = lab.claim(task_id=task.task_id, idempotency_key=key)
        assert again is not None
        self.assertEqual(again.claim_id, first.claim_id)
        lab.release(first.claim_id)

    def test_instructions(self) -> None:
        """A label spec's instructions and examples: the claim names the space and its version, the labeler
        reads them; a second, different guide is version 2; an example that does not fit is a ValidationError."""
        spec = {"question": f"guide {uuid.uuid4().hex[:6]}", "options": ["cat", "dog"]}
        guide = {"instructions": "Pick **cat** for kittens.",
                 "examples": [{"data_text": "a kitten", "answer": {"label": "cat"}, "explanation": "kittens are cats"}]}  # fmt: skip
        task = self.client.tasks.create(type="text_classification", data_url="https://x.example/g.txt", label_spec={**spec, **guide})
        lab = self.stack.labeler("py-guide")
        claim = lab.claim(task_id=task.task_id)
        assert claim is not None and claim.label_space is not None
        self.assertEqual(claim.instructions_version, 1)
        got = lab.instructions(claim.label_space)
        self.assertEqual((got.version, got.instructions, got.examples), (1, guide["instructions"], guide["examples"]))
        lab.release(claim.claim_id)
        self.client.tasks.create(type="text_classification", data_url="https://x.example/h.txt",
                                 label_spec={**spec, "instructions": "Dogs too."})  # fmt: skip
        self.assertEqual(lab.instructions(claim.label_space).version, 2)
        with self.assertRaises(labelgate.ValidationError) as bad:
            self.client.tasks.create(type="text_classification", data_url="https://x.example/i.txt",
                                     label_spec={**spec, "examples": [{"data_text": "x", "answer": {"label": "horse"}}]})  # fmt: skip
        self.assertIn("label_spec.examples.0.answer.label", [d.path for d in bad.exception.details])

    def test_prelabel(self) -> None:
        """A pre-label is shown in the claim with show_prelabel, and the task needs a person's label to settle;
        a pre-label of another type is a ValidationError."""
        spec = {"question": f"pre {uuid.uuid4().hex[:6]}", "options": ["cat", "dog"], "show_prelabel": True}
        prelabel = {"answer": {"label": "dog"}, "model": "py-model", "score": 0.9}
        task = self.client.tasks.create(type="image_classification", data_url="https://x.example/p.jpg", label_spec=spec,
                                        consensus_threshold=1, prelabel=prelabel)  # fmt: skip
        self.assertEqual(self.client.tasks.get(task.task_id).status, "pending")
        lab = self.stack.labeler("py-pre")
        claim = lab.claim(task_id=task.task_id)
        assert claim is not None
        self.assertEqual(claim.prelabel, prelabel)
        lab.label(claim.claim_id, "dog")
        result = eventually(lambda: self.client.tasks.result(task.task_id), what="the pre-labelled task's result")
        self.assertEqual((result.consensus_label, result.labels_collected), ("dog", 1))
        with self.assertRaises(labelgate.ValidationError) as bad:
            self.client.tasks.create(type="image_classification", data_url="https://x.example/q.jpg", label_spec=spec,
                                     prelabel={"answer": {"labels": ["dog"]}, "model": "m"})  # fmt: skip
        self.assertIn("prelabel.answer", [d.path for d in bad.exception.details])

    def test_labelers_from_threads(self) -> None:
        """One LabelerClient shared by threads: each keeps its own connection."""
        c = self.client
        spec = {"question": f"threads {uuid.uuid4().hex[:6]}", "options": ["a", "b"]}
        ids = c.tasks.batch([{"type": "image_classification", "data_url": f"https://x.example/{i}", "label_spec": spec,
                              "consensus_threshold": 1} for i in range(6)]).task_ids  # fmt: skip
        lab = self.stack.labeler("py-threads")
        errors: list[BaseException] = []

        def work(task_id: str) -> None:
            try:
                self._label(task_id, "a", lab)
            except BaseException as err:  # noqa: BLE001 (reported by the test thread)
                errors.append(err)

        threads = [threading.Thread(target=work, args=(t,)) for t in ids]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(errors, [])
        for t in ids:
            self.assertEqual(c.tasks.wait(t, timeout_s=60, interval_s=0.25).consensus_label, "a")


if __name__ == "__main__":
    unittest.main()
