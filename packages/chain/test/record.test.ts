/**
 * The ledger record's leaf bytes: canonical JSON (@labelgate/canonical-json, tested there; chain re-exports
 * it) of exactly the record's fields, and the record rebuilt from a result giving the same bytes.
 */

import { canonicalJson as oneCanonicalJson } from "@labelgate/canonical-json";
import { canonicalJson, type LedgerRecord, leafBytes, ledgerRecordFromResult, ledgerRecordJson } from "@labelgate/chain";

describe("canonicalJson", () => {
  it("is the one function of @labelgate/canonical-json (chain re-exports it)", () => {
    expect(oneCanonicalJson).toBe(canonicalJson);
  });
});

const record: LedgerRecord = {
  task_id: "tsk_01",
  consensus_label: "cat",
  confidence: 0.9846,
  resolution: "consensus",
  label_counts: { dog: 1, cat: 3 },
  labels_collected: 4,
  posterior: { dog: 0.0154, cat: 0.9846 },
  settled_at: "2026-11-24T10:00:00.000Z",
  sequence: 7,
  prev_hash: "ab".repeat(32),
};

describe("ledger record", () => {
  it("is the canonical JSON of exactly its ten fields", () => {
    const json = ledgerRecordJson({ ...record, extra: "dropped" } as LedgerRecord);
    expect(json).toBe(
      '{"confidence":0.9846,"consensus_label":"cat","label_counts":{"cat":3,"dog":1},"labels_collected":4,' +
        `"posterior":{"cat":0.9846,"dog":0.0154},"prev_hash":"${"ab".repeat(32)}","resolution":"consensus","sequence":7,` +
        '"settled_at":"2026-11-24T10:00:00.000Z","task_id":"tsk_01"}',
    );
    expect(Buffer.from(leafBytes(record)).toString("utf8")).toBe(json);
  });

  it("is rebuilt from a result: top-level fields, sequence and prev_hash of the settlement", () => {
    const { sequence, prev_hash, ...top } = record;
    const result = { ...top, status: "settled", settlement: { ledger: "evm", sequence, prev_hash, leaf: "0x" } };
    expect(ledgerRecordFromResult(result)).toEqual(record);
    expect(Buffer.from(leafBytes(ledgerRecordFromResult(result) as LedgerRecord))).toEqual(Buffer.from(leafBytes(record)));
    const { posterior: _, ...withoutPosterior } = result;
    expect(ledgerRecordFromResult(withoutPosterior)).toBeUndefined();
    expect(ledgerRecordFromResult({ ...top })).toBeUndefined();
    expect(ledgerRecordFromResult(null)).toBeUndefined();
  });
});
