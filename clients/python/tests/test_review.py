"""Review and audits on a real gateway (contract §review): ``quality.audit_rate`` draws settled tasks into the
audit queue (``client.audits``); ``client.tasks.review`` accepts a result, rejects it with the right answer
(the next revision) or alone (the task reopens); each review closes its audit, is listed on the task, and is
counted by the dashboard's reviewed figures. Every bad review raises and stores nothing."""

from __future__ import annotations

import unittest
import uuid

import labelgate

from . import stack
from .servers import eventually


class ReviewTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.stack = stack.get()
        cls.client, _, _ = cls.stack.customer()
        cls.labeler = cls.stack.labeler("py-review")
        cls.client.settings.update(quality={"audit_rate": 1})

    @classmethod
    def tearDownClass(cls) -> None:
        cls.client.close()
        cls.labeler.close()

    def _settled_cat(self, question: str) -> str:
        c = self.client
        accepted = c.tasks.create(type="image_classification", data_url="https://images.example/r.jpg",
                                  label_spec={"question": question, "options": ["cat", "dog", "bird"]},
                                  consensus_threshold=1)  # fmt: skip
        claim = self.labeler.claim(task_id=accepted.task_id)
        assert claim is not None
        self.labeler.label(claim.claim_id, "cat")
        c.tasks.wait(accepted.task_id, timeout_s=60, interval_s=0.25)
        return accepted.task_id

    def test_review_and_audits(self) -> None:
        c = self.client
        question = f"review {uuid.uuid4().hex[:6]}: which animal?"
        accepted, corrected, reopened = (self._settled_cat(question) for _ in range(3))

        audits = c.audits.page()
        self.assertEqual([a.task_id for a in audits], [accepted, corrected, reopened])
        first = audits.items[0]
        self.assertIsInstance(first, labelgate.Audit)
        self.assertEqual((first.status, first.consensus_label, first.revision, first.review_id), ("open", "cat", 1, None))
        self.assertEqual(first.label_spec.question if first.label_spec else None, question)
        self.assertEqual([a.task_id for a in c.audits.list(per_page=1)], [accepted, corrected, reopened])

        # bad reviews: nothing stored
        with self.assertRaises(ValueError):
            c.tasks.review(accepted, "accept", answer="dog")
        with self.assertRaises(labelgate.ValidationError):
            c.tasks.review(accepted, "maybe")
        with self.assertRaises(labelgate.ValidationError):
            c.tasks.review(accepted, "reject", answer="fish")
        with self.assertRaises(labelgate.NotFoundError):
            c.tasks.review("tsk_doesnotexist", "accept")
        with self.assertRaises(labelgate.ValidationError):
            c.audits.page(status="closed")
        self.assertEqual(c.tasks.get(accepted).reviews, [])

        ok = c.tasks.review(accepted, "accept")
        self.assertIsInstance(ok, labelgate.ReviewOutcome)
        self.assertEqual((ok.review.verdict, ok.review.answer, ok.review.revised), ("accept", None, False))
        self.assertIsInstance(ok.result, labelgate.TaskResult)
        self.assertEqual((ok.result.status, ok.result.revision), ("settled", 1))

        fixed = c.tasks.review(corrected, "reject", answer="dog")
        self.assertEqual((fixed.review.answer, fixed.review.revised), ({"label": "dog"}, True))
        revised = eventually(lambda: (r := c.tasks.result(corrected)) is not None and r.revision == 2 and r,
                             what="revision 2")  # fmt: skip
        self.assertEqual((revised.consensus_label, revised.resolution, revised.confidence), ("dog", "review", 1))
        self.assertEqual([r["consensus_label"] for r in revised.revisions or []], ["cat"])

        back = c.tasks.review(reopened, "reject")
        self.assertIsInstance(back.result, labelgate.TaskProgress)
        self.assertEqual((back.review.answer, back.review.revised, back.result.status), (None, True, "labeling"))
        with self.assertRaises(labelgate.ConflictError):
            c.tasks.review(reopened, "accept")

        task = c.tasks.get(accepted)
        self.assertEqual([r.review_id for r in task.reviews or []], [ok.review.review_id])
        done = {a.task_id: a for a in c.audits.list(status="done")}
        self.assertEqual(set(done), {accepted, corrected, reopened})
        self.assertEqual(done[accepted].review_id, ok.review.review_id)
        self.assertEqual(c.audits.page().total, 0)

        reviewed = c.dashboard.quality().reviewed
        assert reviewed is not None
        self.assertEqual((reviewed["reviews"], reviewed["reviewed_accuracy"]), (3, 0.3333))
        self.assertEqual([s["question"] for s in reviewed["label_spaces"]], [question])


if __name__ == "__main__":
    unittest.main()
