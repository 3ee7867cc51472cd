/**
 * Helpers of the webhook benchmarks (`bench/webhooks.ts`, `bench/soak.ts`): the local receiver, and seeding
 * of settled tasks and their `task.settled` events. General measurement helpers are in measure.ts.
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { newId } from "@labelgate/core";
import { labelSpaceId } from "@labelgate/store";
import type { Pool } from "pg";
import { nowMs } from "./measure";

export interface Receipt {
  eventId: string;
  /** wall-clock receipt time, ms */
  at: number;
  /** `settled_at` of the payload, ms */
  settledAt: number;
  attempt: number;
}

export interface Receiver {
  url: string;
  /** first receipt of each event id */
  receipts: Map<string, Receipt>;
  duplicates: number;
  badSignatures: number;
  close(): Promise<void>;
}

/**
 * A node:http receiver answering 200 at once. It checks every signature (HMAC-SHA256 of the raw body
 * with `secret`) and records the receipt time of each event.
 */
export async function startReceiver(secret: string): Promise<Receiver> {
  const receipts = new Map<string, Receipt>();
  const state = { duplicates: 0, badSignatures: 0 };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const at = nowMs();
      res.statusCode = 200;
      res.end();
      const raw = Buffer.concat(chunks);
      const expected = Buffer.from(`sha256=${createHmac("sha256", secret).update(raw).digest("hex")}`);
      const got = Buffer.from(String(req.headers["x-svc-signature"] ?? ""));
      if (got.length !== expected.length || !timingSafeEqual(got, expected)) state.badSignatures++;
      const eventId = String(req.headers["x-svc-event-id"] ?? "");
      if (receipts.has(eventId)) {
        state.duplicates++;
        return;
      }
      const body = JSON.parse(raw.toString("utf8")) as { settled_at: string };
      receipts.set(eventId, {
        eventId,
        at,
        settledAt: Date.parse(body.settled_at),
        attempt: Number(req.headers["x-svc-delivery-attempt"]),
      });
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks/bench`,
    receipts,
    get duplicates() {
      return state.duplicates;
    },
    get badSignatures() {
      return state.badSignatures;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * Inserts `count` settled tasks (with `callback_url`) and their `task.settled` events as settle.ts writes
 * them, but without their follow_up rows (the caller enqueues each routing job when it means the event to be
 * settled); the i-th is settled at `settledAt(i)`. Event ids come back in order.
 */
export async function seedSettled(
  pool: Pool,
  customerId: string,
  callbackUrl: string,
  count: number,
  settledAt: (i: number) => Date,
): Promise<string[]> {
  const eventIds: string[] = [];
  const chunk = 5000;
  // the label space of the seeded tasks (every task has one)
  const spaceId = labelSpaceId(customerId, "cat or dog?", ["cat", "dog"]);
  await pool.query(
    "INSERT INTO label_spaces (id, customer_id, question, options) VALUES ($1, $2, 'cat or dog?', ARRAY['cat','dog']) ON CONFLICT (id) DO NOTHING",
    [spaceId, customerId],
  );
  for (let start = 0; start < count; start += chunk) {
    const n = Math.min(chunk, count - start);
    const taskIds: string[] = [];
    const evIds: string[] = [];
    const settled: string[] = [];
    const payloads: string[] = [];
    for (let i = 0; i < n; i++) {
      const taskId = newId("task");
      const eventId = newId("event");
      const at = settledAt(start + i).toISOString();
      taskIds.push(taskId);
      evIds.push(eventId);
      settled.push(at);
      payloads.push(
        JSON.stringify({
          event: "task.settled",
          task_id: taskId,
          consensus_label: "cat",
          confidence: 0.9876,
          ledger_txid: `0x${"ab".repeat(32)}`,
          settled_at: at,
        }),
      );
    }
    await pool.query(
      `INSERT INTO tasks (id, customer_id, label_space_id, task_type, data_url, question, options, callback_url, consensus_threshold, max_labels,
         status, labels_collected, label_counts, claim_cap, quota_reserved, consensus_label, confidence, resolution,
         ledger_txid, settled_at)
       SELECT t.id, $1, $6, 'image_classification', 'https://data.example/x.jpg', 'cat or dog?', ARRAY['cat','dog'], $2, 3, 7,
         'settled', 3, '{"cat":3}', 0, 3, 'cat', 0.9876, 'consensus', $5, t.settled_at
       FROM unnest($3::text[], $4::timestamptz[]) AS t(id, settled_at)`,
      [customerId, callbackUrl, taskIds, settled, `0x${"ab".repeat(32)}`, spaceId],
    );
    // Without the events table's follow-up trigger (decision 0301): its follow_up row would be relayed at once by
    // the worker's relay, before the event's planned settlement time; the bench enqueues each routing job itself
    // at that time, as the relay does after a settlement's commit.
    const client = await pool.connect();
    try {
      await client.query("BEGIN");
      await client.query("SET LOCAL session_replication_role = replica");
      await client.query(
        `INSERT INTO events (id, type, task_id, customer_id, payload, created_at)
         SELECT e.id, 'task.settled', e.task_id, $1, e.payload::jsonb, e.settled_at
         FROM unnest($2::text[], $3::text[], $4::text[], $5::timestamptz[]) AS e(id, task_id, payload, settled_at)`,
        [customerId, evIds, taskIds, payloads, settled],
      );
      await client.query("COMMIT");
    } catch (err) {
      await client.query("ROLLBACK");
      throw err;
    } finally {
      client.release();
    }
    eventIds.push(...evIds);
  }
  return eventIds;
}
