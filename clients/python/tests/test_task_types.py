"""The task types of contract §task-types end to end on a real gateway: ``client.tasks.create`` with a type's
``label_spec``, ``data_text`` and ``gold_answer``; claims carrying the type and the text; ``LabelerClient.label``
with an answer body (a refused one raises ValidationError naming the part and leaves the claim open); the typed
consensus (:class:`labelgate.BoxConsensus`, :class:`labelgate.SpanConsensus`,
:class:`labelgate.MultiLabelConsensus`) on the result, the task and the verified ``task.settled`` webhook."""

from __future__ import annotations

import json
import unittest
import uuid

import labelgate
from labelgate.webhooks import TaskSettledEvent

from . import stack
from .servers import eventually, load_example, serve

IMAGE = "https://images.example/street.jpg"


class TaskTypesTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.stack = stack.get()
        cls.client, _, _ = cls.stack.customer()
        cls.labelers = [cls.stack.labeler(f"py-typed-{i}") for i in range(2)]
        cls.events: list[TaskSettledEvent] = []
        cls.secret = "whsec_" + uuid.uuid4().hex
        cls.receiver = load_example("webhook_receiver").make_server(cls.secret, 0, on_event=cls.events.append)
        serve(cls.receiver)
        cls.client.webhooks.create(f"http://127.0.0.1:{cls.receiver.server_address[1]}/hook", cls.secret)

    @classmethod
    def tearDownClass(cls) -> None:
        cls.receiver.shutdown()
        cls.receiver.server_close()
        cls.client.close()
        for labeler in cls.labelers:
            labeler.close()

    def _claim(self, i: int, task_id: str) -> labelgate.Claim:
        claim = self.labelers[i].claim(task_id=task_id)
        assert claim is not None
        return claim

    def _event(self, task_id: str) -> TaskSettledEvent:
        return eventually(lambda: next((e for e in self.events if e.task_id == task_id), None), 60, what="the task.settled webhook")

    def test_bounding_box(self) -> None:
        spec = {"question": "Box every car", "classes": ["car", "person"]}
        accepted = self.client.tasks.create(type="bounding_box", data_url=IMAGE, label_spec=spec, consensus_threshold=2)
        claim = self._claim(0, accepted.task_id)
        self.assertEqual(claim.task_type, "bounding_box")
        self.assertEqual(claim.label_spec.classes, ["car", "person"])
        with self.assertRaises(labelgate.ValidationError) as ctx:
            self.labelers[0].label(claim.claim_id, {"boxes": [{"label": "bus", "x": 0, "y": 0, "w": 1, "h": 1}]})
        self.assertEqual([(d.path, d.message) for d in ctx.exception.details], [("boxes.0.label", 'unknown class "bus"')])
        first = self.labelers[0].label(claim.claim_id, {"boxes": [{"label": "car", "x": 100, "y": 50, "w": 200, "h": 100}]})
        self.assertEqual(first.answer, {"boxes": [{"label": "car", "x": 100, "y": 50, "w": 200, "h": 100}]})
        second = self.labelers[1].label(self._claim(1, accepted.task_id).claim_id,
                                        {"boxes": [{"label": "car", "x": 104, "y": 52, "w": 196, "h": 98}]})  # fmt: skip
        self.assertEqual(second.labels_needed, 0)

        result = self.client.tasks.wait(accepted.task_id, timeout_s=60, interval_s=0.25)
        consensus = result.consensus
        assert isinstance(consensus, labelgate.BoxConsensus)
        (box,) = list(consensus)
        self.assertIsInstance(box, labelgate.ConsensusBox)
        self.assertEqual((box.label, box.support), ("car", 2))
        self.assertTrue(100 <= box.x <= 104 and 0 < box.confidence <= 1)
        self.assertEqual(json.loads(result.consensus_label), {"boxes": [{"label": "car", "x": box.x, "y": box.y, "w": box.w, "h": box.h}]})
        self.assertEqual(self.client.tasks.get(accepted.task_id).consensus, consensus)
        event = self._event(accepted.task_id)
        self.assertEqual((event.consensus, event.consensus_label), (consensus, result.consensus_label))

    def test_text_span(self) -> None:
        text = "😀 Aspirin helped Maria sleep."  # an emoji first: offsets are code points (str indices)
        spec = {"question": "Mark the drugs and the people", "entity_types": ["DRUG", "PERSON"]}
        accepted = self.client.tasks.create(type="text_span", data_url="https://texts.example/1.txt", data_text=text,
                                            label_spec=spec, consensus_threshold=2)  # fmt: skip
        spans = [{"start": text.index("Aspirin"), "end": text.index("Aspirin") + 7, "label": "DRUG"},
                 {"start": text.index("Maria"), "end": text.index("Maria") + 5, "label": "PERSON"}]  # fmt: skip
        for i in range(2):
            claim = self._claim(i, accepted.task_id)
            self.assertEqual((claim.task_type, claim.data_text), ("text_span", text))
            self.assertEqual(claim.label_spec.entity_types, ["DRUG", "PERSON"])
            self.assertEqual(self.labelers[i].label(claim.claim_id, {"spans": spans[::-1]}).answer, {"spans": spans})

        result = self.client.tasks.wait(accepted.task_id, timeout_s=60, interval_s=0.25)
        consensus = result.consensus
        assert isinstance(consensus, labelgate.SpanConsensus)
        self.assertEqual([text[s.start : s.end] for s in consensus], ["Aspirin", "Maria"])
        self.assertEqual([s.label for s in consensus], ["DRUG", "PERSON"])
        self.assertTrue(all(0 < s.confidence <= 1 for s in consensus))
        task = self.client.tasks.get(accepted.task_id)
        self.assertEqual((task.data_text, task.consensus), (text, consensus))
        self.assertEqual(self._event(accepted.task_id).consensus, consensus)

    def test_free_text(self) -> None:
        spec = {"question": "Transcribe the clip", "max_length": 200}
        accepted = self.client.tasks.create(type="free_text", data_url="https://audio.example/1.wav", label_spec=spec, consensus_threshold=2)
        for i, text in enumerate(["The cat sat.", "the cat sat"]):
            claim = self._claim(i, accepted.task_id)
            self.assertEqual((claim.task_type, claim.label_spec.max_length), ("free_text", 200))
            self.assertEqual(self.labelers[i].label(claim.claim_id, {"text": text}).answer, {"text": text})
        result = self.client.tasks.wait(accepted.task_id, timeout_s=60, interval_s=0.25)
        consensus = result.consensus
        assert isinstance(consensus, labelgate.FreeTextConsensus)
        self.assertEqual((consensus.text, [w.word for w in consensus.words]), ("the cat sat", ["the", "cat", "sat"]))
        self.assertEqual(self.client.tasks.get(accepted.task_id).consensus, consensus)

    def test_pairwise_comparison_and_the_batch_ranking(self) -> None:
        img = lambda name: f"https://images.example/{name}.jpg"  # noqa: E731
        spec = {"question": "Which photo is sharper?"}
        pairs = [("q1", "q2"), ("q3", "q2"), ("q1", "q3")]
        batch = self.client.tasks.batch(
            [{"type": "pairwise_comparison", "data_url": img(a), "data_url_b": img(b), "label_spec": spec, "consensus_threshold": 2}
             for a, b in pairs]  # fmt: skip
        )
        for task_id, winner in zip(batch.task_ids, ["a", "a", "a"]):
            for i in range(2):
                claim = self._claim(i, task_id)
                self.assertEqual((claim.task_type, claim.data_url_b is not None), ("pairwise_comparison", True))
                self.labelers[i].label(claim.claim_id, {"winner": winner})
        result = self.client.tasks.wait(batch.task_ids[0], timeout_s=60, interval_s=0.25)
        assert isinstance(result.consensus, labelgate.PairwiseConsensus)
        self.assertEqual(result.consensus.winner, "a")
        ranking = self.client.batches.ranking(batch.batch_id)
        self.assertIsInstance(ranking, labelgate.Ranking)
        self.assertEqual([i.item for i in ranking], [img("q1"), img("q3"), img("q2")])
        self.assertEqual(ranking.labels, 6)
        self.assertTrue(all(i.ci_low < i.score < i.ci_high for i in ranking))
        with self.assertRaises(labelgate.NotFoundError):
            self.client.jobs.ranking("job_unknown000000000000000")

    def test_multi_label_and_a_gold_task(self) -> None:
        spec = {"question": "Which apply?", "options": ["red", "round", "ripe"]}
        accepted = self.client.tasks.create(type="multi_label_classification", data_url=IMAGE, label_spec=spec, consensus_threshold=2)
        for i, labels in enumerate((["round", "red"], ["red", "round"])):
            recorded = self.labelers[i].label(self._claim(i, accepted.task_id).claim_id, {"labels": labels})
            self.assertEqual((recorded.label, recorded.answer), ('{"labels":["red","round"]}', {"labels": ["red", "round"]}))
        result = self.client.tasks.wait(accepted.task_id, timeout_s=60, interval_s=0.25)
        consensus = result.consensus
        assert isinstance(consensus, labelgate.MultiLabelConsensus)
        self.assertEqual(consensus.labels, ["red", "round"])
        self.assertEqual(sorted(consensus.confidence), ["red", "ripe", "round"])
        self.assertEqual(result.consensus_label, '{"labels":["red","round"]}')
        self.assertEqual(self._event(accepted.task_id).consensus, consensus)

        gold = {"labels": ["ripe"]}
        gold_task = self.client.tasks.create(type="multi_label_classification", data_url=IMAGE, label_spec=spec, gold_answer=gold)
        got = self.client.tasks.get(gold_task.task_id)
        self.assertEqual((got.gold, got.gold_answer, got.consensus), (True, gold, None))
        with self.assertRaises(labelgate.ValidationError) as ctx:
            self.client.tasks.create(type="bounding_box", data_url=IMAGE, label_spec={"question": "q", "options": ["a", "b"]})
        self.assertIn("label_spec.classes", [d.path for d in ctx.exception.details])

    def test_single_choice_has_no_consensus_object(self) -> None:
        accepted = self.client.tasks.create(type="image_classification", data_url=IMAGE,
                                            label_spec={"question": "Animal?", "options": ["cat", "dog"]}, consensus_threshold=1)  # fmt: skip
        self.assertEqual(self.labelers[0].label(self._claim(0, accepted.task_id).claim_id, "dog").label, "dog")
        result = self.client.tasks.wait(accepted.task_id, timeout_s=60, interval_s=0.25)
        self.assertEqual((result.consensus_label, result.consensus), ("dog", None))
        self.assertIsNone(self._event(accepted.task_id).consensus)


if __name__ == "__main__":
    unittest.main()
