/**
 * Chaos, infrastructure outages during a load of real crowd labels: Redis shut down for 10 s (every key
 * lost: it keeps nothing on disk) and started again on the same port; Postgres restarted (fast shutdown,
 * start on the same port and data). The services are never restarted. Each scenario ends with the
 * invariant (test/chaos/invariant.ts).
 */
import { LabelgateClient, LabelgateError } from "@labelgate/sdk";
import { chaosFile, explainFailure } from "./harness";
import { checkInvariant, type InvariantCounts } from "./invariant";
import { customerWithWebhook, dogItems, faultDuring, Load, type Sample } from "./load";

jest.setTimeout(150_000);

const REDIS_OUTAGE_MS = 10_000;
const chaos = chaosFile<unknown>();

function percentile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
}

/** GET /v1/health every 100 ms until `stop()`: each answer's status and latency. */
function probeHealth(baseUrl: string): { samples: Sample[]; stop: () => Promise<void> } {
  const client = new LabelgateClient({ baseUrl, maxAttempts: 1, timeoutMs: 10_000 });
  const samples: Sample[] = [];
  let running = true;
  const loop = (async () => {
    while (running) {
      const t0 = performance.now();
      let status = 200;
      try {
        await client.health();
      } catch (err) {
        status = err instanceof LabelgateError ? err.status : -1;
      }
      samples.push({ at: Date.now(), ms: performance.now() - t0, status, what: "health" });
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  })();
  return {
    samples,
    stop: async () => {
      running = false;
      await loop;
    },
  };
}

describe("Redis shut down for 10 s during the load", () => {
  it("answers 503 fast during the outage, loses nothing accepted, drains the backlog after the restart", async () => {
    const { cluster, healthy, results } = chaos;
    await explainFailure(cluster, async () => {
      const load = new Load(cluster.baseUrl);
      const { items, options } = dogItems(150, 0);
      const customer = await customerWithWebhook(load, healthy, 10_000);
      const run = load.run(customer, items, options);
      let outage = { from: 0, to: 0 };
      let probe: ReturnType<typeof probeHealth> | undefined;
      await faultDuring(load, run, 60, async () => {
        await cluster.redis.stop();
        const from = Date.now();
        probe = probeHealth(cluster.baseUrl);
        // the deliberate outage, on the harness's timer
        await new Promise((resolve) => setTimeout(resolve, REDIS_OUTAGE_MS));
        await cluster.redis.start();
        outage = { from, to: Date.now() };
        await probe.stop();
      });
      const during = [...(probe?.samples ?? []), ...load.record.samples].filter((s) => s.at >= outage.from && s.at <= outage.to);
      const unavailable = during.filter((s) => s.status === 503).map((s) => s.ms);
      const answered = during.filter((s) => s.status >= 200 && s.status < 300).map((s) => s.ms);
      const counts: InvariantCounts = await checkInvariant({
        databaseUrl: cluster.pg.databaseUrl,
        customer,
        record: load.record,
        healthy,
        timeoutMs: 90_000,
      });
      const figures = {
        ...counts,
        outageMs: outage.to - outage.from,
        responsesDuringOutage: during.length,
        "503s": unavailable.length,
        p99_503_ms: Math.round(percentile(unavailable, 0.99)),
        max_503_ms: Math.round(Math.max(...unavailable)),
        "2xx": answered.length,
        p99_2xx_ms: Math.round(percentile(answered, 0.99)),
      };
      results.redis = figures;
      expect(counts.tasksSettled).toBe(150);
      // the health check (and anything needing the queue) answers 503 during the outage, fast
      expect(unavailable.length).toBeGreaterThan(10);
      expect(percentile(unavailable, 0.99)).toBeLessThan(1000);
    });
  });
});

describe("Postgres restarted during the load", () => {
  it("loses no accepted task or label; the services recover without a restart", async () => {
    const { cluster, healthy, results } = chaos;
    await explainFailure(cluster, async () => {
      const load = new Load(cluster.baseUrl);
      const { items, options } = dogItems(150, 150);
      const customer = await customerWithWebhook(load, healthy, 10_000);
      const pids = Object.values(cluster.procs).map((p) => p.child.pid);
      const run = load.run(customer, items, options);
      let downMs = 0;
      await faultDuring(load, run, 60, async () => {
        const from = Date.now();
        await cluster.pg.stop();
        await cluster.pg.start();
        downMs = Date.now() - from;
      });
      const counts = await checkInvariant({
        databaseUrl: cluster.pg.databaseUrl,
        customer,
        record: load.record,
        healthy,
        timeoutMs: 90_000,
      });
      // the same processes served before and after
      expect(Object.values(cluster.procs).map((p) => p.child.pid)).toEqual(pids);
      for (const p of Object.values(cluster.procs)) expect(p.child.exitCode).toBeNull();
      const retried = [...load.record.retries.values()].reduce((a, b) => a + b, 0);
      results.postgres = { ...counts, downMs, retriedRequests: retried };
      expect(counts.tasksSettled).toBe(150);
    });
  });
});
