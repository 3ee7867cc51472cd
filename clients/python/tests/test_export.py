"""Manifest jobs on a real gateway and their export, streamed as an iterator of dicts.

- A small job goes the whole way through the API: its manifest served over http by a local server,
  two tasks labeled through LabelerClient and settled on the chain, two canceled, then exported.
- A job of 10,000 lines is exported with flat memory (tracemalloc). Its tasks are ingested by the
  gateway from the manifest; settling 10,000 tasks through the API would take minutes (each cancel or
  settlement locks the job row), so one SQL statement settles them, as bench/manifest.ts does.
"""

from __future__ import annotations

import http.server
import json
import os
import tempfile
import tracemalloc
import unittest
import uuid

import labelgate

from . import stack
from .servers import eventually, serve

LINES = 10_000


def manifest(lines: int) -> bytes:
    return b"".join(
        json.dumps({"source-ref": f"https://images.example/pets/{n:05d}-{['cat', 'dog'][n % 2]}.jpg", "line": n}).encode() + b"\n"
        for n in range(1, lines + 1)
    )


class _Files:
    """Serves ``/small.jsonl`` (4 lines) and ``/big.jsonl`` (10,000 lines) on 127.0.0.1."""

    def __init__(self) -> None:
        bodies = {"/small.jsonl": manifest(4), "/big.jsonl": manifest(LINES)}

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

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class ExportTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.stack = stack.get()
        cls.files = _Files()

    @classmethod
    def tearDownClass(cls) -> None:
        cls.files.close()

    def _ingested_job(self, client: labelgate.Client, path: str) -> labelgate.JobAccepted:
        job = client.jobs.create(
            self.files.url + path,
            {"question": f"export {uuid.uuid4().hex[:6]}: which pet?", "options": ["cat", "dog"]},
            type="image_classification",
            consensus_threshold=1,
        )

        def ingested() -> bool:
            j = client.jobs.get(job.job_id)
            self.assertNotEqual(j.status, "failed", j.error)
            return j.status == "labeling"

        eventually(ingested, 180, 0.5, "the manifest ingested")
        return job

    def test_small_job_through_the_api(self) -> None:
        client, _, _ = self.stack.customer()
        job = self._ingested_job(client, "/small.jsonl")
        with self.assertRaises(labelgate.ConflictError) as ctx:
            client.jobs.export(job.job_id)  # the request is sent at once
        self.assertEqual((ctx.exception.error, ctx.exception.body["status"]), ("job not completed", "labeling"))

        tasks = sorted(client.tasks.list(), key=lambda t: t.data_url)
        self.assertEqual(len(tasks), 4)
        lab = self.stack.labeler("py-export")
        for t in tasks[:2]:
            claim = lab.claim(task_id=t.task_id)
            assert claim is not None
            lab.label(claim.claim_id, "cat" if "cat" in claim.data_url else "dog")
        for t in tasks[2:]:
            client.tasks.cancel(t.task_id)
        done = client.jobs.wait(job.job_id, timeout_s=120, interval_s=0.5)
        self.assertEqual((done.status, done.task_count, done.tasks_settled), ("completed", 4, 2))

        lines = list(client.jobs.export(job.job_id))
        self.assertEqual([line["source"]["line"] for line in lines], [1, 2, 3, 4])  # manifest order
        settled = {t.task_id for t in tasks[:2]}
        for line in lines:
            if line["task_id"] in settled:
                self.assertIn(line["consensus_label"], line["data_url"])
                self.assertRegex(line["ledger_txid"], r"^0x[0-9a-f]{64}$")
            else:
                self.assertIsNone(line["consensus_label"])
        rows = client.tasks.to_records(client.jobs.export(job.job_id, flat=True))
        self.assertEqual(rows[0]["source.line"], 1)

        # format= (contract §exports): hf records, a Label Studio file, a format that does not fit, an unknown one
        hf = list(client.jobs.export(job.job_id, format="hf"))
        self.assertEqual([r["task_id"] for r in hf], [line["task_id"] for line in lines])
        self.assertEqual([r["label"] for r in hf], [line["consensus_label"] for line in lines])
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "tasks.json")
            client.jobs.export_to_file(job.job_id, path, format="label-studio")
            with open(path, encoding="utf-8") as f:
                tasks_ls = json.load(f)
        self.assertEqual([t["id"] for t in tasks_ls], [1, 2, 3, 4])
        with_annotation = [t["data"]["task_id"] for t in tasks_ls if t["annotations"]]
        self.assertEqual(sorted(with_annotation), sorted(settled))
        with tempfile.TemporaryDirectory() as d, self.assertRaises(labelgate.ValidationError) as unfit:
            client.jobs.export_to_file(job.job_id, os.path.join(d, "boxes.json"), format="coco")
        self.assertEqual(unfit.exception.body["formats"], ["jsonl", "label-studio", "hf"])
        with self.assertRaises(ValueError):
            client.jobs.export(job.job_id, format="yolo")
        with self.assertRaises(ValueError):
            client.jobs.export(job.job_id, format="label-studio")  # not JSON Lines: export_to_file

    def test_batch_export(self) -> None:
        client, _, _ = self.stack.customer()
        spec = {"question": f"batch export {uuid.uuid4().hex[:6]}", "options": ["a", "b"]}
        batch = client.tasks.batch([{"type": "image_classification", "data_url": f"https://x.example/{n}.jpg", "label_spec": spec} for n in range(3)])
        with self.assertRaises(labelgate.ConflictError) as early:
            client.batches.export(batch.batch_id)
        self.assertEqual(early.exception.error, "batch not completed")
        for task_id in batch.task_ids:
            client.tasks.cancel(task_id)
        lines = list(client.batches.export(batch.batch_id))
        self.assertEqual([line["task_id"] for line in lines], sorted(batch.task_ids))
        self.assertTrue(all(line["consensus_label"] is None and line["metadata"] is None for line in lines))
        self.assertEqual([r["label"] for r in client.batches.export(batch.batch_id, format="hf")], [None, None, None])
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "batch.conll")
            with self.assertRaises(labelgate.ValidationError):
                client.batches.export_to_file(batch.batch_id, path, format="conll")
            self.assertFalse(os.path.exists(path) or os.path.exists(path + ".part"))

    def test_export_of_10000_lines_streams_with_flat_memory(self) -> None:
        client, _, _ = self.stack.customer()
        job = self._ingested_job(client, "/big.jsonl")
        settled = self.stack.sql(
            """UPDATE tasks SET status = 'settled', consensus_label = options[1 + manifest_line % 2], confidence = 0.9375,
                      resolution = 'consensus', labels_collected = 1, claim_cap = 0,
                      ledger_txid = '0x' || md5(id) || md5(manifest_line::text), settled_at = now(), updated_at = now()
               WHERE job_id = $1""",
            [job.job_id],
        )
        self.assertEqual(settled, LINES)
        self.stack.sql("UPDATE jobs SET status = 'completed', completed_at = now() WHERE id = $1", [job.job_id])

        tracemalloc.start()  # before the call: a client that read the whole body first would show it
        try:
            count = payload = at_1000 = peak_to_1000 = 0
            for line in client.jobs.export(job.job_id):
                count += 1
                payload += len(json.dumps(line))
                self.assertEqual(line["source"]["line"], count)  # manifest order
                self.assertIn(line["consensus_label"], ("cat", "dog"))
                if count == 1000:
                    at_1000, peak_to_1000 = tracemalloc.get_traced_memory()
                    tracemalloc.reset_peak()
            current, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        figures = {"payload": payload, "at_1000": at_1000, "peak_to_1000": peak_to_1000, "peak_after": peak, "current": current}
        self.assertEqual(count, LINES)
        self.assertGreater(payload, 2_000_000)
        # never more than a small part of the export in memory (the whole of it is over 2 MB)...
        self.assertLess(max(peak_to_1000, peak), 512 * 1024, figures)
        # ...and flat: lines 1,001 to 10,000 raised the peak less than 128 KB above the memory at line 1,000
        self.assertLess(peak - at_1000, 128 * 1024, figures)

        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "export.jsonl")
            written = client.jobs.export_to_file(job.job_id, path)
            with open(path, "rb") as f:
                data = f.read()
            self.assertEqual((len(data), data.count(b"\n")), (written, LINES))
            self.assertFalse(os.path.exists(path + ".part"))


if __name__ == "__main__":
    unittest.main()
