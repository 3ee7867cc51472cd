"""The models take the API's JSON as it grows (unknown fields kept, typed kinds' ``consensus``), give it
back with ``to_dict()``, and flatten to records for pandas."""

from __future__ import annotations

import json
import unittest

from labelgate import models
from labelgate.models import Claim, Page, Task, TaskResult

SETTLED = {
    "task_id": "tsk_7Hq2Lx9VbN4sKd1Pz8WmYt",
    "status": "settled",
    "consensus_label": '{"labels":["cat","dog"]}',
    "confidence": 1,
    "resolution": "consensus",
    "label_counts": {"cat": 3},
    "posterior": {"cat": 0.9, "dog": 0.1},
    "labels_collected": 3,
    "settled_at": "2026-03-14T09:41:07.120Z",
    "settlement": {"ledger": "local", "ledger_txid": "0x" + "9f" * 32, "sequence": 4, "prev_hash": "0" * 64,
                   "recorded_at": "2026-03-14T09:41:07.120Z", "anchor_note": "new"},
    # fields of a newer gateway (DESIGN §12 typed task kinds)
    "consensus": {"labels": [{"label": "cat", "confidence": 0.97}, {"label": "dog", "confidence": 0.91}]},
    "label_posteriors": {"cat": 0.97, "dog": 0.91},
}  # fmt: skip


class ModelsTest(unittest.TestCase):
    def test_unknown_fields_are_kept_and_given_back(self) -> None:
        r = TaskResult.from_dict(SETTLED)
        self.assertEqual(r.settlement.ledger_txid, "0x" + "9f" * 32)
        self.assertEqual(r.consensus["labels"][0]["label"], "cat")
        self.assertEqual(r.extra, {"label_posteriors": {"cat": 0.97, "dog": 0.91}})
        self.assertEqual(r.settlement.extra, {"anchor_note": "new"})
        self.assertIsNone(r.settlement.chain_id)
        # exactly the JSON it came from (absent optional fields stay absent, ints stay ints)
        self.assertEqual(json.dumps(r.to_dict(), sort_keys=True), json.dumps(SETTLED, sort_keys=True))

    def test_missing_required_field_names_it(self) -> None:
        with self.assertRaises(KeyError) as ctx:
            Claim.from_dict({"claim_id": "clm_1", "task_id": "tsk_1"})
        self.assertIn("data_url", str(ctx.exception))

    def test_records_are_flat(self) -> None:
        rec = TaskResult.from_dict(SETTLED).to_record()
        self.assertEqual(rec["settlement.ledger_txid"], "0x" + "9f" * 32)
        self.assertEqual(rec["posterior.cat"], 0.9)
        self.assertEqual(rec["consensus.labels"][1]["label"], "dog")  # lists stay values
        self.assertNotIn("settlement", rec)
        line = {"task_id": "tsk_1", "source": {"source-ref": "s3://b/1.jpg", "meta": {"k": 1}}, "confidence": None}
        self.assertEqual(models.flatten(line), {"task_id": "tsk_1", "source.source-ref": "s3://b/1.jpg", "source.meta.k": 1, "confidence": None})

    def test_page_of_tasks(self) -> None:
        p = Page.of(Task, {"page": 2, "per_page": 1, "total": 3, "items": [
            {"task_id": "tsk_1", "status": "pending", "task_type": "image_classification", "data_url": "https://x/1",
             "created_at": "2026-03-14T09:26:53.589Z", "label_spec": {"question": "q", "classes": ["car"]}, "brand_new": 1}]})  # fmt: skip
        (task,) = list(p)
        self.assertEqual((p.page, p.total, task.task_id), (2, 3, "tsk_1"))
        assert task.label_spec is not None
        self.assertEqual(task.label_spec.classes, ["car"])
        self.assertEqual(task.extra, {"brand_new": 1})


if __name__ == "__main__":
    unittest.main()
