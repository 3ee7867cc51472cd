/**
 * Webhook delivery end to end (contract §events): the real gateway and workers, real local receivers.
 * The signature is checked by an implementation of our own (HMAC-SHA256 over the raw bytes received),
 * the routing of `task.settled` to the customer's webhooks, and that deleted webhooks receive nothing.
 */
import { createTask, eventually, label, registerCustomer, settledResult, useSystem } from "../../../test/system";
import {
  deliveriesOf,
  deliveryReaching,
  ISO,
  json,
  newSecret,
  type Received,
  type Reply,
  receivers,
  registerWebhook,
  routed,
  settleTask,
  signedWith,
  taskView,
  webhookScenario,
  webhookStatusReaching,
} from "../../../test/webhooks";

const { rx, closeAll } = receivers();
const { sys, labeler } = useSystem({}, { beforeClose: closeAll });

it("delivers a signed task.settled to the webhook of the task's callback_url", async () => {
  const r = await rx();
  const c = await registerCustomer(sys);
  const secret = "s3cret-s3cret-s3cret";
  const hook = await sys.api("POST", "/v1/webhooks", { token: c.key, body: { callback_url: r.url, secret } });
  expect(hook.status).toBe(201);
  expect(hook.body).toMatchObject({ callback_url: r.url, events: ["task.settled"], active: true });
  expect(JSON.stringify(hook.body)).not.toContain(secret);
  const taskId = await settleTask(sys, c.key, labeler.key, { callback_url: r.url });
  const got = await eventually(async () => r.received[0]);
  expect(signedWith(got.raw, got.headers["x-svc-signature"], secret)).toBe(true);
  expect(got.headers["x-svc-delivery-attempt"]).toBe("1");
  expect(got.headers["x-svc-event-id"]).toMatch(/^evt_/);
  expect(json(got)).toMatchObject({ event: "task.settled", task_id: taskId, consensus_label: "cat" });
  await webhookStatusReaching(sys, c.key, taskId, "delivered");
});

describe("signature and headers, checked independently", () => {
  it("signs every attempt over the raw bytes; the event id is stable, the attempt number increments, the timestamp is fresh", async () => {
    const { key, secret, webhookId, taskId, r } = await webhookScenario(sys, labeler.key, await rx((req) => (req.n === 1 ? 500 : 200)));

    const delivery = await deliveryReaching(sys, key, webhookId, taskId, "delivered");
    expect(r.received).toHaveLength(2);
    const result = await settledResult(sys, key, taskId);
    const settlement = result.settlement as { ledger_txid: string };

    const [first, second] = r.received;
    if (!first || !second) throw new Error("two requests expected");
    for (const req of [first, second]) {
      // the signature verifies over the exact bytes received, and only with this webhook's secret
      expect(req.headers["x-svc-signature"]).toMatch(/^sha256=[0-9a-f]{64}$/);
      expect(signedWith(req.raw, req.headers["x-svc-signature"], secret)).toBe(true);
      expect(signedWith(req.raw, req.headers["x-svc-signature"], newSecret())).toBe(false);
      const tampered = Buffer.from(req.raw);
      tampered.writeUInt8(tampered.readUInt8(tampered.length - 2) ^ 1, tampered.length - 2);
      expect(signedWith(tampered, req.headers["x-svc-signature"], secret)).toBe(false);
      expect(req.headers["content-type"]).toMatch(/^application\/json/);
      expect(req.headers["x-svc-event-id"]).toBe(delivery.event_id);
      const body = json(req);
      expect(body).toMatchObject({
        event: "task.settled",
        task_id: taskId,
        consensus_label: "cat",
        confidence: result.confidence,
        ledger_txid: settlement.ledger_txid,
        settled_at: result.settled_at,
      });
      expect(body.ledger_txid).toMatch(/^0x[0-9a-f]{64}$/);
      expect(typeof body.confidence).toBe("number");
      expect(body.settled_at).toMatch(ISO);
      expect(body.timestamp).toMatch(ISO);
      // fresh: stamped when the attempt was sent, not when the task settled
      const stamped = Date.parse(String(body.timestamp));
      expect(stamped).toBeLessThanOrEqual(req.at + 50);
      expect(stamped).toBeGreaterThan(req.at - 3000);
      expect(stamped).toBeGreaterThanOrEqual(Date.parse(String(body.settled_at)));
    }
    expect(delivery.event_id).toMatch(/^evt_/);
    expect(first.headers["x-svc-event-id"]).toBe(second.headers["x-svc-event-id"]);
    expect(first.headers["x-svc-delivery-attempt"]).toBe("1");
    expect(second.headers["x-svc-delivery-attempt"]).toBe("2");
    // a new timestamp (and so a new signature) per attempt, everything else the same event
    const [b1, b2] = [json(first), json(second)];
    expect(Date.parse(String(b2.timestamp)) - Date.parse(String(b1.timestamp))).toBeGreaterThanOrEqual(500);
    expect(first.headers["x-svc-signature"]).not.toBe(second.headers["x-svc-signature"]);
    const { timestamp: _t1, ...rest1 } = b1;
    const { timestamp: _t2, ...rest2 } = b2;
    expect(rest2).toEqual(rest1);
  });
});

describe("routing of task.settled", () => {
  it("a task with callback_url goes only to that URL's webhook, signed with its secret; one without goes to every active webhook", async () => {
    const [r1, r2, r3] = await Promise.all([rx(), rx(), rx()]);
    const a = await registerCustomer(sys);
    const b = await registerCustomer(sys);
    const [sa1, sa2, sb3, sb1] = [newSecret(), newSecret(), newSecret(), newSecret()];
    const wa1 = await registerWebhook(sys, a.key, r1.url, sa1);
    const wa2 = await registerWebhook(sys, a.key, r2.url, sa2);
    const wb3 = await registerWebhook(sys, b.key, r3.url, sb3);
    // customer B also registers customer A's first URL, with a secret of its own
    const wb1 = await registerWebhook(sys, b.key, r1.url, sb1);

    const withUrl = await settleTask(sys, a.key, labeler.key, { callback_url: r1.url });
    const withoutUrl = await settleTask(sys, a.key, labeler.key);
    await webhookStatusReaching(sys, a.key, withUrl, "delivered");
    await webhookStatusReaching(sys, a.key, withoutUrl, "delivered");

    // callback_url: exactly one request, at that URL, signed with A's secret of that webhook
    expect(r1.forTask(withUrl)).toHaveLength(1);
    expect(r2.forTask(withUrl)).toHaveLength(0);
    const viaUrl = r1.forTask(withUrl)[0] as Received;
    expect(signedWith(viaUrl.raw, viaUrl.headers["x-svc-signature"], sa1)).toBe(true);
    expect(signedWith(viaUrl.raw, viaUrl.headers["x-svc-signature"], sb1)).toBe(false);

    // no callback_url: both of A's webhooks, each signed with its own secret, the same event
    const [to1, to2] = [r1.forTask(withoutUrl), r2.forTask(withoutUrl)];
    expect(to1).toHaveLength(1);
    expect(to2).toHaveLength(1);
    const [x1, x2] = [to1[0] as Received, to2[0] as Received];
    expect(signedWith(x1.raw, x1.headers["x-svc-signature"], sa1)).toBe(true);
    expect(signedWith(x2.raw, x2.headers["x-svc-signature"], sa2)).toBe(true);
    expect(signedWith(x2.raw, x2.headers["x-svc-signature"], sa1)).toBe(false);
    expect(x1.headers["x-svc-event-id"]).toBe(x2.headers["x-svc-event-id"]);
    expect(x1.headers["x-svc-event-id"]).not.toBe(viaUrl.headers["x-svc-event-id"]);

    // the delivery log agrees; customer B's webhooks (one on the same URL) never got A's events
    expect((await deliveriesOf(sys, a.key, wa1)).items.map((d) => d.task_id).sort()).toEqual([withUrl, withoutUrl].sort());
    expect((await deliveriesOf(sys, a.key, wa2)).items.map((d) => d.task_id)).toEqual([withoutUrl]);
    expect((await deliveriesOf(sys, b.key, wb3)).total).toBe(0);
    expect((await deliveriesOf(sys, b.key, wb1)).total).toBe(0);
    expect(r3.received).toHaveLength(0);
    expect(r1.received).toHaveLength(2);
    expect(r2.received).toHaveLength(1);
  });

  it("a task's callback_url is resolved at settlement: re-registered after submission, it is signed with the new secret", async () => {
    const r = await rx();
    const c = await registerCustomer(sys);
    const oldSecret = newSecret();
    const oldId = await registerWebhook(sys, c.key, r.url, oldSecret);
    const taskId = await createTask(sys, c.key, { consensus_threshold: 1, callback_url: r.url });
    expect((await sys.api("DELETE", `/v1/webhooks/${oldId}`, { token: c.key })).status).toBe(200);
    const newSecretValue = newSecret();
    const newId = await registerWebhook(sys, c.key, r.url, newSecretValue);
    expect((await label(sys, labeler.key, taskId, "cat")).status).toBe(201);
    await webhookStatusReaching(sys, c.key, taskId, "delivered");
    expect(r.received).toHaveLength(1);
    const got = r.received[0] as Received;
    expect(signedWith(got.raw, got.headers["x-svc-signature"], newSecretValue)).toBe(true);
    expect(signedWith(got.raw, got.headers["x-svc-signature"], oldSecret)).toBe(false);
    expect((await deliveriesOf(sys, c.key, newId)).total).toBe(1);
    expect((await deliveriesOf(sys, c.key, oldId)).total).toBe(0);
  });

  it("a task of a customer without webhooks is delivered nowhere and keeps webhook_status null", async () => {
    const r = await rx();
    const other = await registerCustomer(sys);
    await registerWebhook(sys, other.key, r.url);
    const lonely = await registerCustomer(sys);
    const taskId = await settleTask(sys, lonely.key, labeler.key);
    await routed(sys, taskId);
    expect(await sys.db.prisma.delivery.count({ where: { taskId } })).toBe(0);
    expect((await taskView(sys, lonely.key, taskId)).webhook_status).toBeNull();
    expect(r.received).toHaveLength(0);
  });
});

describe("deleted webhooks receive nothing", () => {
  it("a webhook deleted before settlement gets no delivery; the customer's other webhook does", async () => {
    const [kept, gone] = await Promise.all([rx(), rx()]);
    const c = await registerCustomer(sys);
    const keptId = await registerWebhook(sys, c.key, kept.url);
    const goneId = await registerWebhook(sys, c.key, gone.url);
    expect((await sys.api("DELETE", `/v1/webhooks/${goneId}`, { token: c.key })).status).toBe(200);

    const taskId = await settleTask(sys, c.key, labeler.key);
    await webhookStatusReaching(sys, c.key, taskId, "delivered");
    expect(kept.forTask(taskId)).toHaveLength(1);
    expect((await deliveriesOf(sys, c.key, goneId)).total).toBe(0);
    expect((await deliveriesOf(sys, c.key, keptId)).total).toBe(1);
    expect(gone.received).toHaveLength(0);
    // and a task can no longer name the deleted webhook's URL
    const rejected = await sys.api("POST", "/v1/tasks", {
      token: c.key,
      body: {
        type: "image_classification",
        data_url: "https://images.example/1.jpg",
        label_spec: { question: "q?", options: ["cat", "dog"] },
        callback_url: gone.url,
      },
    });
    expect(rejected.status).toBe(400);
  });

  it("a customer whose only webhook was deleted gets no delivery at all", async () => {
    const r = await rx();
    const c = await registerCustomer(sys);
    const id = await registerWebhook(sys, c.key, r.url);
    expect((await sys.api("DELETE", `/v1/webhooks/${id}`, { token: c.key })).status).toBe(200);
    const taskId = await settleTask(sys, c.key, labeler.key);
    await routed(sys, taskId);
    expect(await sys.db.prisma.delivery.count({ where: { taskId } })).toBe(0);
    expect((await taskView(sys, c.key, taskId)).webhook_status).toBeNull();
    expect(r.received).toHaveLength(0);
  });

  it("a delivery still pending when its webhook is deleted is not sent again", async () => {
    // the first request is held open until the webhook is deleted, then answered 500 (a retry is due in 1 s)
    let release: (reply: Reply) => void = () => undefined;
    const held = new Promise<Reply>((resolve) => {
      release = resolve;
    });
    const { key, webhookId, taskId, r } = await webhookScenario(sys, labeler.key, await rx((req) => (req.n === 1 ? held : 200)));

    await eventually(async () => r.received[0], 20000, "the first request");
    const pending = await deliveryReaching(sys, key, webhookId, taskId, "pending");
    expect(pending.attempts).toBe(0);
    const del = await sys.api("DELETE", `/v1/webhooks/${webhookId}`, { token: key });
    expect(del.status).toBe(200);
    release(500);

    const failed = await deliveryReaching(sys, key, webhookId, taskId, "failed");
    expect(failed.attempts).toBe(1);
    expect(failed.attempt_log).toHaveLength(1);
    expect(failed.attempt_log[0]).toMatchObject({ attempt: 1, success: false, status_code: 500 });
    expect(failed.last_error).toMatch(/deleted/);
    await webhookStatusReaching(sys, key, taskId, "failed");
    expect(r.received).toHaveLength(1);
  });
});
