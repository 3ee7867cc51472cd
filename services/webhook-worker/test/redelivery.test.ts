/**
 * Manual redelivery (POST /v1/webhooks/{id}/deliveries/{delivery_id}/redeliver): a new signed request for the
 * same event, logged as a manual attempt, moving the delivery and the task to `delivered` on success.
 */
import { eventually, registerCustomer, useSystem } from "../../../test/system";
import {
  type Answer,
  deliveriesOf,
  deliveryReaching,
  ISO,
  json,
  type Received,
  receivers,
  registerWebhook,
  signedWith,
  stays,
  taskView,
  webhookScenario,
  webhookStatusReaching,
} from "../../../test/webhooks";

const { rx, closeAll } = receivers();
// one attempt per scheduled delivery: a failing receiver gives a failed delivery at once
const { sys, labeler } = useSystem({ isolatedDatabase: true, webhookRetryMax: 1 }, { beforeClose: closeAll });

/** A customer whose webhook at a new receiver (answering `reply`) has a failed delivery. */
async function failedDelivery(reply: Answer) {
  const s = await webhookScenario(sys, labeler.key, await rx(reply));
  const delivery = await deliveryReaching(sys, s.key, s.webhookId, s.taskId, "failed");
  await webhookStatusReaching(sys, s.key, s.taskId, "failed");
  expect(s.r.received).toHaveLength(1);
  return { ...s, delivery };
}

function redeliver(key: string, webhookId: string, deliveryId: string) {
  return sys.api("POST", `/v1/webhooks/${webhookId}/deliveries/${deliveryId}/redeliver`, { token: key });
}

it("redelivers a failed delivery: 202 queued, same event id, fresh timestamp and signature, manual attempt, delivered", async () => {
  const { r, key, secret, webhookId, taskId, delivery } = await failedDelivery((q) => (q.n === 1 ? 500 : 200));
  expect(delivery.attempts).toBe(1);

  const asked = Date.now();
  const res = await redeliver(key, webhookId, delivery.delivery_id);
  expect(res.status).toBe(202);
  expect(res.body).toEqual({ delivery_id: delivery.delivery_id, attempt_id: expect.stringMatching(/^att_/), status: "queued" });
  const attemptId = res.body.attempt_id as string;

  const again = await eventually(async () => r.received[1], 15000, "the redelivered request");
  const first = r.received[0] as Received;
  expect(again.headers["x-svc-event-id"]).toBe(delivery.event_id);
  expect(again.headers["x-svc-event-id"]).toBe(first.headers["x-svc-event-id"]);
  expect(again.headers["x-svc-delivery-attempt"]).toBe("2");
  expect(signedWith(again.raw, again.headers["x-svc-signature"], secret)).toBe(true);
  expect(again.headers["x-svc-signature"]).not.toBe(first.headers["x-svc-signature"]);
  const [b1, b2] = [json(first), json(again)];
  expect(b2.timestamp).toMatch(ISO);
  expect(Date.parse(String(b2.timestamp))).toBeGreaterThanOrEqual(asked - 50);
  expect(Date.parse(String(b2.timestamp))).toBeGreaterThan(Date.parse(String(b1.timestamp)));
  const { timestamp: _t1, ...rest1 } = b1;
  const { timestamp: _t2, ...rest2 } = b2;
  expect(rest2).toEqual(rest1);
  expect(rest2).toMatchObject({ event: "task.settled", task_id: taskId });

  const done = await deliveryReaching(sys, key, webhookId, taskId, "delivered");
  expect(done.attempts).toBe(2);
  expect(done.attempt_log).toHaveLength(2);
  expect(done.attempt_log[0]).toMatchObject({
    attempt_id: attemptId,
    attempt: 2,
    manual: true,
    success: true,
    status_code: 200,
    error: null,
  });
  expect(done.attempt_log[1]).toMatchObject({ attempt: 1, manual: false, success: false, status_code: 500 });
  await webhookStatusReaching(sys, key, taskId, "delivered");
  expect(r.received).toHaveLength(2);
});

it("a failed redelivery is logged as manual, leaves the delivery failed and is not retried automatically", async () => {
  const { r, key, webhookId, taskId, delivery } = await failedDelivery(() => 500);
  const res = await redeliver(key, webhookId, delivery.delivery_id);
  expect(res.status).toBe(202);
  const attemptId = res.body.attempt_id as string;
  const logged = await eventually(
    async () =>
      (await deliveriesOf(sys, key, webhookId)).items.find(
        (d) => d.attempts === 2 && d.attempt_log.some((a) => a.attempt_id === attemptId),
      ),
    15000,
    "the manual attempt",
  );
  expect(logged.status).toBe("failed");
  expect(logged.attempts).toBe(2);
  expect(logged.attempt_log[0]).toMatchObject({ attempt_id: attemptId, attempt: 2, manual: true, success: false, status_code: 500 });
  expect(r.received.map((q) => q.headers["x-svc-delivery-attempt"])).toEqual(["1", "2"]);
  // past the 1 s a scheduled retry would take: nothing more arrives
  await stays(() => r.received.length === 2, 2000, "no automatic retry of a manual redelivery");
  expect((await taskView(sys, key, taskId)).webhook_status).toBe("failed");
});

it("404 for an unknown delivery and for another customer's webhook or delivery; 409 after the webhook is deleted", async () => {
  const { r, key: owner, webhookId, delivery } = await failedDelivery((q) => (q.n === 1 ? 500 : 200));
  const other = await registerCustomer(sys);
  const othersHook = await registerWebhook(sys, other.key, (await rx()).url);

  for (const [key, hook, dlv] of [
    [owner, webhookId, "dlv_doesnotexist000000000"],
    [owner, webhookId, "not-a-delivery-id"],
    [owner, "whk_doesnotexist000000000", delivery.delivery_id],
    // another customer: neither through the owner's webhook id nor through a webhook of its own
    [other.key, webhookId, delivery.delivery_id],
    [other.key, othersHook, delivery.delivery_id],
  ] as const) {
    const res = await redeliver(key, hook, dlv);
    expect(res.status).toBe(404);
    expect(res.body.error).toMatch(/not found/);
  }
  expect((await redeliver(other.key, webhookId, delivery.delivery_id)).body).toEqual({ error: "webhook not found" });

  expect((await sys.api("DELETE", `/v1/webhooks/${webhookId}`, { token: owner })).status).toBe(200);
  const gone = await redeliver(owner, webhookId, delivery.delivery_id);
  expect(gone.status).toBe(409);
  expect(gone.body).toEqual({ error: "webhook is not active" });
  const unauth = await sys.api("POST", `/v1/webhooks/${webhookId}/deliveries/${delivery.delivery_id}/redeliver`);
  expect(unauth.status).toBe(401);
  // none of these sent anything
  await stays(() => r.received.length === 1, 1500, "no request from a refused redelivery");
  expect((await deliveriesOf(sys, owner, webhookId)).items[0]).toMatchObject({ status: "failed", attempts: 1 });
});
