/**
 * Routing of `task.settled` events (DESIGN §7): a task with a callback_url goes to the customer's active
 * webhook of that URL; a task without one goes to every active webhook of the customer subscribed to
 * `task.settled`. One `deliveries` row per (event, webhook), unique, so routing twice creates nothing new;
 * every pending delivery is attempted at once (or (re-)enqueued under its deterministic job id).
 *
 * One statement, shared by the events this process routes at once (see batch.ts), finds the targets,
 * inserts the deliveries (`ON CONFLICT DO NOTHING`), marks the tasks `webhook_status` pending (when it was
 * null), records the events and returns the pending deliveries with what their first attempt needs. Delivery ids are made here (`newId`), two
 * per event; an event with more targets is routed again with as many ids.
 */
import { Batcher, newId, perOwner } from "@labelgate/core";
import { type Pool, Prisma, transactionRows } from "@labelgate/store";
import type { QueueClient } from "@labelgate/queue";

export interface RouteDeps {
  /** the pg pool under the Prisma client: the routing statement runs on it (`transactionRows`) */
  pool: Pool;
  queue: QueueClient;
  /** WEBHOOK_RETRY_MAX: total attempts of each delivery */
  webhookRetryMax: number;
}

/** Delivery ids offered per event: enough for an event's targets, or it is routed again with more. */
const IDS_PER_EVENT = 2;

interface RouteRequest {
  eventId: string;
  /** new delivery ids, one per target webhook (at most this many targets are routed in this run) */
  ids: string[];
}

/**
 * A pending delivery as the routing statement read it: everything its first attempt needs (the webhook's
 * URL and sealed secret, the event's payload), so that attempt reads nothing more.
 */
export interface PendingDelivery {
  id: string;
  /** attempts already made (0 for a delivery just created) */
  attempts: number;
  event_id: string;
  task_id: string;
  webhook_id: string;
  callback_url: string;
  secret_ciphertext: string;
  /** false once the webhook was deleted */
  active: boolean;
  payload: Record<string, unknown>;
}

type RouteResult =
  | { kind: "notFound"; reason: string }
  /** the event has more targets than ids offered: nothing was written */
  | { kind: "moreIds"; targets: number }
  | { kind: "routed"; recorded: boolean; pending: PendingDelivery[] };

interface RoutedRow {
  event_id: string;
  task_found: boolean;
  routed: boolean;
  targets: number | null;
  recorded: boolean;
  pending: PendingDelivery[];
}

/**
 * One statement for a batch of events: finds each event's target webhooks, inserts one delivery per
 * target (a delivery is created once: unique (event_id, webhook_id)), marks the targeted tasks pending,
 * records the events (of two concurrent runs for one event, exactly one records it: the conditional
 * update) and returns each event's pending deliveries. An event with more targets than ids offered is
 * left untouched (`moreIds`).
 */
async function routeBatch(pool: Pool, requests: RouteRequest[]): Promise<RouteResult[]> {
  const eventIds = requests.map((r) => r.eventId);
  const counts = requests.map((r) => r.ids.length);
  const starts: number[] = [];
  let next = 1;
  for (const r of requests) {
    starts.push(next);
    next += r.ids.length;
  }
  const ids = requests.flatMap((r) => r.ids);
  const [rows] = await transactionRows<[RoutedRow]>(pool, [
    Prisma.sql`
    WITH ev AS (
      SELECT x.event_id, x.start, x.cnt, e.task_id, e.customer_id, e.type, e.payload, t.callback_url, t.id IS NOT NULL AS task_found
      FROM unnest(${eventIds}::text[], ${starts}::int[], ${counts}::int[]) AS x(event_id, start, cnt)
      JOIN events e ON e.id = x.event_id
      LEFT JOIN tasks t ON t.id = e.task_id
    ), tg AS (
      SELECT ev.event_id, ev.start, ev.task_id, ev.customer_id, w.id AS webhook_id,
             row_number() OVER (PARTITION BY ev.event_id ORDER BY w.created_at, w.id) AS rn,
             count(*) OVER (PARTITION BY ev.event_id) AS n
      FROM ev JOIN webhooks w ON w.customer_id = ev.customer_id AND w.active AND ev.type = ANY (w.events)
                               AND (ev.callback_url IS NULL OR w.callback_url = ev.callback_url)
      WHERE ev.task_found
    ), ok AS (
      SELECT ev.event_id, ev.task_id, EXISTS (SELECT 1 FROM tg WHERE tg.event_id = ev.event_id) AS targeted
      FROM ev
      WHERE ev.task_found AND NOT EXISTS (SELECT 1 FROM tg WHERE tg.event_id = ev.event_id AND tg.n > ev.cnt)
    ), ins AS (
      INSERT INTO deliveries (id, event_id, webhook_id, customer_id, task_id)
      SELECT (${ids}::text[])[(tg.start + tg.rn - 1)::int], tg.event_id, tg.webhook_id, tg.customer_id, tg.task_id
      FROM tg JOIN ok ON ok.event_id = tg.event_id
      ON CONFLICT (event_id, webhook_id) DO NOTHING
      RETURNING id, event_id, webhook_id, created_at
    ), pending_task AS (
      UPDATE tasks t SET webhook_status = 'pending', updated_at = now()
      FROM ok WHERE ok.targeted AND t.id = ok.task_id AND t.webhook_status IS NULL
      RETURNING t.id
    ), rec AS (
      UPDATE events e SET recorded_at = now()
      FROM ok WHERE e.id = ok.event_id AND e.recorded_at IS NULL
      RETURNING e.id
    )
    SELECT ev.event_id, ev.task_found,
           EXISTS (SELECT 1 FROM ok WHERE ok.event_id = ev.event_id) AS routed,
           (SELECT max(tg.n)::int FROM tg WHERE tg.event_id = ev.event_id) AS targets,
           EXISTS (SELECT 1 FROM rec WHERE rec.id = ev.event_id) AS recorded,
           (SELECT COALESCE(json_agg(json_build_object(
                     'id', p.id, 'attempts', p.attempts, 'event_id', ev.event_id, 'task_id', ev.task_id, 'webhook_id', p.webhook_id,
                     'callback_url', w.callback_url, 'secret_ciphertext', w.secret_ciphertext, 'active', w.active, 'payload', ev.payload
                   ) ORDER BY p.created_at, p.id), '[]'::json)
            FROM (
              SELECT id, webhook_id, 0 AS attempts, created_at FROM ins WHERE ins.event_id = ev.event_id
              UNION
              SELECT d.id, d.webhook_id, d.attempts, d.created_at FROM deliveries d WHERE d.event_id = ev.event_id AND d.status = 'pending'
            ) p JOIN webhooks w ON w.id = p.webhook_id) AS pending
    FROM ev`,
  ]);
  const byEvent = new Map(rows.map((r) => [r.event_id, r]));
  return eventIds.map((id): RouteResult => {
    const r = byEvent.get(id);
    if (!r) return { kind: "notFound", reason: `event ${id} not found` };
    if (!r.task_found) return { kind: "notFound", reason: `task of event ${id} not found` };
    if (!r.routed) return { kind: "moreIds", targets: r.targets ?? 0 };
    return { kind: "routed", recorded: r.recorded, pending: r.pending };
  });
}

/**
 * Concurrent routings of this process share one statement (batch.ts); an event appears at most once per
 * batch, so each run sees its own `recorded`.
 */
const routeBatcher = perOwner(
  (pool: Pool) => new Batcher<RouteRequest, RouteResult>((requests) => routeBatch(pool, requests), { key: (r) => r.eventId }),
);

function newDeliveryIds(n: number): string[] {
  return Array.from({ length: n }, () => newId("delivery"));
}

/**
 * Records the event (`events.recorded_at`), creates its deliveries and hands each pending one to
 * `deliverPending` (the webhook worker makes its first attempt there and then: `deliverInline`), or by
 * default enqueues a `webhookDelivery` job for it.
 * @returns `recorded`: true for the one run that recorded the event first; `deliveries`: the pending
 * deliveries handed on. @throws when the event (or its task) does not exist, or what `deliverPending` throws.
 */
export async function routeEvent(
  deps: RouteDeps,
  eventId: string,
  deliverPending?: (delivery: PendingDelivery) => Promise<unknown>,
): Promise<{ recorded: boolean; deliveries: string[] }> {
  let ids = newDeliveryIds(IDS_PER_EVENT);
  for (;;) {
    const routed = await routeBatcher(deps.pool).call({ eventId, ids });
    if (routed.kind === "notFound") throw new Error(routed.reason);
    if (routed.kind === "moreIds") {
      // more target webhooks than ids offered (nothing was written): again, with one id per target
      ids = newDeliveryIds(routed.targets);
      continue;
    }
    await Promise.all(
      routed.pending.map((delivery) =>
        deliverPending
          ? deliverPending(delivery)
          : deps.queue.enqueue("webhookDelivery", { deliveryId: delivery.id }, { attempts: deps.webhookRetryMax }),
      ),
    );
    return { recorded: routed.recorded, deliveries: routed.pending.map((d) => d.id) };
  }
}
