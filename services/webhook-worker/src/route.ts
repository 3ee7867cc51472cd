/**
 * Routing of `task.settled` events (DESIGN §7): a task with a callback_url goes to the customer's active
 * webhook of that URL; a task without one goes to every active webhook of the customer subscribed to
 * `task.settled`. One `deliveries` row per (event, webhook), unique, so routing twice creates nothing new;
 * every pending delivery is (re-)enqueued under its deterministic job id.
 *
 * Two statements per batch of events routed at once by this process (see batch.ts): one read of the
 * events' targets, then one write that inserts the deliveries (`ON CONFLICT DO NOTHING`), marks the tasks
 * `webhook_status` pending (when it was null), records the events and returns the pending deliveries.
 */
import { newId } from "@labelgate/core";
import type { PrismaClient } from "@labelgate/db";
import type { QueueClient } from "@labelgate/queue";
import { Batcher } from "./batch";

export interface RouteDeps {
  prisma: PrismaClient;
  queue: QueueClient;
  /** WEBHOOK_RETRY_MAX: total attempts of each delivery */
  webhookRetryMax: number;
}

type Routed = { found: false; reason: string } | { found: true; recorded: boolean; pending: string[] };

interface TargetRow {
  event_id: string;
  task_found: boolean;
  webhook_id: string | null;
}

interface RoutedRow {
  event_id: string;
  recorded: boolean;
  pending: string[];
}

async function routeBatch(prisma: PrismaClient, eventIds: string[]): Promise<Routed[]> {
  const targets = await prisma.$queryRaw<TargetRow[]>`
    SELECT e.id AS event_id, t.id IS NOT NULL AS task_found, w.id AS webhook_id
    FROM events e
    LEFT JOIN tasks t ON t.id = e.task_id
    LEFT JOIN webhooks w ON t.id IS NOT NULL AND w.customer_id = e.customer_id AND w.active AND e.type = ANY (w.events)
                        AND (t.callback_url IS NULL OR w.callback_url = t.callback_url)
    WHERE e.id = ANY (${eventIds}::text[])
    ORDER BY w.created_at`;
  const taskFound = new Map<string, boolean>();
  // the deliveries to create, as parallel arrays (id, event, webhook)
  const ids: string[] = [];
  const events: string[] = [];
  const webhooks: string[] = [];
  for (const r of targets) {
    taskFound.set(r.event_id, r.task_found);
    if (r.webhook_id === null) continue;
    ids.push(newId("delivery"));
    events.push(r.event_id);
    webhooks.push(r.webhook_id);
  }
  const routable = [...taskFound].filter(([, found]) => found).map(([id]) => id);
  const routed = new Map<string, RoutedRow>();
  if (routable.length > 0) {
    // One statement: of two concurrent runs for one event, exactly one records it (the conditional
    // update), and a delivery is created once (the unique (event_id, webhook_id)).
    const rows = await prisma.$queryRaw<RoutedRow[]>`
      WITH input AS (
        SELECT * FROM unnest(${ids}::text[], ${events}::text[], ${webhooks}::text[]) AS x(id, event_id, webhook_id)
      ), ev AS (
        SELECT e.id AS event_id, e.task_id, EXISTS (SELECT 1 FROM input WHERE input.event_id = e.id) AS targeted
        FROM events e WHERE e.id = ANY (${routable}::text[])
      ), ins AS (
        INSERT INTO deliveries (id, event_id, webhook_id, customer_id, task_id)
        SELECT input.id, input.event_id, input.webhook_id, e.customer_id, e.task_id
        FROM input JOIN events e ON e.id = input.event_id
        ON CONFLICT (event_id, webhook_id) DO NOTHING
        RETURNING id, event_id, created_at
      ), pending_task AS (
        UPDATE tasks t SET webhook_status = 'pending', updated_at = now()
        FROM ev WHERE ev.targeted AND t.id = ev.task_id AND t.webhook_status IS NULL
        RETURNING t.id
      ), rec AS (
        UPDATE events e SET recorded_at = now()
        FROM ev WHERE e.id = ev.event_id AND e.recorded_at IS NULL
        RETURNING e.id
      )
      SELECT ev.event_id,
             EXISTS (SELECT 1 FROM rec WHERE rec.id = ev.event_id) AS recorded,
             ARRAY(SELECT p.id FROM (
               SELECT id, created_at FROM ins WHERE ins.event_id = ev.event_id
               UNION
               SELECT d.id, d.created_at FROM deliveries d WHERE d.event_id = ev.event_id AND d.status = 'pending'
             ) p ORDER BY p.created_at, p.id) AS pending
      FROM ev`;
    for (const r of rows) routed.set(r.event_id, r);
  }
  return eventIds.map((id): Routed => {
    const r = routed.get(id);
    if (r) return { found: true, recorded: r.recorded, pending: r.pending };
    return { found: false, reason: taskFound.has(id) ? `task of event ${id} not found` : `event ${id} not found` };
  });
}

const batchers = new WeakMap<PrismaClient, Batcher<string, Routed>>();

function routeBatcher(prisma: PrismaClient): Batcher<string, Routed> {
  let b = batchers.get(prisma);
  if (!b) {
    // an event appears at most once per batch, so each run sees its own `recorded`
    b = new Batcher((ids) => routeBatch(prisma, ids), { key: (id) => id });
    batchers.set(prisma, b);
  }
  return b;
}

/**
 * Records the event (`events.recorded_at`), creates its deliveries and enqueues them.
 * @returns `recorded`: true for the one run that recorded the event first; `deliveries`: the pending
 * deliveries (re-)enqueued. @throws when the event (or its task) does not exist.
 */
export async function routeEvent(deps: RouteDeps, eventId: string): Promise<{ recorded: boolean; deliveries: string[] }> {
  const routed = await routeBatcher(deps.prisma).call(eventId);
  if (!routed.found) throw new Error(routed.reason);
  await Promise.all(
    routed.pending.map((deliveryId) => deps.queue.enqueue("webhookDelivery", { deliveryId }, { attempts: deps.webhookRetryMax })),
  );
  return { recorded: routed.recorded, deliveries: routed.pending };
}
