"""labelgate.webhooks.construct_event: every reason, headers of every shape, and the same verdicts as the
TypeScript verifier (@labelgate/webhook-verify's constructEvent) on the same deliveries."""

from __future__ import annotations

import base64
import json
import time
import unittest

from labelgate import models, webhooks
from labelgate.errors import SignatureVerificationError
from labelgate.webhooks import TaskSettledEvent, construct_event, sign_payload, verify_signature

from . import reference

SECRET = "whsec_test_0123456789abcdef"
NOW = 1_800_000_000.0  # 2027-01-15T08:00:00Z


def _iso(t: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(int(t))) + f".{int(round((t % 1) * 1000)):03d}Z"


def body(**override: object) -> bytes:
    b: dict[str, object] = {
        "event": "task.settled",
        "task_id": "tsk_7Hq2Lx9VbN4sKd1Pz8WmYt",
        "consensus_label": "cat",
        "confidence": 0.9846,
        "ledger_txid": "0x" + "ab" * 32,
        "settled_at": "2027-01-15T07:59:58.120Z",
        "timestamp": _iso(NOW),
    }
    b.update(override)
    return json.dumps({k: v for k, v in b.items() if v is not ...}, separators=(",", ":")).encode()


class ConstructEventTest(unittest.TestCase):
    def test_returns_the_typed_event_with_its_headers(self) -> None:
        raw = body(consensus={"labels": ["cat"]})
        headers = {"X-SVC-Signature": sign_payload(raw, SECRET), "X-SVC-Event-Id": "evt_1", "X-SVC-Delivery-Attempt": "2"}
        event = construct_event(raw, headers, SECRET, now=NOW)
        self.assertIsInstance(event, TaskSettledEvent)
        self.assertEqual((event.task_id, event.consensus_label, event.confidence), ("tsk_7Hq2Lx9VbN4sKd1Pz8WmYt", "cat", 0.9846))
        self.assertEqual((event.event_id, event.delivery_attempt), ("evt_1", 2))
        self.assertEqual(event.extra, {"consensus": {"labels": ["cat"]}})  # a shape this client does not know: kept
        self.assertIsNone(event.consensus)
        self.assertEqual(event.to_dict(), json.loads(raw))

    def test_typed_consensus_of_a_reserved_type(self) -> None:
        consensus = {"boxes": [{"label": "car", "x": 101.5, "y": 51, "w": 198, "h": 99, "confidence": 0.91, "support": 2}]}
        raw = body(consensus_label='{"boxes":[{"label":"car","x":101.5,"y":51,"w":198,"h":99}]}', consensus=consensus, later=1)
        event = construct_event(raw, sign_payload(raw, SECRET), SECRET, now=NOW)
        assert isinstance(event.consensus, models.BoxConsensus)
        self.assertEqual([(b.label, b.x, b.support) for b in event.consensus], [("car", 101.5, 2)])
        self.assertEqual(event.extra, {"later": 1})
        self.assertEqual(event.to_dict(), json.loads(raw))

    def test_task_revised(self) -> None:
        previous = {"consensus_label": "cat", "confidence": 0.9846}
        raw = body(event="task.revised", revision=2, consensus_label="dog", confidence=1, previous=previous)
        event = construct_event(raw, sign_payload(raw, SECRET), SECRET, now=NOW)
        self.assertEqual((event.event, event.consensus_label), ("task.revised", "dog"))
        self.assertEqual(event.extra, {"revision": 2, "previous": previous})
        self.assertEqual(event.to_dict(), json.loads(raw))
        for bad in ({"revision": 1}, {"revision": True}, {"previous": None}, {"previous": {"consensus_label": "cat"}}):
            fields: dict[str, object] = {"event": "task.revised", "revision": 2, "previous": previous, **bad}
            raw = body(**fields)
            with self.assertRaises(SignatureVerificationError) as caught:
                construct_event(raw, sign_payload(raw, SECRET), SECRET, now=NOW)
            self.assertEqual(caught.exception.reason, "malformed_body")

    def test_headers_of_any_shape(self) -> None:
        import email.message

        raw = body()
        sig = sign_payload(raw, SECRET)
        msg = email.message.Message()  # what http.server's self.headers is
        msg["x-svc-signature"] = sig
        for headers in ({"x-svc-signature": sig}, {"X-Svc-Signature": sig}, msg, [("X-SVC-Signature", sig)], sig):
            with self.subTest(headers=type(headers).__name__):
                h = dict(headers) if isinstance(headers, list) else headers
                self.assertEqual(construct_event(raw, h, SECRET, now=NOW).task_id, "tsk_7Hq2Lx9VbN4sKd1Pz8WmYt")

    def test_every_reason(self) -> None:
        raw = body()
        good = sign_payload(raw, SECRET)
        cases = [
            ("missing_signature", raw, {}),
            ("missing_signature", raw, {"X-SVC-Signature": ""}),
            ("malformed_signature", raw, {"X-SVC-Signature": "sha1=" + "0" * 64}),
            ("malformed_signature", raw, {"X-SVC-Signature": good + "0"}),
            ("signature_mismatch", raw, {"X-SVC-Signature": sign_payload(raw, SECRET + "x")}),
            ("signature_mismatch", raw + b" ", {"X-SVC-Signature": good}),
            ("malformed_body", b"\xff\xfe", {"X-SVC-Signature": sign_payload(b"\xff\xfe", SECRET)}),
            ("malformed_body", b"[1]", {"X-SVC-Signature": sign_payload(b"[1]", SECRET)}),
            ("malformed_body", body(timestamp=...), None),
            ("malformed_body", body(timestamp="2027-02-30T00:00:00Z"), None),
            ("malformed_body", body(event="task.created"), None),
            ("malformed_body", body(confidence="0.9"), None),
            ("malformed_body", body(task_id=7), None),
            ("timestamp_outside_tolerance", body(timestamp=_iso(NOW - 301)), None),
            ("timestamp_outside_tolerance", body(timestamp=_iso(NOW + 301)), None),
        ]
        for reason, raw_body, headers in cases:
            with self.subTest(reason=reason, body=raw_body[:40]):
                h = headers if headers is not None else {"X-SVC-Signature": sign_payload(raw_body, SECRET)}
                with self.assertRaises(SignatureVerificationError) as ctx:
                    construct_event(raw_body, h, SECRET, now=NOW)
                self.assertEqual(ctx.exception.reason, reason)
                self.assertFalse(reason != "malformed_body" and verify_signature(raw_body, h, SECRET, now=NOW))

    def test_tolerance(self) -> None:
        raw = body(timestamp=_iso(NOW - 3600))
        h = {"X-SVC-Signature": sign_payload(raw, SECRET)}
        self.assertEqual(construct_event(raw, h, SECRET, tolerance_s=None, now=NOW).consensus_label, "cat")
        self.assertEqual(construct_event(raw, h, SECRET, tolerance_s=3600, now=NOW).consensus_label, "cat")
        with self.assertRaises(SignatureVerificationError):
            construct_event(raw, h, SECRET, tolerance_s=3599, now=NOW)
        self.assertEqual(webhooks.DEFAULT_TOLERANCE_S, 300)

    def test_misuse_raises_at_once(self) -> None:
        raw = body()
        h = {"X-SVC-Signature": sign_payload(raw, SECRET)}
        with self.assertRaises(TypeError):
            construct_event(raw, h, "", now=NOW)
        with self.assertRaises(ValueError):
            construct_event(raw, h, SECRET, tolerance_s=-1, now=NOW)

    def test_same_verdicts_as_the_typescript_verifier(self) -> None:
        samples: list[tuple[bytes, str | None, str, float | None, float]] = []
        raw = body()
        sig = sign_payload(raw, SECRET)
        samples += [
            (raw, sig, SECRET, 300, NOW),
            (raw, sig.upper().replace("SHA256=", "sha256="), SECRET, 300, NOW),  # hex digits of either case
            (raw, None, SECRET, 300, NOW),
            (raw, "sha256=zz" + sig[9:], SECRET, 300, NOW),
            (raw, sig, SECRET + "!", 300, NOW),
            (raw, sig, SECRET, 300, NOW + 300),  # exactly at the tolerance: accepted
            (raw, sig, SECRET, 300, NOW + 300.001),
            (raw, sig, SECRET, None, NOW + 10**7),
            ("\ufeff".encode() + raw, sign_payload("\ufeff".encode() + raw, SECRET), SECRET, 300, NOW),  # a BOM is dropped
        ]
        for variant in (
            body(timestamp="2027-01-15T10:00:00+02:00"),
            body(timestamp="2027-01-15T08:00:00.123456789Z"),
            body(timestamp="2027-01-15T08:00:00"),  # no zone: refused
            body(timestamp="2027-01-15T24:00:00Z"),
            body(timestamp="2028-02-29T08:00:00Z"),
            body(confidence=1),
            body(confidence=True),
            body(ledger_txid=None),
            b'{"event":"task.settled","confidence":NaN}',
            b"not json",
        ):
            samples.append((variant, sign_payload(variant, SECRET), SECRET, 300, NOW))
        ts = reference.run(
            {
                "kind": "webhooks",
                "cases": [
                    {"body": base64.b64encode(b).decode(), "header": h, "secret": s, "toleranceSeconds": tol, "nowMs": round(now * 1000)}
                    for b, h, s, tol, now in samples
                ],
            }
        )
        for (raw_body, header, secret, tol, now), expected in zip(samples, ts):
            with self.subTest(body=raw_body[:60], header=header and header[:12], now=now):
                try:
                    event = construct_event(raw_body, {"X-SVC-Signature": header} if header else {}, secret, tolerance_s=tol, now=now)
                    got = {"ok": True, "reason": None, "task_id": event.task_id}
                except SignatureVerificationError as err:
                    got = {"ok": False, "reason": err.reason, "task_id": None}
                want = {"ok": expected["ok"], "reason": expected["reason"], "task_id": (expected["event"] or {}).get("task_id")}
                self.assertEqual(got, want)


if __name__ == "__main__":
    unittest.main()
