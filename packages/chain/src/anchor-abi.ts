/**
 * ABI of the anchor contract (`packages/chain/contracts/Anchor.sol`), as a typed constant for viem (browser-safe). The
 * artifact test checks it equals the ABI of the committed `contracts/Anchor.json` of this package.
 */
export const ANCHOR_ABI = [
  { inputs: [], stateMutability: "nonpayable", type: "constructor" },
  { inputs: [], name: "InvalidRange", type: "error" },
  { inputs: [], name: "NotOwner", type: "error" },
  {
    anonymous: false,
    inputs: [
      { indexed: true, internalType: "bytes32", name: "root", type: "bytes32" },
      { indexed: false, internalType: "uint64", name: "firstSequence", type: "uint64" },
      { indexed: false, internalType: "uint64", name: "lastSequence", type: "uint64" },
    ],
    name: "Anchored",
    type: "event",
  },
  {
    inputs: [
      { internalType: "bytes32", name: "root", type: "bytes32" },
      { internalType: "uint64", name: "firstSequence", type: "uint64" },
      { internalType: "uint64", name: "lastSequence", type: "uint64" },
    ],
    name: "anchor",
    outputs: [],
    stateMutability: "nonpayable",
    type: "function",
  },
  {
    inputs: [],
    name: "owner",
    outputs: [{ internalType: "address", name: "", type: "address" }],
    stateMutability: "view",
    type: "function",
  },
] as const;

/** The `Anchored` event's signature; topic 0 of its logs is keccak-256 of it. */
export const ANCHORED_EVENT_SIGNATURE = "Anchored(bytes32,uint64,uint64)";
