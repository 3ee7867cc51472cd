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
    # fields of a newer gateway (contract §task-types typed task kinds)
    "consensus": {"labels": ["cat", "dog"], "confidence": {"cat": 0.97, "dog": 0.91}},
    "label_posteriors": {"cat": 0.97, "dog": 0.91},
}  # fmt: skip


class ModelsTest(unittest.TestCase):
    def test_unknown_fields_are_kept_and_given_back(self) -> None:
        r = TaskResult.from_dict(SETTLED)
        self.assertEqual(r.settlement.ledger_txid, "0x" + "9f" * 32)
        assert isinstance(r.consensus, models.MultiLabelConsensus)
        self.assertEqual((r.consensus.labels, r.consensus.confidence["dog"]), (["cat", "dog"], 0.91))
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
        self.assertEqual(rec["consensus.labels"], ["cat", "dog"])  # lists stay values
        self.assertEqual(rec["consensus.confidence.dog"], 0.91)
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

    def test_typed_consensus_of_each_type(self) -> None:
        box = {"label": "car", "x": 100.5, "y": 50, "w": 200, "h": 100, "confidence": 0.93, "support": 2}
        r = TaskResult.from_dict({**SETTLED, "consensus": {"boxes": [box]}, "posterior": {}})
        assert isinstance(r.consensus, models.BoxConsensus)
        (b,) = list(r.consensus)
        self.assertEqual((b.label, b.x, b.w, b.support, b.confidence), ("car", 100.5, 200, 2, 0.93))
        self.assertEqual(r.to_dict()["consensus"], {"boxes": [box]})
        span = {"start": 2, "end": 9, "label": "DRUG", "confidence": 0.88}
        t = Task.from_dict({"task_id": "tsk_1", "status": "settled", "task_type": "text_span", "data_url": "https://x/1.txt",
                            "created_at": "2026-03-14T09:26:53.589Z", "data_text": "😀 Aspirin", "consensus": {"spans": [span]},
                            "gold_answer": None})  # fmt: skip
        assert isinstance(t.consensus, models.SpanConsensus) and t.data_text is not None
        (s,) = list(t.consensus)
        self.assertEqual(t.data_text[s.start : s.end], "Aspirin")  # code points are str indices
        self.assertEqual(models.consensus_from_dict({"spans": []}), models.SpanConsensus(spans=[]))
        words = {"text": "the cat", "words": [{"word": "the", "confidence": 0.9}, {"word": "cat", "confidence": 0.8}],
                 "slots": [{"word": "the", "confidence": 0.9, "answers": ["the", None]}]}  # fmt: skip
        free = models.consensus_from_dict(words)
        assert isinstance(free, models.FreeTextConsensus)
        self.assertEqual(([w.word for w in free.words], free.slots[0].answers), (["the", "cat"], ["the", None]))
        pair = Task.from_dict({"task_id": "tsk_2", "status": "settled", "task_type": "pairwise_comparison",
                               "data_url": "https://x/a.jpg", "data_url_b": "https://x/b.jpg", "created_at": "2026-03-14T09:26:53.589Z",
                               "label_spec": {"question": "q", "allow_tie": True}, "consensus": {"winner": "b", "confidence": 0.7}})  # fmt: skip
        assert isinstance(pair.consensus, models.PairwiseConsensus) and pair.label_spec is not None
        self.assertEqual((pair.consensus.winner, pair.data_url_b, pair.label_spec.allow_tie), ("b", "https://x/b.jpg", True))
        ranking = models.Ranking.from_dict({"items": [{"item": "https://x/a.jpg", "score": 0.5, "rank": 1, "ci_low": 0.1,
                                                       "ci_high": 0.9, "comparisons": 3}], "labels": 3, "tie_parameter": 0})  # fmt: skip
        (top,) = list(ranking)
        self.assertEqual((top.item, top.rank, top.ci_low, ranking.labels), ("https://x/a.jpg", 1, 0.1, 3))
        self.assertIsNone(models.consensus_from_dict(None))
        with self.assertRaises(ValueError):
            models.consensus_from_dict({"polygons": []})
        # single choice: no consensus object; an unknown shape is kept as sent
        self.assertIsNone(TaskResult.from_dict({k: v for k, v in SETTLED.items() if k != "consensus"}).consensus)
        self.assertEqual(TaskResult.from_dict({**SETTLED, "consensus": {"polygons": [1]}}).consensus, {"polygons": [1]})
        claim = Claim.from_dict({"claim_id": "clm_1", "task_id": "tsk_1", "data_url": "https://x/1.txt", "expires_at": "2026-03-14T09:26:53.589Z",
                                 "task_type": "text_span", "label_spec": {"question": "q", "entity_types": ["DRUG"]}, "data_text": "abc"})  # fmt: skip
        self.assertEqual((claim.data_text, claim.label_spec.entity_types), ("abc", ["DRUG"]))


if __name__ == "__main__":
    unittest.main()


class ItemErrorTest(unittest.TestCase):
    def test_a_text_span_task_canceled_for_its_text_says_why(self) -> None:
        task = Task.from_dict(
            {
                "task_id": "tsk_1",
                "status": "canceled",
                "task_type": "text_span",
                "data_url": "https://texts.example/gone.txt",
                "created_at": "2026-11-26T07:00:00.000Z",
                "label_spec": {"question": "Mark the people", "entity_types": ["PER"]},
                "item_error": "GET https://texts.example/gone.txt answered 404",
            }
        )
        self.assertEqual(task.item_error, "GET https://texts.example/gone.txt answered 404")
        self.assertIsNone(task.data_text)
        self.assertEqual(task.extra, {})
        self.assertEqual(task.to_dict()["item_error"], task.item_error)
