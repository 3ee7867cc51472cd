/**
 * A consensus in a few words, for the console's lists (the Tasks table): a task of a reserved type (contract
 * §task-types) shows a summary of its parts instead of its canonical JSON; a single-choice task its label as it is.
 * No DOM: unit-tested in packages/web/test.
 */
import { isReservedTaskType } from "@labelgate/sdk/browser";

/** The parts a summary reads: a consensus or the parsed canonical `consensus_label` (confidences ignored). */
interface Parts {
  labels?: unknown;
  boxes?: unknown;
  spans?: unknown;
}

/** What a summary needs of a task: its type, its canonical label and (when sent) its typed consensus. */
export interface SummaryInput {
  task_type: string;
  consensus_label: string | null;
  consensus?: object | null;
}

/** At most this many names (or name groups) are listed; the rest is "+N more". */
export const SUMMARY_NAMES_MAX = 5;

/** `names` joined with ", ", cut after {@link SUMMARY_NAMES_MAX} with "+N more". */
function listed(names: readonly string[]): string {
  const shown = names.slice(0, SUMMARY_NAMES_MAX).join(", ");
  return names.length > SUMMARY_NAMES_MAX ? `${shown} +${names.length - SUMMARY_NAMES_MAX} more` : shown;
}

/** `labels` grouped by name: "car ×2, person", most frequent first, ties by name (whatever the parts' order). */
function grouped(labels: readonly string[]): string {
  const counts = new Map<string, number>();
  for (const l of labels) counts.set(l, (counts.get(l) ?? 0) + 1);
  const names = [...counts.entries()]
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
    .map(([name, n]) => (n > 1 ? `${name} ×${n}` : name));
  return listed(names);
}

/** The `label` of each element of `parts` that has a string one. */
function labelsOf(parts: readonly unknown[]): string[] {
  const out: string[] = [];
  for (const p of parts) if (typeof p === "object" && p !== null && "label" in p && typeof p.label === "string") out.push(p.label);
  return out;
}

/** "1 box" / "3 boxes". */
function counted(n: number, one: string, many: string): string {
  return `${n} ${n === 1 ? one : many}`;
}

/** The summary of the parts of a consensus, or null when `parts` has none of the reserved shapes. */
export function summarizeParts(parts: Parts): string | null {
  if (Array.isArray(parts.labels)) {
    const labels = parts.labels.filter((l): l is string => typeof l === "string");
    return labels.length === 0 ? "no labels" : listed(labels);
  }
  if (Array.isArray(parts.boxes)) {
    const n = parts.boxes.length;
    return n === 0 ? "no boxes" : `${counted(n, "box", "boxes")}: ${grouped(labelsOf(parts.boxes))}`;
  }
  if (Array.isArray(parts.spans)) {
    const n = parts.spans.length;
    return n === 0 ? "no spans" : `${counted(n, "span", "spans")}: ${grouped(labelsOf(parts.spans))}`;
  }
  return null;
}

/** The canonical JSON of a reserved type's consensus as its parts, or null when it is not a JSON object. */
function parseCanonical(label: string): Parts | null {
  let value: unknown;
  try {
    value = JSON.parse(label);
  } catch {
    // not JSON: the caller shows the label as it is
    return null;
  }
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Parts) : null;
}

/**
 * The consensus of `task` for a list, or null when it has none yet: for a reserved type, a summary of its
 * parts ("red, round"; "3 boxes: car ×2, person"; "2 spans: DRUG, PERSON"; "no boxes"), read from
 * `consensus` when sent, else from the canonical `consensus_label`; for a single-choice task (or a label
 * of a reserved type that is not of its shape) the `consensus_label` unchanged.
 */
export function consensusSummary(task: SummaryInput): string | null {
  const label = task.consensus_label;
  if (label === null) return null;
  if (!isReservedTaskType(task.task_type)) return label;
  const fromConsensus = task.consensus ? summarizeParts(task.consensus as Parts) : null;
  if (fromConsensus !== null) return fromConsensus;
  const parts = parseCanonical(label);
  return (parts && summarizeParts(parts)) ?? label;
}

/** The confidences of a consensus's parts: their count, lowest and mean (null: no part with a confidence). */
export interface PartConfidences {
  parts: number;
  lowest: number;
  mean: number;
}

/**
 * The confidences of the parts of a typed consensus: each box's and span's `confidence`, or each option's
 * of a multi-label `confidence` map. Null when it has none (no parts, or a gold answer).
 */
export function partConfidences(consensus: object | null | undefined): PartConfidences | null {
  if (!consensus) return null;
  const c = consensus as { boxes?: unknown; spans?: unknown; confidence?: unknown };
  const list = Array.isArray(c.boxes) ? c.boxes : Array.isArray(c.spans) ? c.spans : null;
  const values: number[] = [];
  if (list) {
    for (const p of list)
      if (typeof p === "object" && p !== null && "confidence" in p && typeof p.confidence === "number") values.push(p.confidence);
  } else if (typeof c.confidence === "object" && c.confidence !== null) {
    for (const v of Object.values(c.confidence)) if (typeof v === "number") values.push(v);
  }
  if (values.length === 0) return null;
  return { parts: values.length, lowest: Math.min(...values), mean: values.reduce((a, b) => a + b, 0) / values.length };
}
