"""verify_settlement on results settled by a real gateway on its local anvil chain: true for each, and
each tampering fails with its reason, exactly as the TypeScript SDK's verifySettlement judges the same
results (tests/ts_reference.ts runs it on the same inputs)."""

from __future__ import annotations

import copy
import json
import socket
import threading
import unittest
import urllib.request
import uuid
from typing import Any

import labelgate
from labelgate._keccak import keccak256
from labelgate.settlement import verify_settlement, verify_settlement_local

from . import reference, stack


def rpc(url: str, method: str, params: list[Any]) -> Any:
    req = urllib.request.Request(url, json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).encode(),
                                 {"Content-Type": "application/json"})  # fmt: skip
    with urllib.request.urlopen(req, timeout=10) as res:
        answer = json.loads(res.read())
    if "error" in answer:
        raise RuntimeError(answer["error"])
    return answer["result"]


def flip_hex(h: str, at: int = 1) -> str:
    i = 2 + 2 * at
    return h[:i] + format(int(h[i : i + 2], 16) ^ 1, "02x") + h[i + 2 :]


class SettlementVerificationTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.stack = stack.get()
        client, _, _ = cls.stack.customer()
        lab = cls.stack.labeler("py-verify")
        spec = {"question": f"verify {uuid.uuid4().hex[:6]}", "options": ["cat", "dog", "bird"]}

        def settle(task_ids: list[str]) -> list[labelgate.TaskResult]:
            def one(t: str) -> None:
                claim = lab.claim(task_id=t)
                assert claim is not None
                lab.label(claim.claim_id, "dog")

            threads = [threading.Thread(target=one, args=(t,)) for t in task_ids]
            for th in threads:
                th.start()
            for th in threads:
                th.join()
            return [client.tasks.wait(t, timeout_s=90, interval_s=0.25) for t in task_ids]

        task = {"type": "image_classification", "data_url": "https://images.example/v.jpg", "label_spec": spec, "consensus_threshold": 1}
        (cls.single,) = settle([client.tasks.create(**task).task_id])
        # a later anchor, whose tree holds several leaves (labels recorded together close one batch)
        cls.batch = settle(client.tasks.batch([task] * 4).task_ids)
        cls.multi = max(cls.batch, key=lambda r: r.settlement.tree_size or 0)
        cls.client = client

    def _dict(self, r: labelgate.TaskResult) -> dict[str, Any]:
        return copy.deepcopy(r.to_dict())

    def _dev_tx(self, data: str) -> str:
        """A transaction from anvil's first development account to the anchor contract (mined at once)."""
        sender = rpc(self.stack.rpc_url, "eth_accounts", [])[0]
        contract = self.single.settlement.contract
        return str(rpc(self.stack.rpc_url, "eth_sendTransaction", [{"from": sender, "to": contract, "data": data, "gas": "0x30000"}]))

    def test_settled_results_verify(self) -> None:
        for r in [self.single, *self.batch]:
            v = verify_settlement(r, self.stack.rpc_url)
            self.assertTrue(v.ok, v.message)
            self.assertEqual((v.ledger_txid, v.chain_id, v.contract), (r.settlement.ledger_txid, 31337, r.settlement.contract))
            assert v.first_sequence is not None and v.last_sequence is not None and v.sequence is not None
            self.assertTrue(v.first_sequence <= v.sequence <= v.last_sequence)
            self.assertGreaterEqual(v.confirmations or 0, 1)
            self.assertTrue(verify_settlement(r.to_dict(), self.stack.rpc_url).ok)  # the plain JSON too
        self.assertGreaterEqual(self.multi.settlement.tree_size or 0, 2, "the batch's labels did not share an anchor")
        self.assertTrue(self.multi.settlement.proof)
        self.assertNotEqual(self.single.settlement.ledger_txid, self.multi.settlement.ledger_txid)

    def test_tampered_results_fail_with_the_typescript_sdks_reasons(self) -> None:
        single, multi = self._dict(self.single), self._dict(self.multi)
        cases: list[tuple[str, dict[str, Any] | None, int]] = [("ok", single, 1), ("ok", multi, 1)]

        def tampered(expected: str, base: dict[str, Any], change: Any, confirmations: int = 1) -> None:
            r = copy.deepcopy(base)
            change(r)
            cases.append((expected, r, confirmations))

        s = "settlement"
        tampered("leaf_mismatch", single, lambda r: r.update(consensus_label="cat"))
        tampered("leaf_mismatch", single, lambda r: r.update(confidence=r["confidence"] + 0.0001))
        tampered("leaf_mismatch", multi, lambda r: r["posterior"].update(cat=r["posterior"]["cat"] + 1e-9))
        tampered("leaf_mismatch", multi, lambda r: r.update(settled_at="2020-01-01T00:00:00.000Z"))
        tampered("leaf_mismatch", multi, lambda r: r[s].update(prev_hash="f" * 64))
        tampered("leaf_mismatch", multi, lambda r: r[s].update(sequence=r[s]["sequence"] + 1))
        tampered("leaf_mismatch", multi, lambda r: r.update(labels_collected=2))
        tampered("proof_invalid", multi, lambda r: r[s]["proof"].__setitem__(0, flip_hex(r[s]["proof"][0])))
        tampered("proof_invalid", multi, lambda r: r[s].update(merkle_root=flip_hex(r[s]["merkle_root"], 31)))
        tampered("proof_invalid", multi, lambda r: r[s].update(leaf_index=r[s]["leaf_index"] ^ 1))
        tampered("proof_invalid", multi, lambda r: r[s].update(tree_size=r[s]["tree_size"] + 7))
        tampered("proof_invalid", multi, lambda r: r[s].update(proof=r[s]["proof"][:-1]))
        tampered("malformed_result", multi, lambda r: r[s].pop("proof"))
        tampered("malformed_result", multi, lambda r: r.pop("posterior"))
        tampered("malformed_result", single, lambda r: r[s].update(ledger_txid="0x1234"))
        tampered("malformed_result", single, lambda r: r[s].update(chain_id=0))
        tampered("malformed_result", single, lambda r: r[s].update(prev_hash=r[s]["prev_hash"].upper() + "\n"))
        tampered("malformed_result", single, lambda r: r[s].update(leaf_index=0.5))
        tampered("malformed_result", single, lambda r: r.pop(s))
        cases.append(("malformed_result", None, 1))
        tampered("malformed_result", single, lambda r: None, confirmations=-1)
        tampered("not_anchored", single, lambda r: r.update({s: {"ledger": "local", "ledger_txid": "0x" + "ab" * 32, "sequence": 1,
                                                                 "prev_hash": "0" * 64, "recorded_at": r["settled_at"]}}))  # fmt: skip
        tampered("wrong_chain", single, lambda r: r[s].update(chain_id=1))
        tampered("tx_not_found", single, lambda r: r[s].update(ledger_txid="0x" + "11" * 32))
        tampered("wrong_contract", single, lambda r: r[s].update(contract="0x" + "00" * 20))
        tampered("root_mismatch", single, lambda r: r[s].update(ledger_txid=multi[s]["ledger_txid"]))
        tampered("block_mismatch", single, lambda r: r[s].update(block_number=r[s]["block_number"] + 1))
        tampered("insufficient_confirmations", single, lambda r: None, confirmations=10**6)
        # a reverted call of the contract (anchor() from an account that is not its owner), and a call that
        # succeeds without emitting Anchored (owner())
        anchor_call = "0x" + keccak256(b"anchor(bytes32,uint64,uint64)")[:4].hex() + "11" * 32 + f"{1:064x}" + f"{1:064x}"
        reverted = self._dev_tx(anchor_call)
        no_event = self._dev_tx("0x" + keccak256(b"owner()")[:4].hex())
        tampered("tx_reverted", single, lambda r: r[s].update(ledger_txid=reverted))
        tampered("no_anchored_event", single, lambda r: r[s].update(ledger_txid=no_event))

        ts = reference.run({"kind": "verdicts", "rpcUrl": self.stack.rpc_url, "cases": [{"result": r, "confirmations": c} for _, r, c in cases]})
        for (expected, r, confirmations), want in zip(cases, ts):
            with self.subTest(expected=expected):
                v = verify_settlement(r, self.stack.rpc_url, confirmations=confirmations)
                self.assertEqual((v.ok, v.reason), (expected == "ok", None if expected == "ok" else expected), v.message)
                self.assertEqual({"ok": v.ok, "reason": v.reason}, want)  # the TypeScript SDK's verdict
                self.assertEqual(bool(v), v.ok)

    def test_rpc_failure(self) -> None:
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            dead = f"http://127.0.0.1:{sock.getsockname()[1]}"
            v = verify_settlement(self.single, dead, timeout_s=2)
            (want,) = reference.run({"kind": "verdicts", "rpcUrl": dead, "cases": [{"result": self.single.to_dict()}]})
        self.assertEqual((v.ok, v.reason), (False, "rpc_error"))
        self.assertEqual({"ok": v.ok, "reason": v.reason}, want)
        # the chain-free half needs no RPC at all
        self.assertTrue(verify_settlement_local(self.single).ok)

    def test_the_dataclass_changed_in_place_fails_too(self) -> None:
        r = labelgate.TaskResult.from_dict(self._dict(self.single))
        r.consensus_label = "bird"
        self.assertEqual(verify_settlement(r, self.stack.rpc_url).reason, "leaf_mismatch")


if __name__ == "__main__":
    unittest.main()
