/**
 * The body of a `task.settled` webhook delivery (SPEC §6), as the outbox stores it and the webhook worker
 * signs and sends it. The dependency-free verifier @labelgate/webhook-verify declares the same interface
 * (its file can be copied as is); packages/webhook-verify/test/verify.test.ts fails to compile when the two differ.
 */
export interface TaskSettledEvent {
  event: "task.settled";
  task_id: string;
  consensus_label: string;
  confidence: number;
  /**
   * Reserved task types only (`multi_label_classification`, `bounding_box`, `text_span`): the consensus answer, each
   * part with its confidence, as in the task's result. `consensus_label` is its canonical JSON without the confidences.
   */
  consensus?:
    | { labels: string[]; confidence: Record<string, number> }
    | { boxes: { label: string; x: number; y: number; w: number; h: number; confidence: number; support: number }[] }
    | { spans: { start: number; end: number; label: string; confidence: number }[] };
  /** on-chain transaction id of the settlement */
  ledger_txid: string;
  /** ISO 8601 UTC */
  settled_at: string;
  /** ISO 8601 UTC of this delivery attempt (differs between retries of one event) */
  timestamp: string;
}
