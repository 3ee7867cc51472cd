"""examples/model_labeler.py on a real gateway: the model labels what it knows, holds what it does not
until nothing else is open, then releases it; its labels settle the tasks."""

from __future__ import annotations

import unittest
import uuid

from labelgate.models import Claim

from . import stack
from .servers import load_example


class ModelLabelerTest(unittest.TestCase):
    def test_a_model_labels_and_skips(self) -> None:
        s = stack.get()
        client, _, _ = s.customer()
        example = load_example("model_labeler")
        spec = {"question": f"model {uuid.uuid4().hex[:6]}: which pet?", "options": ["cat", "dog"]}
        urls = ["https://pets.example/a-cat.jpg", "https://pets.example/a-dog.jpg", "https://pets.example/cat-and-dog.jpg"]
        ids = client.tasks.batch([{"type": "image_classification", "data_url": u, "label_spec": spec, "consensus_threshold": 1}
                                  for u in urls]).task_ids  # fmt: skip
        ours = set(ids)
        seen: list[str] = []

        def predict(claim: Claim) -> str | None:
            seen.append(claim.task_id)
            # only this test's tasks (the shared stack may hold other tests' open tasks)
            return example.keyword_model(claim) if claim.task_id in ours else None

        lab = s.labeler("py-model")
        given = example.run(lab, predict, stop_when_idle=True)
        self.assertEqual(given, 2)
        self.assertEqual(seen.count(ids[2]), 1)  # held, not claimed over and over
        self.assertEqual(client.tasks.wait(ids[0], timeout_s=60, interval_s=0.25).consensus_label, "cat")
        self.assertEqual(client.tasks.wait(ids[1], timeout_s=60, interval_s=0.25).consensus_label, "dog")
        self.assertIsNone(client.tasks.result(ids[2]))  # released: open for people
        claim = s.labeler("py-person").claim(task_id=ids[2])
        self.assertIsNotNone(claim)


if __name__ == "__main__":
    unittest.main()
