/**
 * Runs in a worker thread of the consensus worker (piscina, anchorer.ts): the Merkle tree of an anchor batch
 * (@labelgate/chain `anchorBatch`: canonical JSON and keccak-256 of every record, the tree, every proof), about
 * 0.1 s of CPU per 1,024 records that would otherwise block the event loop that runs settlements.
 */
import { anchorBatch } from "@labelgate/chain";

export default anchorBatch;
