/**
 * Normalization of `free_text` answers (contract §task-types, `normalize` of the label spec):
 *
 * - `words` (the default): Unicode NFKC, lower case (`toLowerCase`, locale-independent), every punctuation
 *   character (Unicode general category P: `.,;:!?'"-()[]{}…` and the like) replaced by a space, then runs of
 *   white space collapsed to one and the ends trimmed. Numbers are kept as written: "1845" and "eighteen forty
 *   five" are different words (the contract names no number rule, and spelling numbers out depends on the
 *   language). Symbols (category S: `$`, `+`, `=`) are kept; `%` is punctuation in Unicode (Po), so "3.5%" is "3 5". Replacing punctuation by a space (not deleting it)
 *   makes "air-tight" two words and "I'm" the words "i m"; it is the rule under which the crowd-text reference
 *   word error rates were computed (ROVER 6.05% on CrowdSpeech dev-clean is reproduced only this way).
 * - `none`: the text split on white space, nothing else changed.
 *
 * Answers are compared, aligned and voted on as these word sequences; two answers are equal when their words are.
 */

/** The normalizations a label spec may name. */
export type Normalization = "none" | "words";

/** The default normalization. */
export const DEFAULT_NORMALIZATION: Normalization = "words";

const PUNCTUATION = /\p{P}/gu;
const SPACE = /\s+/u;

/**
 * The words of `text` under `mode` (module doc). An empty or blank text has no words (an empty array).
 */
export function normalizeWords(text: string, mode: Normalization = DEFAULT_NORMALIZATION): string[] {
  const base = mode === "words" ? text.normalize("NFKC").toLowerCase().replace(PUNCTUATION, " ") : text;
  return base.split(SPACE).filter((w) => w !== "");
}

/** The normalized text: `normalizeWords` joined by single spaces ("" for no words). */
export function normalizeText(text: string, mode: Normalization = DEFAULT_NORMALIZATION): string {
  return normalizeWords(text, mode).join(" ");
}
