/** Hex helpers of the settlement formats (browser-safe). Hex strings are `0x`-prefixed lowercase. */
import { bytesToHex, hexToBytes } from "@noble/hashes/utils";

/** A `0x`-prefixed hex string. */
export type Hex = `0x${string}`;

/** `0x` + lowercase hex of `bytes`. */
export function toHex(bytes: Uint8Array): Hex {
  return `0x${bytesToHex(bytes)}`;
}

/**
 * Bytes of a `0x`-prefixed hex string (either case).
 * @throws TypeError when `hex` is not `0x` followed by an even number of hex digits.
 */
export function fromHex(hex: string): Uint8Array {
  if (!isHex(hex)) throw new TypeError("expected 0x-prefixed hex with an even number of digits");
  return hexToBytes(hex.slice(2));
}

/** Whether `value` is `0x` followed by an even number of hex digits (`bytes` digits pairs when given). */
export function isHex(value: unknown, bytes?: number): value is Hex {
  if (typeof value !== "string" || !/^0x(?:[0-9a-fA-F]{2})*$/.test(value)) return false;
  return bytes === undefined || value.length === 2 + 2 * bytes;
}

/** Constant-length byte equality. */
export function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= (a[i] as number) ^ (b[i] as number);
  return diff === 0;
}
