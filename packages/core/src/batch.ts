/**
 * Adaptive micro-batching of SQL (group commit): concurrent calls of one process share statements.
 * A call waits at most for the batch already running (or until the current I/O phase ends): while
 * `maxInFlight` batches run, new calls queue up and leave together as the next batch. An idle worker
 * therefore runs each call alone, without delay, and a loaded one runs a few statements for many jobs
 * (bench/webhooks: one batch in flight gave larger batches, less CPU per delivery and more deliveries/s
 * than two).
 */
export interface BatcherOptions<I> {
  /** most items of one batch (default 256) */
  maxBatch?: number;
  /** batches running at once (default 1) */
  maxInFlight?: number;
  /** items of equal key never share a batch (a later one waits for the next batch) */
  key?: (item: I) => string;
}

interface Waiting<I, O> {
  item: I;
  resolve: (value: O) => void;
  reject: (err: unknown) => void;
}

export class Batcher<I, O> {
  private queue: Waiting<I, O>[] = [];
  private inFlight = 0;
  private scheduled = false;
  private readonly maxBatch: number;
  private readonly maxInFlight: number;

  /**
   * @param run executes one batch and returns one result per item, in order; when it throws, each item
   * of the batch runs again alone, so that only the calls whose own run throws reject.
   */
  constructor(
    private readonly run: (items: I[]) => Promise<O[]>,
    private readonly options: BatcherOptions<I> = {},
  ) {
    this.maxBatch = options.maxBatch ?? 256;
    this.maxInFlight = options.maxInFlight ?? 1;
  }

  call(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled || this.inFlight >= this.maxInFlight) return;
    this.scheduled = true;
    // Calls made by jobs woken in the same I/O phase join the batch.
    setImmediate(() => {
      this.scheduled = false;
      this.flush();
    });
  }

  private flush(): void {
    while (this.inFlight < this.maxInFlight && this.queue.length > 0) {
      const batch = this.take();
      this.inFlight++;
      this.execute(batch).finally(() => {
        this.inFlight--;
        if (this.queue.length > 0) this.schedule();
      });
    }
  }

  private take(): Waiting<I, O>[] {
    const key = this.options.key;
    if (!key) return this.queue.splice(0, this.maxBatch);
    const batch: Waiting<I, O>[] = [];
    const rest: Waiting<I, O>[] = [];
    const seen = new Set<string>();
    for (const w of this.queue) {
      const k = key(w.item);
      if (batch.length < this.maxBatch && !seen.has(k)) {
        seen.add(k);
        batch.push(w);
      } else {
        rest.push(w);
      }
    }
    this.queue = rest;
    return batch;
  }

  private async execute(batch: Waiting<I, O>[]): Promise<void> {
    try {
      const results = await this.run(batch.map((w) => w.item));
      for (const [i, w] of batch.entries()) w.resolve(results[i] as O);
    } catch (err) {
      if (batch.length === 1) {
        (batch[0] as Waiting<I, O>).reject(err);
        return;
      }
      // One bad item must not fail the others: each runs again alone and fails (or not) by itself.
      await Promise.all(batch.map((w) => this.execute([w])));
    }
  }
}

/**
 * `make(owner)` once per owner object, on first use, held weakly (an owner that is gone takes its value
 * with it): e.g. one `Batcher` per pg `Pool`, so that the calls sharing a batch share its connections.
 */
export function perOwner<K extends object, V>(make: (owner: K) => V): (owner: K) => V {
  const values = new WeakMap<K, V>();
  return (owner) => {
    let value = values.get(owner);
    if (value === undefined) {
      value = make(owner);
      values.set(owner, value);
    }
    return value;
  };
}
