import { createPostgresBackend, DelayedError, ErrorCode, type Job, Queue, Worker } from "bullmq";
import { Redis } from "ioredis";
import { catalog, type Handler, type HandlersFor, type Payload, type QueueKey, type ServiceName } from "./catalog";

export type QueueBackendConfig =
  /** Redis: every key under `prefix` */
  | { kind: "redis"; url: string; prefix: string }
  /**
   * BullMQ's Postgres backend: every table in `schema` of the database at `url`. `workerPoolMax` caps the pg
   * pool of each worker (otherwise its concurrency + 2), so a process's pools fit the server's
   * max_connections (the runtime plans it: @labelgate/runtime `planPools`).
   */
  | { kind: "postgres"; url: string; schema: string; workerPoolMax?: number };

/**
 * Thrown by a handler to run its job again later without spending an attempt (e.g. a webhook already has
 * its share of requests in flight). `delayMs`: how long until the job is eligible again.
 */
export class DeferJob extends Error {
  override name = "DeferJob";
  constructor(readonly delayMs: number) {
    super(`deferred by ${delayMs} ms`);
  }
}

/** Thrown when the queue backend does not answer within the enqueue timeout. */
export class QueueUnavailableError extends Error {
  override name = "QueueUnavailableError";
  /** `enqueueMany` only: the payloads added before the call that failed (0 otherwise) */
  readonly added: number;
  constructor(message: string, options: { cause?: unknown; added?: number } = {}) {
    super(message, { cause: options.cause });
    this.added = options.added ?? 0;
  }
}

interface StoredJob {
  getState(): Promise<string>;
  retry(state?: "failed" | "completed"): Promise<void>;
  remove(): Promise<void>;
}

interface ProducerQueue {
  add(name: string, data: unknown, opts: object): Promise<unknown>;
  addBulk(jobs: { name: string; data: unknown; opts: object }[]): Promise<unknown>;
  getJob(id: string): Promise<StoredJob | undefined>;
  getJobCounts(...types: string[]): Promise<Record<string, number>>;
  on(event: "error", listener: (err: Error) => void): unknown;
  upsertJobScheduler(id: string, repeat: { every: number }, template: { name: string; data: unknown; opts?: object }): Promise<unknown>;
  getJobScheduler(id: string): Promise<unknown>;
  close(): Promise<void>;
}

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new QueueUnavailableError(`${what} timed out after ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/**
 * pg pool size of each producer queue on the Postgres backend (an add, a count and a scheduler check at
 * once); the runtime's pool plan counts it (@labelgate/runtime `planPools`).
 */
export const PRODUCER_POOL_MAX = 2;

/** Jobs per `addBulk` call of `QueueClient.enqueueMany`: one Redis MULTI (or Postgres transaction) each. */
export const ENQUEUE_CHUNK = 500;

/**
 * Runs `call` until it does not fail with a QueueUnavailableError, waiting 100 ms, then twice as long each
 * time up to 2 s, for at most `totalMs` in all. @throws the last error once `totalMs` has passed; any other
 * error at once
 */
export async function retryUnavailable<T>(call: () => Promise<T>, totalMs: number): Promise<T> {
  const deadline = Date.now() + totalMs;
  let wait = 100;
  for (;;) {
    try {
      return await call();
    } catch (err) {
      if (!(err instanceof QueueUnavailableError) || Date.now() + wait > deadline) throw err;
      await new Promise((resolve) => setTimeout(resolve, wait));
      wait = Math.min(wait * 2, 2000);
    }
  }
}

function postgresConnection(config: { url: string; schema: string; workerPoolMax?: number }, max: number) {
  return { connectionString: config.url, schema: config.schema, migrate: true, max };
}

/**
 * Producer side: typed `enqueue` over the catalog. On Redis the connection fails fast
 * (no offline queue, one retry), so a dead Redis turns into a QueueUnavailableError within `timeoutMs`.
 */
export class QueueClient {
  private readonly queues = new Map<QueueKey, ProducerQueue>();
  private readonly redis: Redis | undefined;
  /** the connection was lost (or never made) and is not back: calls fail at once instead of waiting */
  private down = false;

  /**
   * @param timeoutMs how long one call may take before it fails as unavailable (requests fail fast)
   * @param startRetryMs how long the calls a process makes while it starts (`schedule`) retry a backend that
   *   is slow or not there yet, with backoff (100 ms doubling to 2 s), before failing (default 30 s)
   */
  constructor(
    private readonly config: QueueBackendConfig,
    private readonly timeoutMs = 2000,
    private readonly startRetryMs = 30_000,
  ) {
    if (config.kind === "redis") {
      this.redis = new Redis(config.url, {
        maxRetriesPerRequest: 1,
        enableOfflineQueue: false,
        connectTimeout: timeoutMs,
        retryStrategy: (times) => Math.min(times * 200, 2000),
      });
      // Connection errors surface on commands; the client reconnects by itself.
      this.redis.on("error", () => {
        this.down = true;
      });
      this.redis.on("close", () => {
        this.down = true;
      });
      this.redis.on("ready", () => {
        this.down = false;
      });
    }
  }

  /**
   * Waits (up to the timeout) for the first Redis connection to be ready: with no offline queue, a command
   * sent while it is still connecting would fail even though Redis is up. Once a connection failed or was
   * lost, calls fail at once until the client has reconnected (an outage answers 503 fast, never hangs).
   */
  private async ready(): Promise<void> {
    const redis = this.redis;
    if (!redis || redis.status === "ready") return;
    if (redis.status === "end") throw new QueueUnavailableError("queue client is closed");
    if (this.down) throw new QueueUnavailableError(`Redis unavailable (${redis.status})`);
    await withTimeout(new Promise<void>((resolve) => redis.once("ready", () => resolve())), this.timeoutMs, "connect to Redis");
  }

  private queue(key: QueueKey): ProducerQueue {
    let q = this.queues.get(key);
    if (!q) {
      const name = catalog[key].name;
      if (this.config.kind === "redis") {
        q = new Queue(name, { connection: this.redis as Redis, prefix: this.config.prefix, skipWaitingForReady: true });
      } else {
        q = new Queue(name, { connection: postgresConnection(this.config, PRODUCER_POOL_MAX) }, createPostgresBackend);
      }
      // Connection errors surface as QueueUnavailableError on the call that needed the queue.
      q.on("error", () => undefined);
      this.queues.set(key, q);
    }
    return q;
  }

  /**
   * Adds one job with the catalog's job id and retry policy. The payload is validated against the schema.
   * @throws QueueUnavailableError when the backend does not answer in time; ZodError on a bad payload.
   */
  async enqueue<K extends QueueKey>(key: K, payload: Payload<K>, overrides: { attempts?: number; delay?: number } = {}): Promise<void> {
    const spec = catalog[key];
    const data = spec.payload.parse(payload);
    const jobId = (spec.jobId as (p: Payload<K>) => string)(data as Payload<K>);
    try {
      await this.ready();
      await withTimeout(
        this.queue(key).add(spec.name, data, { ...spec.jobOptions, ...overrides, jobId }),
        this.timeoutMs,
        `enqueue ${spec.name}`,
      );
    } catch (err) {
      throw new QueueUnavailableError(`enqueue ${spec.name} failed: ${(err as Error).message}`, { cause: err });
    }
  }

  /**
   * Adds one job per payload to one queue, like `enqueue`, in round trips of at most `ENQUEUE_CHUNK` jobs
   * (BullMQ `addBulk`): a batch of 1,000 tasks that each need an item fetch is 2 calls, not 1,000. A payload
   * whose job id already exists is a no-op, as with `enqueue`. Each chunk has the timeout of one call.
   * @returns how many payloads were added (all of them, unless it throws)
   * @throws QueueUnavailableError when a chunk's call fails or times out, carrying `added` = payloads of the
   *   chunks before it; ZodError on a bad payload (before anything is sent).
   */
  async enqueueMany<K extends QueueKey>(
    key: K,
    payloads: readonly Payload<K>[],
    overrides: { attempts?: number; delay?: number } = {},
  ): Promise<number> {
    const spec = catalog[key];
    const jobs = payloads.map((payload) => {
      const data = spec.payload.parse(payload);
      const jobId = (spec.jobId as (p: Payload<K>) => string)(data as Payload<K>);
      return { name: spec.name, data, opts: { ...spec.jobOptions, ...overrides, jobId } };
    });
    let added = 0;
    for (let i = 0; i < jobs.length; i += ENQUEUE_CHUNK) {
      const chunk = jobs.slice(i, i + ENQUEUE_CHUNK);
      try {
        await this.ready();
        await withTimeout(this.queue(key).addBulk(chunk), this.timeoutMs, `enqueue ${spec.name} (${chunk.length} jobs)`);
      } catch (err) {
        throw new QueueUnavailableError(`enqueue ${spec.name} failed after ${added} of ${jobs.length} jobs: ${(err as Error).message}`, {
          cause: err,
          added,
        });
      }
      added += chunk.length;
    }
    return added;
  }

  /**
   * Makes sure the work of `payload` is queued (reconciliation): adds it when no job with its id exists,
   * retries it when that job failed or completed, leaves it alone while it is waiting, delayed or active.
   * `raced`: the job left the state just read before the retry reached it (BullMQ's JobNotInState or
   * JobNotExist: another requeue retried it, or it was removed): someone else moved it, nothing was done.
   * @returns what was done. @throws QueueUnavailableError.
   */
  async requeue<K extends QueueKey>(
    key: K,
    payload: Payload<K>,
    overrides: { attempts?: number; delay?: number } = {},
  ): Promise<"added" | "retried" | "pending" | "raced"> {
    const spec = catalog[key];
    const jobId = (spec.jobId as (p: Payload<K>) => string)(spec.payload.parse(payload) as Payload<K>);
    const run = async () => {
      const job = await this.queue(key).getJob(jobId);
      if (!job) {
        await this.enqueue(key, payload, overrides);
        return "added" as const;
      }
      const state = await job.getState();
      if (state === "failed" || state === "completed") {
        try {
          await job.retry(state);
        } catch (err) {
          const code = (err as { code?: unknown }).code;
          if (code === ErrorCode.JobNotInState || code === ErrorCode.JobNotExist) return "raced" as const;
          throw err;
        }
        return "retried" as const;
      }
      if (state === "unknown") {
        await this.enqueue(key, payload, overrides);
        return "added" as const;
      }
      return "pending" as const;
    };
    try {
      await this.ready();
      return await withTimeout(run(), this.timeoutMs * 2, `requeue ${spec.name}`);
    } catch (err) {
      if (err instanceof QueueUnavailableError) throw err;
      throw new QueueUnavailableError(`requeue ${spec.name} failed: ${(err as Error).message}`, { cause: err });
    }
  }

  /** Job counts by state for one queue (waiting, active, delayed, failed, completed). */
  async counts(key: QueueKey): Promise<Record<string, number>> {
    await this.ready();
    return withTimeout(
      this.queue(key).getJobCounts("waiting", "active", "delayed", "failed", "completed", "prioritized"),
      this.timeoutMs,
      "job counts",
    );
  }

  /**
   * Registers (idempotently) a repeating job: one run per `everyMs` across all replicas. Called while a
   * process starts: a backend that does not answer within the timeout (a loaded machine, Redis still
   * starting) is tried again with backoff for up to `startRetryMs` (issue 28 item 7: a start failed with
   * "schedule timed out after 1000 ms"). @throws QueueUnavailableError once that bound has passed
   */
  async schedule<K extends QueueKey>(key: K, everyMs: number, payload: Payload<K>): Promise<void> {
    await retryUnavailable(() => this.scheduleOnce(key, everyMs, payload), this.startRetryMs);
  }

  private async scheduleOnce<K extends QueueKey>(key: K, everyMs: number, payload: Payload<K>): Promise<void> {
    const spec = catalog[key];
    await this.ready();
    await withTimeout(
      this.queue(key).upsertJobScheduler(
        `${spec.name}-scheduler`,
        { every: everyMs },
        { name: spec.name, data: payload, opts: spec.jobOptions },
      ),
      this.timeoutMs,
      "schedule",
    );
  }

  /**
   * Keeps a repeating job registered: registers it now, then checks every `everyMs` that its scheduler
   * still exists and registers it again when it does not (a Redis that restarted without its data lost
   * it, and with it every later run). `onError` receives the failures of a check (the backend is down:
   * the next check tries again). @returns a function that stops the checks.
   */
  keepScheduled<K extends QueueKey>(key: K, everyMs: number, payload: Payload<K>, onError: (err: Error) => void): () => void {
    const spec = catalog[key];
    let running = false;
    const check = async () => {
      if (running) return;
      running = true;
      try {
        await this.ready();
        const found = await withTimeout(this.queue(key).getJobScheduler(`${spec.name}-scheduler`), this.timeoutMs, "scheduler check");
        if (!found) await this.scheduleOnce(key, everyMs, payload);
      } catch (err) {
        onError(err as Error);
      } finally {
        running = false;
      }
    };
    const timer = setInterval(() => void check(), everyMs);
    timer.unref();
    return () => clearInterval(timer);
  }

  /** Readiness: the backend answers within the timeout. */
  async ping(): Promise<boolean> {
    try {
      if (this.redis) {
        await this.ready();
        return (await withTimeout(this.redis.ping(), this.timeoutMs, "ping")) === "PONG";
      }
      await this.counts("consensus");
      return true;
    } catch {
      return false;
    }
  }

  /**
   * The BullMQ `Queue` of a catalog queue (created once the backend is connected, closed by `close()`): for
   * tools that need BullMQ's own API, such as the bull-board dashboard. On either backend.
   * @throws QueueUnavailableError when Redis does not connect within the timeout.
   */
  async bullmqQueue(key: QueueKey): Promise<Queue> {
    await this.ready();
    return this.queue(key) as unknown as Queue;
  }

  async close(): Promise<void> {
    await Promise.all([...this.queues.values()].map((q) => q.close()));
    this.queues.clear();
    if (this.redis) this.redis.disconnect();
  }
}

export interface WorkerOptions {
  /** jobs processed at once per queue, per process */
  concurrency?: Partial<Record<QueueKey, number>>;
  /** called when a job fails (it is retried per the catalog policy) */
  onFailed?: (queue: QueueKey, jobId: string | undefined, err: Error) => void;
  /** custom backoff strategies (BullMQ `settings.backoffStrategy`), by queue */
  backoffStrategy?: Partial<
    Record<QueueKey, (attemptsMade: number, type: string | undefined, err: Error | undefined, data: unknown) => number>
  >;
  /**
   * QUEUE_LOCK_DURATION_MS: how long a job's lock lasts without renewal (renewed every half of it), ms, and
   * the interval of BullMQ's stalled-job check. A job whose process died (kill -9, OOM) runs again within
   * about twice this (default BullMQ's 30 s).
   */
  lockDurationMs?: number;
}

export interface RunningWorkers {
  /** Stops taking jobs and waits for the active ones to finish (however long they take). */
  close(): Promise<void>;
  /**
   * Graceful shutdown within a bound: stops taking jobs and waits up to `boundMs` for the active ones;
   * jobs still running then are moved back to their queue's waiting list (another replica runs them at
   * once, rather than after BullMQ's stalled-job detection), and the connections are closed without waiting
   * for them. Handlers are idempotent, so a job returned while its handler still ran is safe to run again.
   * @returns how many jobs were returned to the queue (0 when every active job finished in time).
   */
  closeWithin(boundMs: number): Promise<{ returned: number }>;
  /** Whether every worker still runs its fetch loop (false once closing, or when a worker stopped on its own). */
  running(): boolean;
}

interface ClosableWorker {
  close(): Promise<void>;
  pause(doNotWaitActive?: boolean): Promise<void>;
  resume(): Promise<void>;
  readonly closing: Promise<void> | null | undefined;
  /** resolves once the worker's connections are initialized (BullMQ's Worker.waitUntilReady) */
  waitUntilReady(): Promise<unknown>;
  isRunning(): boolean;
  on(event: "failed", cb: (job: Job | undefined, err: Error) => void): unknown;
  on(event: "error", cb: (err: Error) => void): unknown;
}

/** Errors of one worker within `SPIN_WINDOW_MS` that make it a spin (a fetch that fails without any wait). */
export const SPIN_ERRORS = 20;
const SPIN_WINDOW_MS = 1000;
/** The pause of a spinning worker: 1 s, doubled at each spin within a minute of the last, 30 s at most. */
const SPIN_PAUSE_MS = { first: 1000, max: 30_000 };

/**
 * Whether `err` is BullMQ's "could not renew lock for job <id>" for a job whose handler no longer runs in this
 * process (`running(id)` false). BullMQ 6.7 renews the locks of the jobs it tracks with one query every quarter
 * of the lock duration. A job whose handler returns while that query is in flight is completed at the same time,
 * which deletes its lock; on the Postgres backend, whose queries go through a pool, the completion can land
 * first, and the renewal then "fails" for a job already done (the likely cause of "could not renew lock for job
 * event-evt_…" in the standalone stack under load, decision 0336). A lock really lost while the handler
 * still runs stays an error, and so does a completion that finds its lock gone ("Missing lock", reported on its
 * own path).
 */
export function isRenewalOfFinishedJob(err: Error, running: (jobId: string) => boolean): boolean {
  const match = /^could not renew lock for job (.+)$/.exec(err.message);
  return match !== null && !running(match[1] as string);
}

/**
 * Reports a worker's errors (`report`), and stops it spinning. BullMQ 6.7 takes a failed fetch whose error is
 * not one it knows as a connection error (e.g. a pg client left unusable when Postgres died: "Client has
 * encountered a connection error and is not queryable") as a reason to fetch again at once: the fetch fails
 * again without any I/O, and the worker loops in microtasks, starving the event loop. Timers, signals, child
 * exits and log writes then never run: the process can neither stop nor say why, and its unwritten log lines
 * grow its memory (seen: 4 GB in 8 minutes of `pnpm start` after its embedded Postgres was killed). Past
 * `SPIN_ERRORS` errors within a second the worker is paused (which ends its fetch loop), reported once, and
 * resumed after 1 s, doubling to 30 s while it keeps spinning. Errors for which `benign` is true are neither
 * reported nor counted.
 */
function guardAgainstSpin(worker: ClosableWorker, queue: string, report: (err: Error) => void, benign: (err: Error) => boolean): void {
  let recent: number[] = [];
  let paused = false;
  let pauseMs = SPIN_PAUSE_MS.first;
  let lastSpinAt = 0;
  worker.on("error", (err) => {
    if (paused || benign(err)) return;
    const now = Date.now();
    recent = recent.filter((t) => now - t < SPIN_WINDOW_MS);
    recent.push(now);
    if (recent.length < SPIN_ERRORS) {
      report(err);
      return;
    }
    // a spin: stop the fetch loop now (pause sets its flag before its first await), resume after a pause
    paused = true;
    recent = [];
    pauseMs = now - lastSpinAt < 60_000 ? Math.min(pauseMs * 2, SPIN_PAUSE_MS.max) : SPIN_PAUSE_MS.first;
    lastSpinAt = now;
    report(
      new Error(
        `queue worker ${queue} failed ${SPIN_ERRORS} times within ${SPIN_WINDOW_MS} ms without waiting (last: ${err.message}): paused for ${pauseMs} ms`,
        { cause: err },
      ),
    );
    worker.pause(true).catch(() => undefined);
    setTimeout(() => {
      paused = false;
      if (!worker.closing) worker.resume().catch(() => undefined);
    }, pauseMs).unref();
  });
}

/**
 * Starts one BullMQ worker per queue of `handlers`. Each job's data is validated against the catalog schema
 * before the handler runs; handlers must be idempotent (jobs are delivered at least once).
 */
export function startWorkers<S extends ServiceName>(
  config: QueueBackendConfig,
  handlers: HandlersFor<S>,
  options: WorkerOptions = {},
): RunningWorkers {
  const workers: ClosableWorker[] = [];
  const connections: Redis[] = [];
  // jobs whose handler is running, with their lock token (closeWithin returns them to the queue)
  const active = new Map<Job, { key: QueueKey; token: string | undefined }>();
  for (const key of Object.keys(handlers) as QueueKey[]) {
    const spec = catalog[key];
    const handler = (handlers as unknown as Record<QueueKey, Handler<QueueKey>>)[key];
    const processor = async (job: Job, token?: string) => {
      active.set(job, { key, token });
      const payload = spec.payload.parse(job.data) as Payload<QueueKey>;
      try {
        await handler(payload, { jobId: job.id ?? "", attemptsMade: job.attemptsMade, maxAttempts: job.opts.attempts ?? 1 });
      } catch (err) {
        if (!(err instanceof DeferJob)) throw err;
        // the handler is done: moving the job deletes its lock, which a renewal in flight may then miss
        active.delete(job);
        // Back to the delayed set without spending an attempt (BullMQ's manual delay pattern).
        try {
          await job.moveToDelayed(Date.now() + err.delayMs, token);
        } catch (moveErr) {
          // The job's lock is gone (it stalled: a blocked event loop, a Redis blip): BullMQ's stalled-job
          // check already runs it again, without spending an attempt. Failing it here would spend one.
          options.onFailed?.(key, job.id, moveErr as Error);
        }
        throw new DelayedError();
      } finally {
        active.delete(job);
      }
    };
    const concurrency = options.concurrency?.[key] ?? 8;
    const strategy = options.backoffStrategy?.[key];
    const settings = strategy
      ? { backoffStrategy: (n: number, type?: string, err?: Error, job?: { data?: unknown }) => strategy(n, type, err, job?.data) }
      : undefined;
    // the same lock duration and stalled-job interval on either backend (standalone runs on Postgres)
    const lock =
      options.lockDurationMs === undefined ? {} : { lockDuration: options.lockDurationMs, stalledInterval: options.lockDurationMs };
    let worker: ClosableWorker;
    if (config.kind === "redis") {
      // Workers block on Redis: BullMQ requires maxRetriesPerRequest null on their connection.
      const connection = new Redis(config.url, { maxRetriesPerRequest: null });
      connections.push(connection);
      worker = new Worker(spec.name, processor, { connection, prefix: config.prefix, concurrency, settings, ...lock });
    } else {
      worker = new Worker(
        spec.name,
        processor,
        {
          connection: postgresConnection(config, Math.min(concurrency + 2, config.workerPoolMax ?? Number.POSITIVE_INFINITY)),
          concurrency,
          settings,
          ...lock,
        },
        createPostgresBackend,
      );
    }
    worker.on("failed", (job, err) => options.onFailed?.(key, job?.id, err));
    guardAgainstSpin(
      worker,
      spec.name,
      (err) => options.onFailed?.(key, undefined, err),
      (err) => isRenewalOfFinishedJob(err, (jobId) => [...active.keys()].some((job) => job.id === jobId)),
    );
    workers.push(worker);
  }
  return {
    running: () => workers.every((w) => w.isRunning()),
    close: async () => {
      // A worker closed while it still initializes its connections can start its fetch loop afterwards and
      // never stop (seen in a jest worker: a consensus worker spinning, its blocking connection still
      // "initializing"): let each finish initializing (bounded) before closing it.
      await Promise.all(
        workers.map(async (w) => {
          await withTimeout(w.waitUntilReady(), 5000, "worker start").catch(() => undefined);
          await w.close();
        }),
      );
      for (const c of connections) c.disconnect();
    },
    closeWithin: async (boundMs) => {
      let timer: NodeJS.Timeout | undefined;
      const drained = await Promise.race([
        Promise.all(workers.map((w) => w.close())).then(() => true),
        new Promise<false>((resolve) => {
          timer = setTimeout(() => resolve(false), boundMs);
        }),
      ]).finally(() => clearTimeout(timer));
      let returned = 0;
      if (!drained) {
        const jobs = [...active];
        active.clear();
        await Promise.all(
          jobs.map(async ([job, { key, token }]) => {
            try {
              await job.moveToWait(token);
              returned++;
            } catch (err) {
              // its lock is gone (already finished or taken over): BullMQ's stalled-job check has it
              options.onFailed?.(key, job.id, err as Error);
            }
          }),
        );
      }
      for (const c of connections) c.disconnect();
      return { returned };
    },
  };
}

/**
 * Deletes every Redis key under `prefix:` (SCAN + UNLINK, 1,000 at a time): a test run's or a benchmark's
 * queues, rate-limit counters and job data. @returns how many keys were deleted.
 */
export async function deleteKeysWithPrefix(redisUrl: string, prefix: string): Promise<number> {
  const redis = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
  try {
    let cursor = "0";
    let deleted = 0;
    do {
      const [next, keys] = await redis.scan(cursor, "MATCH", `${prefix}:*`, "COUNT", 1000);
      cursor = next;
      if (keys.length > 0) deleted += await redis.unlink(...keys);
    } while (cursor !== "0");
    return deleted;
  } finally {
    redis.disconnect();
  }
}
