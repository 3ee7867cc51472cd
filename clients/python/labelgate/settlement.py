"""Verifying a settled result with the chain alone (labelgate contract §settlement), standard library only.

The same checks, in the same order and with the same reasons, as the TypeScript SDK's
``verifySettlement`` (packages/sdk/src/verify-settlement.ts, packages/chain/src/settlement.ts):

1. the ledger record is rebuilt from the result's fields (``confidence, consensus_label, label_counts,
   labels_collected, posterior, resolution, settled_at, task_id`` from the result, ``sequence`` and
   ``prev_hash`` from its ``settlement``); its canonical JSON (UTF-8) must be exactly the ``leaf`` bytes;
2. the RFC 9162 §2.1.3.2 inclusion proof is folded from ``H(0x00 || leaf)`` at ``leaf_index`` of
   ``tree_size`` with ``H(0x01 || left || right)``, H = keccak-256, and must give ``merkle_root``;
3. over JSON-RPC (``eth_chainId``, ``eth_getTransactionReceipt``, ``eth_blockNumber``): the chain is
   ``chain_id``; the transaction ``ledger_txid`` is mined, succeeded and was sent to ``contract``; one of
   its ``Anchored(bytes32 indexed root, uint64 firstSequence, uint64 lastSequence)`` events of
   ``contract`` carries ``merkle_root`` and a sequence range that holds the record; it is in block
   ``block_number``; it has at least ``confirmations`` confirmations.

Reference: RFC 9162 §2.1 (https://www.rfc-editor.org/rfc/rfc9162#section-2.1); Ethereum JSON-RPC
(https://ethereum.org/en/developers/docs/apis/json-rpc/); Solidity ABI event encoding.
"""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, cast

from ._canonical import canonical_json
from ._keccak import keccak256

__all__ = [
    "ANCHORED_TOPIC",
    "LEDGER_RECORD_FIELDS",
    "SettlementVerification",
    "leaf_bytes",
    "leaf_hash",
    "node_hash",
    "root_from_inclusion_proof",
    "verify_settlement",
    "verify_settlement_local",
]

#: Fields of the ledger record, whose canonical JSON is the Merkle leaf (packages/chain/src/record.ts).
LEDGER_RECORD_FIELDS = (
    "confidence",
    "consensus_label",
    "label_counts",
    "labels_collected",
    "posterior",
    "prev_hash",
    "resolution",
    "sequence",
    "settled_at",
    "task_id",
)

#: topic 0 of an ``Anchored`` log: keccak-256 of ``Anchored(bytes32,uint64,uint64)``, ``0x`` + 64 hex.
ANCHORED_TOPIC = "0x" + keccak256(b"Anchored(bytes32,uint64,uint64)").hex()

_HEX = re.compile(r"0x(?:[0-9a-fA-F]{2})*")
_PREV_HASH = re.compile(r"[0-9a-f]{64}")
_MAX_SAFE = 2**53 - 1


@dataclass
class SettlementVerification:
    """The verdict of :func:`verify_settlement` (true in a boolean context exactly when ``ok``).

    On success every chain figure is filled (as read from the chain); on failure ``reason`` is one of the
    stable strings ``malformed_result``, ``not_anchored``, ``leaf_mismatch``, ``proof_invalid``,
    ``rpc_error``, ``wrong_chain``, ``tx_not_found``, ``tx_reverted``, ``wrong_contract``,
    ``no_anchored_event``, ``root_mismatch``, ``sequence_out_of_range``, ``block_mismatch``,
    ``insufficient_confirmations`` and ``message`` a sentence for people.
    """

    ok: bool
    reason: str | None = None
    message: str = ""
    ledger_txid: str | None = None
    chain_id: int | None = None
    block_number: int | None = None
    contract: str | None = None
    merkle_root: str | None = None
    #: ``H(0x00 || leaf)``, ``0x`` + 64 hex
    leaf_hash: str | None = None
    leaf_index: int | None = None
    tree_size: int | None = None
    sequence: int | None = None
    #: the anchored batch's range, from the ``Anchored`` event
    first_sequence: int | None = None
    last_sequence: int | None = None
    #: confirmations of the anchor (latest block - its block + 1); also set on ``insufficient_confirmations``
    confirmations: int | None = None
    #: the confirmations asked for (``insufficient_confirmations`` only)
    required: int | None = None

    def __bool__(self) -> bool:
        return self.ok


def _fail(reason: str, message: str, **extra: Any) -> SettlementVerification:
    return SettlementVerification(ok=False, reason=reason, message=message, **extra)


# --- hashing --------------------------------------------------------------------------------------


def leaf_hash(leaf: bytes) -> bytes:
    """``keccak256(0x00 || leaf)``: the RFC 9162 hash of a leaf's data (32 bytes)."""
    return keccak256(b"\x00", leaf)


def node_hash(left: bytes, right: bytes) -> bytes:
    """``keccak256(0x01 || left || right)``: the RFC 9162 hash of an inner node (32 bytes)."""
    return keccak256(b"\x01", left, right)


def root_from_inclusion_proof(hash_: bytes, index: int, tree_size: int, proof: list[bytes]) -> bytes | None:
    """The root that ``proof`` gives for leaf hash ``hash_`` at ``index`` of a tree of ``tree_size`` leaves
    (RFC 9162 §2.1.3.2), or None when the proof does not fit the index and size. ``proof`` lists the
    sibling hashes (32 bytes each) from the leaf's level up.
    """
    if not (0 <= index < tree_size <= _MAX_SAFE):
        return None
    fn, sn, r = index, tree_size - 1, hash_
    for p in proof:
        if len(p) != 32 or sn == 0:
            return None
        if fn % 2 == 1 or fn == sn:
            r = node_hash(p, r)
            if fn % 2 == 0:
                while fn % 2 == 0 and fn != 0:
                    fn //= 2
                    sn //= 2
        else:
            r = node_hash(r, p)
        fn //= 2
        sn //= 2
    return r if sn == 0 else None


# --- the result's shape ---------------------------------------------------------------------------


def _is_count(v: Any, minimum: int = 0) -> bool:
    """JavaScript's ``Number.isSafeInteger(v) && v >= minimum`` for a JSON value."""
    if isinstance(v, bool):
        return False
    if isinstance(v, float):
        if not v.is_integer():
            return False
        v = int(v)
    return isinstance(v, int) and minimum <= v <= _MAX_SAFE


def _is_hex(v: Any, nbytes: int | None = None) -> bool:
    if not isinstance(v, str) or not _HEX.fullmatch(v):
        return False
    return nbytes is None or len(v) == 2 + 2 * nbytes


def _is_evm_settlement(s: Mapping[str, Any]) -> bool:
    proof = s.get("proof")
    prev = s.get("prev_hash")
    return (
        s.get("ledger") == "evm"
        and _is_hex(s.get("ledger_txid"), 32)
        and _is_count(s.get("chain_id"), 1)
        and _is_count(s.get("block_number"))
        and _is_hex(s.get("contract"), 20)
        and _is_hex(s.get("merkle_root"), 32)
        and _is_hex(s.get("leaf"))
        and _is_count(s.get("leaf_index"))
        and _is_count(s.get("tree_size"), 1)
        and isinstance(proof, list)
        and all(_is_hex(p, 32) for p in cast("list[Any]", proof))
        and _is_count(s.get("sequence"))
        and isinstance(prev, str)
        and _PREV_HASH.fullmatch(prev) is not None
    )


def _as_mapping(result: Any) -> Mapping[str, Any] | None:
    """The result as the API's JSON object: a mapping as is, a labelgate model through ``to_dict()``."""
    if isinstance(result, Mapping):
        return cast("Mapping[str, Any]", result)
    to_dict = getattr(result, "to_dict", None)
    if callable(to_dict):
        d: Any = to_dict()
        return cast("Mapping[str, Any]", d) if isinstance(d, Mapping) else None
    return None


def leaf_bytes(result: Any) -> bytes | None:
    """The ledger record's canonical bytes rebuilt from a settled result (a mapping or a
    :class:`labelgate.TaskResult`), or None when a field of the record is missing.
    Raises TypeError when a field holds a value canonical JSON cannot encode (e.g. NaN).
    """
    r = _as_mapping(result)
    if r is None:
        return None
    found: Any = r.get("settlement")
    if not isinstance(found, Mapping):
        return None
    s = cast("Mapping[str, Any]", found)
    source = dict(r)
    source["sequence"] = s.get("sequence", _MISSING)
    source["prev_hash"] = s.get("prev_hash", _MISSING)
    record: dict[str, Any] = {}
    for f in LEDGER_RECORD_FIELDS:
        v = source.get(f, _MISSING)
        if v is _MISSING:
            return None
        record[f] = v
    return canonical_json(record).encode("utf-8")


_MISSING: Any = object()


def verify_settlement_local(result: Any) -> SettlementVerification:
    """The chain-free half of :func:`verify_settlement` (no network): the leaf is the result's record and the
    proof folds to ``merkle_root``. ``ok`` means these hold (``leaf_hash`` and the settlement's figures are
    filled); failure reasons: ``malformed_result``, ``not_anchored``, ``leaf_mismatch``, ``proof_invalid``.
    Never raises.
    """
    r = _as_mapping(result)
    if r is None:
        return _fail("malformed_result", "the result is not an object")
    found: Any = r.get("settlement")
    if not isinstance(found, Mapping):
        return _fail("malformed_result", "the result has no settlement object")
    s = cast("Mapping[str, Any]", found)
    if s.get("ledger") == "local":
        return _fail("not_anchored", 'ledger "local": the settlement is in the local ledger table only, nothing is anchored')
    if not _is_evm_settlement(s):
        return _fail("malformed_result", "the settlement object is not a well-formed evm settlement")
    try:
        data = leaf_bytes(r)
    except (TypeError, ValueError) as err:
        return _fail("malformed_result", f"the result's fields cannot be encoded: {err}")
    if data is None:
        return _fail("malformed_result", "the result lacks a field of the ledger record")
    if data != bytes.fromhex(s["leaf"][2:]):
        return _fail("leaf_mismatch", "the result's fields do not give the settlement's leaf bytes")
    h = leaf_hash(data)
    proof = [bytes.fromhex(p[2:]) for p in s["proof"]]
    root = root_from_inclusion_proof(h, int(s["leaf_index"]), int(s["tree_size"]), proof)
    if root is None or root != bytes.fromhex(s["merkle_root"][2:]):
        return _fail("proof_invalid", "the inclusion proof does not fold to merkle_root")
    return SettlementVerification(
        ok=True,
        ledger_txid=s["ledger_txid"],
        chain_id=int(s["chain_id"]),
        block_number=int(s["block_number"]),
        contract=s["contract"],
        merkle_root=s["merkle_root"],
        leaf_hash="0x" + h.hex(),
        leaf_index=int(s["leaf_index"]),
        tree_size=int(s["tree_size"]),
        sequence=int(s["sequence"]),
    )


# --- JSON-RPC ---------------------------------------------------------------------------------------


class _RpcError(Exception):
    pass


class _Rpc:
    """A minimal Ethereum JSON-RPC 2.0 client over HTTP POST (urllib)."""

    def __init__(self, url: str, timeout_s: float) -> None:
        self.url = url
        self.timeout_s = timeout_s
        self.next_id = 0

    def call(self, method: str, params: list[Any]) -> Any:
        """The ``result`` of one call. Raises _RpcError on no answer, a non-2xx, an RPC error or nonsense."""
        self.next_id += 1
        body = json.dumps({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}).encode()
        req = urllib.request.Request(self.url, data=body, method="POST", headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=self.timeout_s) as res:  # noqa: S310 (the caller's RPC URL)
                raw = res.read()
        except urllib.error.HTTPError as err:
            raise _RpcError(f"HTTP {err.code}") from err
        except (urllib.error.URLError, OSError, ValueError) as err:
            raise _RpcError(str(getattr(err, "reason", err))) from err
        try:
            answer = json.loads(raw)
        except ValueError as err:
            raise _RpcError("the answer is not JSON") from err
        if not isinstance(answer, dict):
            raise _RpcError("the answer is not a JSON-RPC response")
        response = cast("dict[str, Any]", answer)
        e: Any = response.get("error")
        if e is not None:
            msg: Any = cast("dict[str, Any]", e).get("message") if isinstance(e, dict) else e
            raise _RpcError(f"RPC error: {msg}")
        if "result" not in response:
            raise _RpcError("the answer has no result")
        return response["result"]


def _quantity(v: Any, what: str) -> int:
    if not isinstance(v, str) or not re.fullmatch(r"0x[0-9a-fA-F]+", v):
        raise _RpcError(f"{what} is not a hex quantity")
    return int(v, 16)


def _anchored_events(logs: Any, contract: str) -> list[tuple[str, int, int]]:
    """``(root, first_sequence, last_sequence)`` of each well-formed ``Anchored`` log of ``contract``
    (address compared case-insensitively); other and malformed logs are skipped, as viem's strict
    ``parseEventLogs`` does."""
    events: list[tuple[str, int, int]] = []
    if not isinstance(logs, list):
        return events
    for log in cast("list[Any]", logs):
        if not isinstance(log, dict):
            continue
        entry = cast("dict[str, Any]", log)
        topics: Any = entry.get("topics")
        address: Any = entry.get("address")
        data: Any = entry.get("data")
        if not isinstance(topics, list) or not topics or topics[0] != ANCHORED_TOPIC:
            continue
        if not isinstance(address, str) or address.lower() != contract.lower():
            continue
        topic_list = cast("list[Any]", topics)
        root_topic: Any = topic_list[1] if len(topic_list) > 1 else None
        if not isinstance(root_topic, str) or not _is_hex(root_topic) or len(root_topic) < 66:
            continue
        if not isinstance(data, str) or not _is_hex(data) or len(data) < 2 + 128:
            continue
        root = root_topic[:66].lower()
        first = int(data[2:66], 16)
        last = int(data[66:130], 16)
        events.append((root, first, last))
    return events


def verify_settlement(result: Any, rpc_url: str, *, confirmations: int = 1, timeout_s: float = 10.0) -> SettlementVerification:
    """Verifies a settled result (``client.tasks.result(...)``, a :class:`labelgate.TaskResult` or the
    200 body as a dict) against the chain at ``rpc_url`` (an Ethereum JSON-RPC http(s) endpoint).

    ``confirmations``: blocks required on top of (and including) the anchor's block, default 1;
    ``timeout_s``: per RPC call, seconds. Never raises: the verdict is a :class:`SettlementVerification`,
    ``ok`` or a ``reason`` (checked in this order: ``malformed_result``, ``not_anchored``,
    ``leaf_mismatch``, ``proof_invalid`` with no network, then ``rpc_error`` for any RPC failure,
    ``wrong_chain``, ``tx_not_found``, ``tx_reverted``, ``wrong_contract``, ``no_anchored_event``,
    ``root_mismatch``, ``sequence_out_of_range``, ``block_mismatch``, ``insufficient_confirmations``).
    The same verdicts as the TypeScript SDK's ``verifySettlement``.
    """
    if not _is_count(confirmations):
        return _fail("malformed_result", "confirmations must be a whole number >= 0")
    required = int(confirmations)
    local = verify_settlement_local(result)
    if not local.ok:
        return local
    r = _as_mapping(result)
    assert r is not None
    s = r["settlement"]
    rpc = _Rpc(rpc_url, timeout_s)

    try:
        chain_id = _quantity(rpc.call("eth_chainId", []), "eth_chainId")
    except _RpcError as err:
        return _fail("rpc_error", f"eth_chainId failed: {err}")
    if chain_id != local.chain_id:
        return _fail("wrong_chain", f"the RPC endpoint serves chain {chain_id}, the settlement names chain {local.chain_id}")

    txid = s["ledger_txid"]
    try:
        answer: Any = rpc.call("eth_getTransactionReceipt", [txid])
    except _RpcError as err:
        return _fail("rpc_error", f"eth_getTransactionReceipt failed: {err}")
    if answer is None:
        return _fail("tx_not_found", f"no mined transaction {txid} on chain {chain_id}")
    if not isinstance(answer, dict):
        return _fail("rpc_error", "eth_getTransactionReceipt failed: the receipt is not an object")
    receipt: dict[str, Any] = answer
    try:
        block = _quantity(receipt.get("blockNumber"), "the receipt's blockNumber")
    except _RpcError as err:
        return _fail("rpc_error", f"eth_getTransactionReceipt failed: {err}")
    if receipt.get("status") != "0x1":
        return _fail("tx_reverted", f"transaction {txid} reverted")
    contract: str = s["contract"]
    to = receipt.get("to")
    if not isinstance(to, str) or to.lower() != contract.lower():
        return _fail("wrong_contract", f"transaction {txid} was sent to {to or 'no address (a deployment)'}, not {contract}")
    events = _anchored_events(receipt.get("logs"), contract)
    if not events:
        return _fail("no_anchored_event", f"transaction {txid} emitted no Anchored event of {contract}")
    root = s["merkle_root"].lower()
    same_root = [e for e in events if e[0] == root]
    if not same_root:
        return _fail("root_mismatch", f"transaction {txid} anchored {', '.join(e[0] for e in events)}, not {s['merkle_root']}")
    seq, index, size = int(s["sequence"]), int(s["leaf_index"]), int(s["tree_size"])
    event = next(
        (e for e in same_root if e[1] <= seq <= e[2] and index <= seq - e[1] and size <= e[2] - e[1] + 1),
        None,
    )
    if event is None:
        ranges = ", ".join(f"{e[1]}..{e[2]}" for e in same_root)
        return _fail(
            "sequence_out_of_range",
            f"sequence {seq} (leaf {index} of {size}) does not fit the anchored range {ranges}",
        )
    if block != int(s["block_number"]):
        return _fail("block_mismatch", f"transaction {txid} is in block {block}, the settlement says {int(s['block_number'])}")
    try:
        latest = _quantity(rpc.call("eth_blockNumber", []), "eth_blockNumber")
    except _RpcError as err:
        return _fail("rpc_error", f"eth_blockNumber failed: {err}")
    got = latest - block + 1
    if got < required:
        return _fail("insufficient_confirmations", f"{got} confirmations, {required} required", confirmations=got, required=required)
    return SettlementVerification(
        ok=True,
        ledger_txid=txid,
        chain_id=chain_id,
        block_number=block,
        contract=contract,
        merkle_root=s["merkle_root"],
        leaf_hash=local.leaf_hash,
        leaf_index=index,
        tree_size=size,
        sequence=seq,
        first_sequence=event[1],
        last_sequence=event[2],
        confirmations=got,
    )
