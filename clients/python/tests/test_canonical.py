"""Canonical JSON (the ledger leaf's encoding) against packages/chain's canonicalJson on the same values."""

from __future__ import annotations

import json
import random
import struct
import unittest

from labelgate._canonical import canonical_json, js_number

from . import reference


def _random_floats(rng: random.Random, n: int) -> list[float]:
    out: list[float] = []
    for _ in range(n):
        kind = rng.random()
        if kind < 0.4:  # any finite double
            while True:
                (x,) = struct.unpack("<d", rng.getrandbits(64).to_bytes(8, "little"))
                if x == x and abs(x) != float("inf"):
                    break
        elif kind < 0.7:  # probabilities, as posteriors and confidences are
            x = rng.random()
        else:  # around the layout thresholds 1e-7 and 1e21
            x = rng.choice([1, -1]) * rng.random() * 10 ** rng.randint(-9, 23)
        out.append(x)
    return out


class CanonicalJsonTest(unittest.TestCase):
    def test_numbers_print_as_javascript(self) -> None:
        rng = random.Random(31)
        edge = [0.0, -0.0, 1e-7, 1e-6, 1.5e-7, 1e21, 1e20, 123.0, 0.1, 5e-324, 1.7976931348623157e308, 2.0**53, 2**60, -1.5]
        values: list[object] = edge + _random_floats(rng, 2000) + [rng.randint(-(2**70), 2**70) for _ in range(50)]
        # sent as JSON text: JavaScript parses the same doubles (Python's repr round-trips)
        ts = reference.run({"kind": "canonical", "values": json.loads(json.dumps(values))})
        for v, expected in zip(values, ts):
            self.assertEqual(js_number(v), expected, repr(v))  # type: ignore[arg-type]

    def test_objects_strings_and_key_order_match(self) -> None:
        values = [
            {"b": 1, "a": [0.5, "x\n\t\"\\\u0001\u001f\u007f\u2028"], "é": None, "z": {"y": True, "x": False}},
            {"\U0001f600": 1, "\uffff": 2, "\ue000": 3, "a": 4},  # UTF-16 order differs from code point order here
            {"lone": "\ud800x", "\udfff": 1},  # lone surrogates are escaped, never encoded raw
            {"task_id": "tsk_1", "confidence": 0.6666666666666666, "posterior": {"a": 0.3333333333333334, "b": 1e-7}},
            [],
            {},
            "",
        ]
        ts = reference.run({"kind": "canonical", "values": values})
        for v, expected in zip(values, ts):
            self.assertEqual(canonical_json(v), expected, repr(v))
            canonical_json(v).encode("utf-8")  # always encodable

    def test_refuses_what_json_cannot_hold(self) -> None:
        for bad in (float("nan"), float("inf"), {1: 2}, object()):
            with self.subTest(bad=bad), self.assertRaises(TypeError):
                canonical_json(bad)


if __name__ == "__main__":
    unittest.main()
