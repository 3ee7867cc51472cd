/**
 * DNS rebinding (contract §outbound-calls): a host that resolves to a public address when the URL is checked
 * and to a private one when the client connects must never be reached. The check runs on the address each
 * connection really uses (core's `guardedLookup` in the runtime's dispatchers), not only before the request.
 * The resolver here changes its answer between calls (public first, loopback after), as a rebinding DNS
 * server does; the receivers are real local servers on 127.0.0.1.
 */
import { openRead, PermanentStorageError, storageOptions } from "@labelgate/storage";
import { createLabeler, registerCustomer, type System, startSystem } from "./system";
import { deliveryReaching, newSecret, type Receiver, receiver, settleTask } from "./webhooks";

/** A resolver for `host` answering `first` once, then loopback (other hosts do not resolve). */
function rebinding(host: string, first: string) {
  const calls: string[] = [];
  const resolve = async (name: string): Promise<string[]> => {
    if (name !== host) throw Object.assign(new Error(`${name} does not resolve`), { code: "ENOTFOUND" });
    calls.push(name);
    return calls.length === 1 ? [first] : ["127.0.0.1"];
  };
  return { resolve, calls };
}

/** A resolver answering loopback for `host`, always. */
function loopback(host: string) {
  return async (name: string): Promise<string[]> => {
    if (name !== host) throw Object.assign(new Error(`${name} does not resolve`), { code: "ENOTFOUND" });
    return ["127.0.0.1"];
  };
}

const HOST = "hooks.rebind.example";

describe("webhook deliveries", () => {
  let r: Receiver;
  const systems: System[] = [];
  beforeAll(async () => {
    r = await receiver(() => 200);
  });
  afterAll(async () => {
    await Promise.all(systems.map((s) => s.close()));
    await r.close();
  });

  it("a callback host that rebinds to loopback after registration is refused at connect time; nothing reaches it", async () => {
    const dns = rebinding(HOST, "93.184.216.34");
    const sys = await startSystem({ allowPrivateUrls: false, resolve: dns.resolve });
    systems.push(sys);
    const port = new URL(r.url).port;
    const url = `http://${HOST}:${port}/hook`;
    const c = await registerCustomer(sys);
    const labeler = await createLabeler(sys);
    // registration resolves the host once: a public address, accepted
    const hook = await sys.api<{ webhook_id: string }>("POST", "/v1/webhooks", {
      token: c.key,
      body: { callback_url: url, secret: newSecret() },
    });
    expect(hook.status).toBe(201);
    expect(dns.calls).toHaveLength(1);
    const taskId = await settleTask(sys, c.key, labeler.key, { callback_url: url });
    // the delivery's connection resolved it again: loopback, refused before any byte was sent
    const failed = await deliveryReaching(sys, c.key, hook.body.webhook_id, taskId, "failed");
    expect(failed.attempt_log.length).toBeGreaterThanOrEqual(1);
    for (const attempt of failed.attempt_log) {
      expect(attempt.status_code).toBeNull();
      expect(attempt.error).toMatch(/EPRIVATEADDRESS.*private or loopback/);
    }
    expect(dns.calls.length).toBeGreaterThanOrEqual(2);
    expect(r.forTask(taskId)).toEqual([]);
  }, 60_000);

  it("the dispatcher really connects through the resolver (control: private URLs allowed, the same host is delivered to)", async () => {
    const sys = await startSystem({ allowPrivateUrls: true, resolve: loopback(HOST) });
    systems.push(sys);
    const url = `http://${HOST}:${new URL(r.url).port}/hook`;
    const c = await registerCustomer(sys);
    const labeler = await createLabeler(sys);
    const hook = await sys.api<{ webhook_id: string }>("POST", "/v1/webhooks", {
      token: c.key,
      body: { callback_url: url, secret: newSecret() },
    });
    const taskId = await settleTask(sys, c.key, labeler.key, { callback_url: url });
    await deliveryReaching(sys, c.key, hook.body.webhook_id, taskId, "delivered");
    expect(r.forTask(taskId)).toHaveLength(1);
  }, 60_000);
});

describe("https manifests", () => {
  it("a manifest host that rebinds to loopback is refused at connect time with a permanent error", async () => {
    const dns = rebinding("manifests.rebind.example", "93.184.216.34");
    const options = storageOptions({ allowPrivateUrls: false, resolve: dns.resolve });
    try {
      const err = await openRead("https://manifests.rebind.example:1/manifest.jsonl", undefined, options).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(PermanentStorageError);
      expect((err as Error).message).toMatch(/private or loopback/);
      // the check before the request saw the public address; the connection's lookup saw loopback
      expect(dns.calls).toHaveLength(2);
    } finally {
      await options.dispatcher.close();
    }
  });
});
