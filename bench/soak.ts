/**
 * `pnpm bench:soak [--minutes 10] [--tasks-per-s 10] [--labels-per-s 40] [--labelers 40] [--log-level info]
 *   [--space-minutes M]`
 *
 * Memory soak: a steady mixed load at a fixed moderate rate for `--minutes` against the four real service
 * processes (gateway, consensus-worker, webhook-worker, manifest-worker; `node --import tsx
 * services/<name>/src/main.ts`): every 100 ms a tenth of `--tasks-per-s` task submissions (`POST /v1/tasks`,
 * every other one with a `callback_url`, the rest delivered through a registered webhook) and of
 * `--labels-per-s` claim+label pairs by idle labelers (85% "cat"), so tasks settle and their `task.settled`
 * events are delivered to a local receiver (signatures checked). The manifest worker has no job to run:
 * it is sampled idle, next to the loaded three. VmRSS of each service process is read from
 * /proc/<pid>/status every 5 s. Reported per service: RSS at minute 1, at the end, the max, and the
 * Theil–Sen slope (median of pairwise slopes) of the per-minute floors (lowest sample of each minute: the
 * bottom of the garbage collector's sawtooth, which a leak raises) of the last 8 minutes (the last 80% of
 * a shorter soak), in MB/min; "flat" = |slope| < 1 MB/min (less than 8 MB over those 8 minutes). The
 * least-squares slopes through those floors and through every sample are reported as well (one dip of the
 * floors tilts the first, a sawtooth whose peaks happen to fall late tilts the second, without any leak), and
 * every minute's floor (`floors_mb`). Also the work done: tasks
 * submitted, labels, tasks settled and deliveries received, and every non-2xx answer.
 * Every task goes to one label space, so each refit reads every label so far (refit.ts: a refit reads the
 * space's every label); `--space-minutes M` starts a new label space (a new question) every M minutes, so that
 * no space outgrows M minutes of labels: a memory rise that persists with rotating spaces grows with time, one
 * that disappears grows with the largest space.
 * A database and a Redis prefix of its own, dropped at the end. Progress on stderr, one JSON summary on stdout.
 */
import type { ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import os from "node:os";
import { parseArgs } from "node:util";
import { migrateDatabase, pgConfigFromUrl } from "@labelgate/store";
import { Pool } from "pg";
import {
  api,
  benchTarget,
  benchTask,
  claimAndLabel,
  createLabelers,
  JsonClient,
  type Labeler,
  newStats,
  productionCustomer,
  type ServiceName,
  startServices,
  tearDown,
} from "./bench-lib";
import { statusBytes } from "./manifest-lib";
import { log, nowMs, positiveInt, round, sleep } from "./measure";
import { startReceiver } from "./webhooks-lib";

const SERVICES: ServiceName[] = ["gateway", "consensus-worker", "webhook-worker", "manifest-worker"];
const SAMPLE_MS = 5_000;
/** |slope| below this is "flat", MB/min */
const FLAT_MB_PER_MIN = 1;

interface Sample {
  /** minutes since the load started */
  t: number;
  mb: number;
}

/**
 * The lowest sample of each whole minute, at the minute's middle: the floor of the garbage collector's
 * sawtooth. A leak raises the floor; a heap that grows and is collected again does not.
 */
function minuteFloors(samples: Sample[]): Sample[] {
  const floors = new Map<number, number>();
  for (const x of samples) {
    const m = Math.floor(x.t);
    floors.set(m, Math.min(floors.get(m) ?? Number.POSITIVE_INFINITY, x.mb));
  }
  return [...floors].map(([m, mb]) => ({ t: m + 0.5, mb }));
}

/**
 * Theil–Sen slope of mb over t (MB/min): the median of the slopes between every pair of samples (Sen,
 * "Estimates of the regression coefficient based on Kendall's tau", JASA 1968). Unlike least squares it
 * is not tilted by one outlier: a single minute whose floor dropped (the heap returned memory to the
 * system; no leak makes RSS fall) moved the least-squares line of two soaks by 1–2 MB/min while the RSS
 * stood still for the last five minutes. NaN with fewer than 2 samples.
 */
function theilSen(samples: Sample[]): number {
  const slopes: number[] = [];
  for (let i = 0; i < samples.length; i++) {
    for (let j = i + 1; j < samples.length; j++) {
      const a = samples[i] as Sample;
      const b = samples[j] as Sample;
      if (b.t !== a.t) slopes.push((b.mb - a.mb) / (b.t - a.t));
    }
  }
  if (slopes.length === 0) return Number.NaN;
  slopes.sort((x, y) => x - y);
  const mid = slopes.length / 2;
  return Number.isInteger(mid) ? ((slopes[mid - 1] as number) + (slopes[mid] as number)) / 2 : (slopes[Math.floor(mid)] as number);
}

/** Least-squares slope of mb over t (MB/min); NaN with fewer than 2 samples. */
function slope(samples: Sample[]): number {
  const n = samples.length;
  if (n < 2) return Number.NaN;
  const mt = samples.reduce((s, x) => s + x.t, 0) / n;
  const mm = samples.reduce((s, x) => s + x.mb, 0) / n;
  let num = 0;
  let den = 0;
  for (const x of samples) {
    num += (x.t - mt) * (x.mb - mm);
    den += (x.t - mt) ** 2;
  }
  return den === 0 ? Number.NaN : num / den;
}

async function main(): Promise<void> {
  const loadAtStart = os.loadavg().map((l) => round(l, 2));
  const { values } = parseArgs({
    options: {
      minutes: { type: "string", default: "10" },
      "tasks-per-s": { type: "string", default: "10" },
      "labels-per-s": { type: "string", default: "40" },
      labelers: { type: "string", default: "40" },
      "log-level": { type: "string", default: "info" },
      "space-minutes": { type: "string" },
    },
    strict: true,
  });
  const minutes = positiveInt(values.minutes, "minutes");
  const tasksPerS = positiveInt(values["tasks-per-s"], "tasks-per-s");
  const labelsPerS = positiveInt(values["labels-per-s"], "labels-per-s");
  const labelerCount = positiveInt(values.labelers, "labelers");
  const logLevel = values["log-level"] ?? "info";
  const spaceMinutes = values["space-minutes"] === undefined ? null : positiveInt(values["space-minutes"], "space-minutes");

  const target = benchTarget("soak");
  const secret = randomBytes(24).toString("hex");
  const receiver = await startReceiver(secret);
  const children: ChildProcess[] = [];
  let pool: Pool | undefined;
  try {
    await migrateDatabase(target.databaseUrl);
    log(`database ${target.database} migrated`);
    pool = new Pool({ ...pgConfigFromUrl(target.databaseUrl), max: 1 });
    const services = await startServices(target, SERVICES, { LOG_LEVEL: logLevel });
    for (const s of services.values()) children.push(s.child);
    const gatewayPort = services.get("gateway")?.port as number;
    const base = `http://127.0.0.1:${gatewayPort}`;
    const customer = await productionCustomer(base, target.adminToken, "soak");
    await api(base, "POST", "/v1/webhooks", customer.key, { callback_url: receiver.url, secret });
    const labelers = await createLabelers(base, target.adminToken, labelerCount);
    log(`${SERVICES.join(", ")} started; ${minutes} min at ${tasksPerS} tasks/s and ${labelsPerS} labels/s`);

    const client = new JsonClient(gatewayPort, labelerCount + 16);
    const stats = newStats();
    const submissions = { ok: 0, failed: 0 };
    const idle: Labeler[] = [...labelers];
    const inFlight = new Set<Promise<void>>();
    const track = (p: Promise<void>): void => {
      const tracked = p.finally(() => inFlight.delete(tracked));
      inFlight.add(tracked);
    };
    const samples = new Map<ServiceName, Sample[]>(SERVICES.map((s) => [s, []]));
    const sampleRss = (t: number): void => {
      for (const [name, s] of services) {
        const pid = s.child.pid;
        const bytes = pid === undefined ? 0 : statusBytes(pid, "VmRSS");
        if (bytes > 0) samples.get(name)?.push({ t, mb: bytes / 2 ** 20 });
      }
    };

    const started = nowMs();
    const total = minutes * 60_000;
    let tasksDue = 0;
    let labelsDue = 0;
    let nextSample = 0;
    let submitted = 0;
    let paired = 0;
    let dropped = 0;
    while (nowMs() - started < total) {
      const elapsed = nowMs() - started;
      if (elapsed >= nextSample) {
        sampleRss(elapsed / 60_000);
        nextSample += SAMPLE_MS;
        if (nextSample % 60_000 === 0) {
          log(`minute ${nextSample / 60_000}: ${submissions.ok} tasks, ${stats.labels} labels, ${receiver.receipts.size} deliveries`);
        }
      }
      tasksDue = Math.floor((elapsed / 1000) * tasksPerS);
      labelsDue = Math.floor((elapsed / 1000) * labelsPerS);
      for (; submitted < tasksDue; submitted++) {
        const body = benchTask(submitted, submitted % 2 === 0 ? { callback_url: receiver.url } : {});
        if (spaceMinutes !== null) {
          // a new label space every `spaceMinutes` minutes: benchTask's spec, its question numbered
          const spec = body.label_spec as { question: string };
          body.label_spec = { ...spec, question: `${spec.question} (space ${Math.floor(elapsed / (spaceMinutes * 60_000))})` };
        }
        track(
          client.post("/v1/tasks", customer.key, body).then(
            (r) => {
              if (r.status === 202 || r.status === 201) submissions.ok++;
              else submissions.failed++;
            },
            () => {
              submissions.failed++;
            },
          ),
        );
      }
      for (; paired < labelsDue; paired++) {
        const l = idle.pop();
        if (!l) {
          dropped++;
          continue;
        }
        track(
          claimAndLabel(client, l, stats).then(
            () => {
              idle.push(l);
            },
            () => {
              stats.errors++;
              idle.push(l);
            },
          ),
        );
      }
      await sleep(100);
    }
    sampleRss(total / 60_000);
    await Promise.all(inFlight);
    client.close();
    const settled = await pool.query<{ n: string }>("SELECT count(*) AS n FROM tasks WHERE status = 'settled'");

    const window = Math.min(8, minutes * 0.8);
    const perService = Object.fromEntries(
      SERVICES.map((name) => {
        const s = samples.get(name) ?? [];
        const atMinute1 = s.find((x) => x.t >= 1) ?? s[0];
        const last = s.filter((x) => x.t >= minutes - window);
        // judged on the Theil–Sen slope of the per-minute floors (see minuteFloors and theilSen); the
        // least-squares slopes through the floors and through every sample are reported too
        const floors = minuteFloors(last);
        const k = theilSen(floors);
        return [
          name,
          {
            samples: s.length,
            rss_minute_1_mb: round(atMinute1?.mb ?? Number.NaN, 1),
            rss_end_mb: round(s[s.length - 1]?.mb ?? Number.NaN, 1),
            rss_max_mb: round(Math.max(...s.map((x) => x.mb)), 1),
            slope_mb_per_min: round(k, 2),
            slope_floors_least_squares_mb_per_min: round(slope(floors), 2),
            slope_all_samples_mb_per_min: round(slope(last), 2),
            flat: Math.abs(k) < FLAT_MB_PER_MIN,
            // every minute's floor, so that a long soak tells a leak from a late tooth of the sawtooth
            floors_mb: minuteFloors(s).map((f) => round(f.mb, 0)),
          },
        ];
      }),
    );
    const summary = {
      bench: "soak",
      date: new Date().toISOString(),
      machine: { cpu: os.cpus()[0]?.model, cores: os.cpus().length, node: process.version, load_average_at_start: loadAtStart },
      gateway_log_level: logLevel,
      minutes,
      load: { tasks_per_s: tasksPerS, labels_per_s: labelsPerS, labelers: labelerCount, space_minutes: spaceMinutes },
      work: {
        tasks_submitted: submissions.ok,
        task_submissions_failed: submissions.failed,
        labels: stats.labels,
        claims_empty: stats.empty,
        label_pairs_dropped: dropped,
        errors: stats.errors,
        statuses: stats.statuses,
        tasks_settled: Number(settled.rows[0]?.n),
        deliveries_received: receiver.receipts.size,
        duplicate_deliveries: receiver.duplicates,
        bad_signatures: receiver.badSignatures,
      },
      rss: {
        sample_every_s: SAMPLE_MS / 1000,
        slope_window_min: window,
        flat_below_mb_per_min: FLAT_MB_PER_MIN,
        services: perService,
        all_flat: Object.values(perService).every((s) => s.flat),
      },
      series: Object.fromEntries([...samples].map(([name, s]) => [name, s.map((x) => [round(x.t, 2), round(x.mb, 1)])])),
    };
    process.stdout.write(`${JSON.stringify(summary)}\n`);
  } finally {
    await pool?.end();
    await receiver.close();
    await tearDown(target, children);
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
