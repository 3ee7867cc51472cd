"""Qualification from the Python client on a real gateway (contract §qualification): ``quality.qualification`` is
set, read back typed and cleared through ``client.settings``; a manifest's gold lines carry ``gold_explanation``,
which a labeler in training gets back with the right answer after its exam answer; a bad explanation fails the
job naming its line."""

from __future__ import annotations

import http.server
import json
import unittest
import uuid

import labelgate

from . import stack
from .servers import eventually, serve


class _Manifests:
    """Serves the manifests put in ``bodies`` (path -> JSONL bytes) on 127.0.0.1."""

    def __init__(self) -> None:
        self.bodies: dict[str, bytes] = {}
        bodies = self.bodies

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802
                body = bodies.get(self.path)
                if body is None:
                    self.send_error(404)
                    return
                self.send_response(200)
                self.send_header("Content-Type", "application/x-ndjson")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: object) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        serve(self.server)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def put(self, lines: list[dict[str, object]]) -> str:
        path = f"/{uuid.uuid4().hex}.jsonl"
        self.bodies[path] = b"".join(json.dumps(line).encode() + b"\n" for line in lines)
        return self.url + path

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class QualificationTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.stack = stack.get()
        cls.manifests = _Manifests()

    @classmethod
    def tearDownClass(cls) -> None:
        cls.manifests.close()

    def test_settings_set_read_and_clear(self) -> None:
        client, _, _ = self.stack.customer()
        with client:
            got = client.settings.update(quality={"qualification": {"gold_tasks": 10, "min_accuracy": 0.65}})
            self.assertEqual(got.quality.qualification, labelgate.models.Qualification(gold_tasks=10, min_accuracy=0.65))
            self.assertEqual(client.settings.get().quality.qualification, got.quality.qualification)
            with self.assertRaises(labelgate.ValidationError) as ctx:
                client.settings.update(quality={"qualification": {"gold_tasks": 0, "min_accuracy": 0.65}})
            self.assertIn("quality.qualification.gold_tasks", json.dumps(ctx.exception.body))
            self.assertIsNone(client.settings.update(quality={"qualification": None}).quality.qualification)

    def test_manifest_explanation_reaches_a_labeler_in_training(self) -> None:
        client, _, _ = self.stack.customer()
        with client:
            client.settings.update(quality={"qualification": {"gold_tasks": 1, "min_accuracy": 0.65}})
            question = f"qualify {uuid.uuid4().hex[:6]}: which pet?"
            url = self.manifests.put(
                [
                    {
                        "data_url": "https://images.example/q/1.jpg",
                        "gold_label": "cat",
                        "gold_explanation": "Whiskers and pointed ears.",
                    },
                    {"data_url": "https://images.example/q/2.jpg"},
                ]
            )
            job = client.jobs.create(url, {"question": question, "options": ["cat", "dog"]}, type="image_classification")

            def ingested() -> bool:
                j = client.jobs.get(job.job_id)
                self.assertNotEqual(j.status, "failed", j.error)
                return j.status == "labeling"

            eventually(ingested, 120, 0.5, "the manifest ingested")
            labeler = self.stack.labeler("py-qualification")
            with labeler:
                # a labeler new to the space is trained on its gold task (claimed by id: a claim of any task
                # could be another customer's on this shared stack)
                gold = next(t for t in client.tasks.list() if t.data_url.endswith("/q/1.jpg"))
                claim = labeler.claim(gold.task_id)
                assert claim is not None
                self.assertEqual(claim.data_url, "https://images.example/q/1.jpg")
                recorded = labeler.label(claim.claim_id, "dog")
                training = recorded.extra["training"]
                self.assertEqual(
                    (training["correct"], training["right_answer"], training["explanation"], training["status"]),
                    (False, {"label": "cat"}, "Whiskers and pointed ears.", "failed_qualification"),
                )
                # failed: nothing more of this space (another customer's task may still be open to it)
                regular = next(t for t in client.tasks.list() if t.data_url.endswith("/q/2.jpg"))
                self.assertIsNone(labeler.claim(regular.task_id))

    def test_a_bad_explanation_fails_the_job_naming_its_line(self) -> None:
        client, _, _ = self.stack.customer()
        with client:
            url = self.manifests.put(
                [
                    {"data_url": "https://images.example/q/1.jpg", "gold_label": "cat", "gold_explanation": "ok"},
                    {"data_url": "https://images.example/q/2.jpg", "gold_label": "cat", "gold_explanation": "x" * 2001},
                ]
            )
            job = client.jobs.create(url, {"question": "which pet?", "options": ["cat", "dog"]}, type="image_classification")
            def failed() -> labelgate.Job | None:
                j = client.jobs.get(job.job_id)
                return j if j.status == "failed" else None

            self.assertIn('line 2: "gold_explanation" longer than 2000 characters', eventually(failed, 120, 0.5, "the job failed").error or "")


if __name__ == "__main__":
    unittest.main()
