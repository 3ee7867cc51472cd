import { createHmac } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { createLabeler, createTask, eventually, label, registerCustomer, type System, startSystem } from "../../../test/system";

interface Received {
  headers: http.IncomingHttpHeaders;
  body: string;
  at: number;
}

/** A real local HTTP receiver answering with `respond(n)` for the n-th request (1-based). */
async function receiver(respond: (n: number) => number = () => 200) {
  const received: Received[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString("utf8"), at: Date.now() });
      res.statusCode = respond(received.length);
      res.end("ok");
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  return { url, received, close: () => new Promise<void>((r) => server.close(() => r())) };
}

let sys: System;
beforeAll(async () => {
  sys = await startSystem({ isolatedDatabase: true });
});
afterAll(() => sys.close());

it("delivers a signed task.settled to the webhook of the task's callback_url", async () => {
  const rx = await receiver();
  try {
    const c = await registerCustomer(sys);
    const secret = "s3cret-s3cret-s3cret";
    const hook = await sys.api("POST", "/v1/webhooks", { token: c.key, body: { callback_url: rx.url, secret } });
    expect(hook.status).toBe(201);
    expect(hook.body).toMatchObject({ callback_url: rx.url, events: ["task.settled"], active: true });
    expect(JSON.stringify(hook.body)).not.toContain(secret);
    const taskId = await createTask(sys, c.key, { consensus_threshold: 1, callback_url: rx.url });
    const l = await createLabeler(sys);
    expect((await label(sys, l.key, taskId, "cat")).status).toBe(201);
    const got = await eventually(async () => rx.received[0]);
    const expected = `sha256=${createHmac("sha256", secret).update(got.body).digest("hex")}`;
    expect(got.headers["x-svc-signature"]).toBe(expected);
    expect(got.headers["x-svc-delivery-attempt"]).toBe("1");
    expect(got.headers["x-svc-event-id"]).toMatch(/^evt_/);
    expect(JSON.parse(got.body)).toMatchObject({ event: "task.settled", task_id: taskId, consensus_label: "cat" });
    const task = await eventually(async () => {
      const t = await sys.api("GET", `/v1/tasks/${taskId}`, { token: c.key });
      return t.body.webhook_status === "delivered" ? t.body : undefined;
    });
    expect(task.webhook_status).toBe("delivered");
  } finally {
    await rx.close();
  }
});
