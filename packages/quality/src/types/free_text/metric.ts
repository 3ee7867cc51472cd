/**
 * Word edit distance (Levenshtein 1966 over words: substitutions, insertions, deletions each cost 1), the measure
 * of word error rate (WER = edits / reference words). Computed by `fastest-levenshtein` on strings in which each
 * distinct word of the pair is one character (a standard encoding: the character distance of the encoded strings
 * is the word distance).
 */
import { distance } from "fastest-levenshtein";

/** Word edit distance between two word sequences (>= 0, integer). */
export function wordDistance(a: readonly string[], b: readonly string[]): number {
  const codes = new Map<string, string>();
  const encode = (words: readonly string[]) => {
    let s = "";
    for (const w of words) {
      let c = codes.get(w);
      if (c === undefined) {
        // skip the surrogate range so each word is one UTF-16 unit
        const n = 0x100 + codes.size;
        c = String.fromCharCode(n >= 0xd800 ? n + 0x800 : n);
        codes.set(w, c);
      }
      s += c;
    }
    return s;
  };
  return distance(encode(a), encode(b));
}
