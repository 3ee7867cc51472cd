/**
 * Canonical JSON (moved here from @labelgate/core, which re-exports it unchanged) and the ledger record's
 * leaf bytes: key order by UTF-16 code units, numbers as JSON.stringify prints them, exactly the record's
 * fields, and the record rebuilt from a result giving the same bytes.
 */

import { canonicalJson as oneCanonicalJson } from "@labelgate/canonical-json";
import { canonicalJson, type LedgerRecord, leafBytes, ledgerRecordFromResult, ledgerRecordJson } from "@labelgate/chain";

describe("canonicalJson", () => {
  it("sorts keys recursively, no whitespace, arrays in order", () => {
    expect(canonicalJson({ b: 1, a: [3, { d: null, c: true }], e: "x" })).toBe('{"a":[3,{"c":true,"d":null}],"b":1,"e":"x"}');
  });

  it("orders keys by UTF-16 code units (RFC 8785 §3.2.3), not by code points or locale", () => {
    // U+E000 (one unit 0xE000) sorts after U+1F600 (surrogates 0xD83D 0xDE00) in UTF-16 order
    const value = { "\uE000": 1, "😀": 2, a: 3, B: 4, "": 5 };
    expect(canonicalJson(value)).toBe('{"":5,"B":4,"a":3,"😀":2,"\uE000":1}');
  });

  it("prints numbers and strings as JSON.stringify does; drops undefined members; nulls undefined items", () => {
    expect(canonicalJson({ n: 0.1 + 0.2, i: 1e21, z: -0, s: 'q"\n\u2028', u: undefined, a: [undefined] })).toBe(
      `{"a":[null],"i":1e+21,"n":0.30000000000000004,"s":${JSON.stringify('q"\n\u2028')},"z":0}`,
    );
  });

  it("throws on values JSON cannot represent", () => {
    expect(() => canonicalJson({ x: Number.NaN })).toThrow(TypeError);
    expect(() => canonicalJson({ x: Number.POSITIVE_INFINITY })).toThrow(TypeError);
    expect(() => canonicalJson({ x: 1n })).toThrow(TypeError);
    expect(() => canonicalJson(() => 1)).toThrow(TypeError);
  });

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
