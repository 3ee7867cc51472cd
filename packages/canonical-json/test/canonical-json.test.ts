/**
 * Canonical JSON: key order by UTF-16 code units (RFC 8785 §3.2.3), numbers and strings as JSON.stringify
 * prints them, undefined members dropped, and a TypeError for what JSON cannot represent.
 */
import { canonicalJson } from "../src";

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
});
