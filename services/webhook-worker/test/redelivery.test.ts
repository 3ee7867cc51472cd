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
const { sys, labeler } = useSystem({ webhookRetryMax: 1 }, { beforeClose: closeAll });

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

/**
 * A redelivery between automatic attempts (issue 28, contract §events): it is an attempt of its own, and
 * the automatic schedule (WEBHOOK_RETRY_MAX=3: attempts 1 s and 4 s apart) is neither used up nor restarted.
 */
describe("a redelivery while the automatic schedule runs", () => {
  const own = useSystem({ webhookRetryMax: 3 });

  /** Attempts 1 and 2 fail automatically; then the redelivery is asked for (attempt 3 is 4 s away). */
  async function afterTwoAutomaticFailures(reply: Answer) {
    const s = await webhookScenario(own.sys, own.labeler.key, await rx(reply));
    const twice = await eventually(
      async () => (await deliveriesOf(own.sys, s.key, s.webhookId)).items.find((d) => d.task_id === s.taskId && d.attempts === 2),
      15_000,
      "two automatic attempts",
    );
    expect(twice.status).toBe("pending");
    const res = await own.sys.api("POST", `/v1/webhooks/${s.webhookId}/deliveries/${twice.delivery_id}/redeliver`, { token: s.key });
    expect(res.status).toBe(202);
    return { ...s, deliveryId: twice.delivery_id, manualId: res.body.attempt_id as string };
  }

  /** The attempt log oldest first, as (number, manual, success). */
  const logOf = (d: { attempt_log: { attempt: number; manual: boolean; success: boolean }[] }) =>
    [...d.attempt_log].reverse().map((a) => [a.attempt, a.manual, a.success]);

  it("a failed redelivery leaves the schedule alone: its 3rd automatic attempt still comes, 4 s after the 2nd", async () => {
    // 1, 2 automatic: 500; 3 manual: 500; 4 (the 3rd automatic): 200
    const s = await afterTwoAutomaticFailures((q) => (q.n <= 3 ? 500 : 200));
    const done = await deliveryReaching(own.sys, s.key, s.webhookId, s.taskId, "delivered");
    expect(done.attempts).toBe(4);
    expect(logOf(done)).toEqual([
      [1, false, false],
      [2, false, false],
      [3, true, false],
      [4, false, true],
    ]);
    expect(done.attempt_log.find((a) => a.manual)?.attempt_id).toBe(s.manualId);
    expect(s.r.received.map((q) => q.headers["x-svc-delivery-attempt"])).toEqual(["1", "2", "3", "4"]);
    const [, second, , third] = s.r.received as Received[];
    // the schedule was not restarted: attempt 3 of the schedule comes 4 s after attempt 2, not 1 s after the redelivery
    expect((third as Received).at - (second as Received).at).toBeGreaterThanOrEqual(3_900);
    await webhookStatusReaching(own.sys, s.key, s.taskId, "delivered");
  });

  it("a failed redelivery and a failed 3rd automatic attempt: failed with 4 attempts, then nothing more", async () => {
    const s = await afterTwoAutomaticFailures(() => 503);
    const failed = await eventually(
      async () => (await deliveriesOf(own.sys, s.key, s.webhookId)).items.find((d) => d.task_id === s.taskId && d.attempts === 4),
      20_000,
      "four attempts",
    );
    expect(failed.status).toBe("failed");
    expect(logOf(failed)).toEqual([
      [1, false, false],
      [2, false, false],
      [3, true, false],
      [4, false, false],
    ]);
    await webhookStatusReaching(own.sys, s.key, s.taskId, "failed");
    await stays(() => s.r.received.length === 4, 2000, "no automatic attempt past WEBHOOK_RETRY_MAX");
  });

  it("a redelivery that succeeds delivers it, and the schedule sends nothing more", async () => {
    const s = await afterTwoAutomaticFailures((q) => (q.n <= 2 ? 500 : 200));
    const done = await deliveryReaching(own.sys, s.key, s.webhookId, s.taskId, "delivered");
    expect(logOf(done)).toEqual([
      [1, false, false],
      [2, false, false],
      [3, true, true],
    ]);
    // past the 4 s the 3rd automatic attempt would have waited: it found the delivery delivered
    await stays(() => s.r.received.length === 3, 5000, "no automatic attempt after a delivered redelivery");
    expect((await deliveriesOf(own.sys, s.key, s.webhookId)).items.find((d) => d.task_id === s.taskId)).toMatchObject({
      status: "delivered",
      attempts: 3,
    });
  });
});
