/**
 * The chaos suite's load: a replay of real crowd data through @labelgate/sdk that records everything the
 * gateway accepted. The data is the "Dog" dataset of data/crowd/dog, shipped in this repository (source: its
 * README-source.txt: Zhou, Platt, Basu, Mao, NIPS 2012, as packaged by Zheng et al., PVLDB 10(5) 2017,
 * github.com/zhydhkcws/zhydhkcws.github.io crowd_truth_inference/datasets.zip): 807 ImageNet dog images,
 * 4 breeds, 10 AMT answers each.
 *
 * Tasks are submitted in batches (each with an idempotency key, retried until the gateway answers 2xx, so
 * a batch is accepted once); every item's recorded answers are fed through claims and labels by one
 * labeler per crowd worker until the task needs no more. Requests that fail for an outage (no answer,
 * 5xx) are retried with a short backoff until `retryForMs` passes; a label whose answer was lost is asked
 * again on the same claim (201: recorded now; 409 `claim already labeled`: the lost one was recorded).
 */
import { randomBytes } from "node:crypto";
import path from "node:path";
import { dedupeWorkers, distinctLabels, groupByItem, loadDataset } from "@labelgate/replay";
import { ConflictError, ConnectionError, LabelgateClient, LabelgateError, type RecordedLabel, type TaskRequest } from "@labelgate/sdk";
import { ADMIN_TOKEN } from "../system";

export const DOG_DATASET = path.resolve(__dirname, "../../data/crowd/dog");

export interface Item {
  item: string;
  answers: { worker: string; label: string }[];
}

/** The first `count` items of the Dog dataset (after `skip`), each with its answers in recorded order. */
export function dogItems(count: number, skip = 0): { items: Item[]; options: string[] } {
  const dataset = loadDataset(DOG_DATASET);
  const options = distinctLabels(dataset.answers);
  const items = [...groupByItem(dataset.answers)]
    .slice(skip, skip + count)
    .map(([item, answers]) => ({ item, answers: dedupeWorkers(answers).map((a) => ({ worker: a.worker, label: a.label })) }));
  return { items, options };
}

/** A timed response of the gateway, for latency figures during an outage. */
export interface Sample {
  at: number;
  ms: number;
  /** HTTP status; 0 = no answer */
  status: number;
  what: string;
}

/** What the gateway accepted, as the client saw it. */
export class LoadRecord {
  /** every task of a 2xx batch submission */
  readonly acceptedTasks = new Set<string>();
  /** labels answered 201: label id → its claim and task */
  readonly labels201 = new Map<string, { claimId: string; taskId: string }>();
  /** claims whose label request got no definite answer at first (later settled by a retry or not) */
  readonly uncertainClaims = new Set<string>();
  /** claims whose lost label turned out to be recorded (409 `claim already labeled` on the retry) */
  readonly recordedUnseen = new Set<string>();
  /** every response (or failure) with its latency */
  readonly samples: Sample[] = [];
  /** failed attempts that were retried, by reason */
  readonly retries = new Map<string, number>();
  /** items whose task reported labels_needed 0 (or closed) */
  decided = 0;

  retry(reason: string): void {
    this.retries.set(reason, (this.retries.get(reason) ?? 0) + 1);
  }
}

export interface Customer {
  id: string;
  key: string;
  client: LabelgateClient;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** A fault of the infrastructure (no answer, 5xx): worth retrying. Anything else is thrown. */
function transient(err: unknown): string | undefined {
  if (err instanceof ConnectionError) return "no answer";
  if (err instanceof LabelgateError && err.status >= 500) return String(err.status);
  return undefined;
}

/** One client of the chaos load, its labelers and its record. */
export class Load {
  readonly record = new LoadRecord();
  private readonly admin: LabelgateClient;
  private readonly labelers = new Map<string, LabelgateClient>();

  constructor(
    readonly baseUrl: string,
    /** how long a request is retried through an outage before the load fails */
    readonly retryForMs = 60_000,
  ) {
    this.admin = new LabelgateClient({ baseUrl, adminToken: ADMIN_TOKEN, maxAttempts: 1, timeoutMs: 15_000 });
  }

  /** Runs `fn`, timing it; transient failures are retried with backoff until `retryForMs`. */
  async call<T>(what: string, fn: () => Promise<T>): Promise<T> {
    const deadline = Date.now() + this.retryForMs;
    let backoff = 100;
    for (;;) {
      const t0 = performance.now();
      try {
        const value = await fn();
        this.record.samples.push({ at: Date.now(), ms: performance.now() - t0, status: 200, what });
        return value;
      } catch (err) {
        const status = err instanceof LabelgateError ? err.status : -1;
        this.record.samples.push({ at: Date.now(), ms: performance.now() - t0, status, what });
        const reason = transient(err);
        if (reason === undefined || Date.now() > deadline) throw err;
        this.record.retry(`${what}: ${reason}`);
        await sleep(backoff);
        backoff = Math.min(backoff * 2, 1000);
      }
    }
  }

  /** Registers a customer with `quota` labels of quota. */
  async customer(quota: number): Promise<Customer> {
    const email = `chaos-${Date.now()}-${randomBytes(3).toString("hex")}@example.com`;
    const created = await this.call("register", () => this.admin.customers.register({ name: "chaos", email }));
    await this.call("quota", () => this.admin.admin.updateCustomer(created.customer_id, { label_quota: quota }));
    return {
      id: created.customer_id,
      key: created.api_key,
      client: this.admin.withCredentials({ apiKey: created.api_key }),
    };
  }

  /** One labeler per crowd worker of `items` (created once per Load). */
  async ensureLabelers(items: readonly Item[]): Promise<void> {
    const workers = [...new Set(items.flatMap((i) => i.answers.map((a) => a.worker)))].filter((w) => !this.labelers.has(w));
    for (const w of workers) {
      const created = await this.call("labeler", () => this.admin.admin.createLabeler(`dog-worker-${w}`));
      this.labelers.set(w, this.admin.withCredentials({ labelerKey: created.api_key }));
    }
  }

  /**
   * Submits `items` as tasks in batches of `batchSize` and labels them with `concurrency` items at a time.
   * A batch is submitted while fewer than two batches wait for labels, so submissions and labels
   * interleave for the whole run. `onProgress` sees the labels recorded so far (to time a fault).
   */
  async run(
    customer: Customer,
    items: readonly Item[],
    options: string[],
    opts: { batchSize?: number; concurrency?: number; tag?: string } = {},
  ): Promise<void> {
    await this.ensureLabelers(items);
    const batchSize = opts.batchSize ?? 25;
    const concurrency = opts.concurrency ?? 8;
    const tag = opts.tag ?? randomBytes(3).toString("hex");
    const ready: { item: Item; taskId: string }[] = [];
    let submitting = true;
    const submitter = async () => {
      try {
        for (let start = 0; start < items.length; start += batchSize) {
          while (ready.length > 2 * batchSize) await sleep(20);
          const chunk = items.slice(start, start + batchSize);
          const tasks: TaskRequest[] = chunk.map((it) => this.taskOf(it, options, tag));
          const key = `chaos-${tag}-${start}`;
          const accepted = await this.call("batch", () => customer.client.tasks.createBatch({ tasks, idempotency_key: key }));
          accepted.task_ids.forEach((id, i) => {
            this.record.acceptedTasks.add(id);
            ready.push({ item: chunk[i] as Item, taskId: id });
          });
        }
      } finally {
        submitting = false;
      }
    };
    const labeler = async () => {
      for (;;) {
        const next = ready.shift();
        if (!next) {
          if (!submitting) return;
          await sleep(10);
          continue;
        }
        await this.labelTask(customer, next.taskId, next.item);
      }
    };
    await Promise.all([submitter(), ...Array.from({ length: concurrency }, labeler)]);
  }

  /** The task of an item (type, data URL, label spec; threshold 3, max_labels 7). */
  taskOf(it: Item, options: string[], tag: string): TaskRequest {
    return {
      type: "image_classification",
      data_url: `https://data.example/dog/${encodeURIComponent(it.item)}?run=${tag}`,
      label_spec: { question: "Which dog breed is this?", options },
      consensus_threshold: 3,
      max_labels: 7,
      metadata: { item: it.item },
    };
  }

  /**
   * Feeds an item's answers (recorded order) through claims and labels until the task needs no more
   * labels. A worker whose claim is refused (204: no slot free) is tried again in the next round; one
   * whose earlier claim still holds gets that claim back (201) and labels it.
   */
  async labelTask(customer: Customer, taskId: string, it: Item): Promise<void> {
    const done = new Set<string>();
    const deadline = Date.now() + 120_000;
    for (;;) {
      for (const answer of it.answers) {
        if (done.has(answer.worker)) continue;
        const client = this.labelers.get(answer.worker) as LabelgateClient;
        const claim = await this.call("claim", () => client.labeling.claim(taskId));
        if (claim === null) continue;
        const outcome = await this.label(client, claim.claim_id, taskId, answer.label);
        if (outcome === "closed" || outcome === 0) {
          this.record.decided++;
          return;
        }
        if (outcome !== "expired") done.add(answer.worker);
      }
      // every worker left was refused a claim: the task may need no more labels (a lost label decided it)
      const task = await this.call("task", () => customer.client.tasks.get(taskId));
      if (task.status !== "pending" && task.status !== "labeling") {
        this.record.decided++;
        return;
      }
      if (Date.now() > deadline) throw new Error(`task ${taskId} (item ${it.item}) still needs labels after 120 s`);
      await sleep(300);
    }
  }

  /**
   * Labels a claim. @returns labels_needed after it (a number), "recorded" when a lost request turned out
   * to be recorded, "expired" when the claim expired first, "closed" when the task takes no more labels.
   */
  private async label(
    client: LabelgateClient,
    claimId: string,
    taskId: string,
    value: string,
  ): Promise<number | "recorded" | "expired" | "closed"> {
    const deadline = Date.now() + this.retryForMs;
    let lost = false;
    for (;;) {
      const t0 = performance.now();
      try {
        const recorded: RecordedLabel = await client.labeling.label(claimId, value);
        this.record.samples.push({ at: Date.now(), ms: performance.now() - t0, status: 201, what: "label" });
        this.record.labels201.set(recorded.label_id, { claimId, taskId });
        return recorded.labels_needed;
      } catch (err) {
        const status = err instanceof LabelgateError ? err.status : -1;
        this.record.samples.push({ at: Date.now(), ms: performance.now() - t0, status, what: "label" });
        if (err instanceof ConflictError) {
          if (err.error === "claim already labeled" && lost) {
            this.record.recordedUnseen.add(claimId);
            return "recorded";
          }
          if (err.error === "claim expired") return "expired";
          if (err.error === "task no longer accepts labels") return "closed";
          throw err;
        }
        const reason = transient(err);
        if (reason === undefined || Date.now() > deadline) throw err;
        // the request may or may not have been recorded: ask again on the same claim
        lost = true;
        this.record.uncertainClaims.add(claimId);
        this.record.retry(`label: ${reason}`);
        await sleep(200);
      }
    }
  }
}

/**
 * Runs `fault` once the load has `atLabels` labels answered 201 (so the fault hits a running load), and
 * waits for both. @returns what `fault` returned.
 */
export async function faultDuring<T>(load: Load, run: Promise<void>, atLabels: number, fault: () => Promise<T>): Promise<T> {
  let finished = false;
  const running = run.finally(() => {
    finished = true;
  });
  const injected = (async () => {
    while (load.record.labels201.size < atLabels) {
      if (finished) throw new Error(`the load ended with ${load.record.labels201.size} labels, before the fault at ${atLabels}`);
      await sleep(20);
    }
    return fault();
  })();
  const [value] = await Promise.all([injected, running]);
  return value;
}

/** A customer of `load` with a webhook registered to `receiver` (its task.settled events go there). */
export async function customerWithWebhook(load: Load, receiver: { url: string; secret: string }, quota: number): Promise<Customer> {
  const customer = await load.customer(quota);
  await load.call("webhook", () => customer.client.webhooks.create({ callback_url: receiver.url, secret: receiver.secret }));
  return customer;
}
