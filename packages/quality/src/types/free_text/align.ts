/**
 * Multiple alignment of word sequences into a word transition network, as in ROVER (Fiscus 1997, "A
 * post-processing system to yield reduced word error rates: Recognizer Output Voting Error Reduction (ROVER)",
 * IEEE ASRU): the first sequence is the network's skeleton, one slot per word; each further sequence is aligned to
 * the network built so far, and every slot records each sequence's word there, or null (an empty arc: that
 * sequence has no word in the slot). Words of a sequence that match no slot become new slots, in which every
 * earlier sequence has null.
 *
 * Aligning one sequence to the network: the `diff` library's Myers diff (Myers 1986, "An O(ND) difference
 * algorithm and its variations", Algorithmica 1) over the slots and the words, a word matching a slot when some
 * sequence already has that word in it (the longest common subsequence of slots and words). Between two matched
 * pairs, the slots and words left over (a gap) are paired by a minimal-cost monotone alignment: a word may
 * substitute a slot at cost = the normalized character edit distance to the slot's nearest word (in [0, 1],
 * `fastest-levenshtein`), or open a new slot (cost 1), and a slot may get null (cost 1). A substitution always
 * costs less than a deletion plus an insertion, so a misheard word lands in its slot, as in Levenshtein
 * alignment; the character distance decides which slot when the gap has more slots than words.
 */
import { type ArrayChange, diffArrays } from "diff";
import { distance } from "fastest-levenshtein";

/** One slot of the network: the word of each aligned sequence (index = sequence), null when it has none there. */
export interface Slot {
  words: (string | null)[];
}

/**
 * The diff's equality of a network slot and an answer's word: some sequence has that word in the slot. The
 * diff compares an old token (a slot) with a new one (a word); the check takes them in either order.
 */
function matches(a: Slot | string, b: Slot | string): boolean {
  if (typeof a === "string") return typeof b !== "string" && b.words.includes(a);
  return typeof b === "string" && a.words.includes(b);
}

/** Normalized character edit distance of two words, in [0, 1]. */
function wordCost(a: string, b: string): number {
  return distance(a, b) / Math.max(a.length, b.length, 1);
}

function slotCost(slot: Slot, word: string): number {
  let best = 1;
  for (const w of slot.words) if (w !== null) best = Math.min(best, wordCost(w, word));
  return best;
}

/**
 * Aligns the gap's slots and words (module doc): returns, for each word, the index of the gap slot it takes, or
 * -1 when it opens a new slot (placed after the slot of the previous word). Monotone; O(|slots| x |words|).
 */
function pairGap(slots: readonly Slot[], words: readonly string[]): number[] {
  const n = slots.length;
  const m = words.length;
  const cost: number[][] = Array.from({ length: n + 1 }, () => new Array<number>(m + 1).fill(0));
  for (let i = 1; i <= n; i++) (cost[i] as number[])[0] = i;
  for (let j = 1; j <= m; j++) (cost[0] as number[])[j] = j;
  for (let i = 1; i <= n; i++) {
    const row = cost[i] as number[];
    const up = cost[i - 1] as number[];
    for (let j = 1; j <= m; j++) {
      const sub = (up[j - 1] as number) + slotCost(slots[i - 1] as Slot, words[j - 1] as string);
      row[j] = Math.min(sub, (up[j] as number) + 1, (row[j - 1] as number) + 1);
    }
  }
  const out = new Array<number>(m).fill(-1);
  let i = n;
  let j = m;
  while (i > 0 && j > 0) {
    const here = (cost[i] as number[])[j] as number;
    const sub = ((cost[i - 1] as number[])[j - 1] as number) + slotCost(slots[i - 1] as Slot, words[j - 1] as string);
    if (Math.abs(here - sub) < 1e-12) {
      out[j - 1] = i - 1;
      i--;
      j--;
    } else if (Math.abs(here - (((cost[i - 1] as number[])[j] as number) + 1)) < 1e-12) i--;
    else j--;
  }
  return out;
}

/**
 * Adds one word sequence (index `index` = the number of sequences already aligned) to the network `slots`, in
 * place order: returns the new slot list.
 */
function addSequence(slots: Slot[], words: readonly string[], index: number): Slot[] {
  // slots and words compared as they are: no token objects, no set per slot (a slot holds one word per
  // sequence, a handful), so aligning a 330-word answer allocates little beyond the diff's own paths
  const changes: ArrayChange<Slot | string>[] = diffArrays<Slot | string>(slots, words as string[], { comparator: matches });
  const out: Slot[] = [];
  let gapSlots: Slot[] = [];
  let gapWords: string[] = [];
  const flush = () => {
    const pairing = pairGap(gapSlots, gapWords);
    let s = 0;
    for (let w = 0; w < gapWords.length; w++) {
      const target = pairing[w] as number;
      if (target >= 0) {
        while (s < target) out.push(gapSlots[s++] as Slot);
        (gapSlots[s] as Slot).words[index] = gapWords[w] as string;
        out.push(gapSlots[s++] as Slot);
      } else {
        const fresh: Slot = { words: new Array<string | null>(index + 1).fill(null) };
        fresh.words[index] = gapWords[w] as string;
        out.push(fresh);
      }
    }
    while (s < gapSlots.length) out.push(gapSlots[s++] as Slot);
    gapSlots = [];
    gapWords = [];
  };
  let oldPos = 0;
  let newPos = 0;
  for (const change of changes) {
    if (change.removed) {
      for (let c = 0; c < change.count; c++) gapSlots.push(slots[oldPos++] as Slot);
    } else if (change.added) {
      for (let c = 0; c < change.count; c++) gapWords.push(words[newPos++] as string);
    } else {
      flush();
      for (let c = 0; c < change.count; c++) {
        const slot = slots[oldPos++] as Slot;
        slot.words[index] = words[newPos++] as string;
        out.push(slot);
      }
    }
  }
  flush();
  for (const slot of out) while (slot.words.length <= index) slot.words.push(null);
  return out;
}

/**
 * The word transition network of `sequences` (each a list of normalized words), aligned in the given order (the
 * first is the skeleton). Every slot's `words` has one entry per sequence; a slot has at least one word. No
 * sequences, or only empty ones, give no slots.
 */
export function alignSequences(sequences: readonly (readonly string[])[]): Slot[] {
  let slots: Slot[] = [];
  sequences.forEach((words, index) => {
    slots = addSequence(slots, words, index);
  });
  return slots;
}
