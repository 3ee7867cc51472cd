/**
 * Caps the requests in flight per webhook in one process, so that a slow or dead receiver holds at most
 * `max` of the worker's slots with requests: other customers' deliveries keep flowing. Over the cap, a
 * delivery waits for a slot (at most `maxWaitMs`) only while the receiver answers in time (its oldest
 * request in flight is younger than `maxWaitMs`) and the expected wait (deliveries ahead / `max` × how
 * long a request holds a slot, the longer of the recent average and that age) is at most `maxWaitMs`;
 * otherwise it is deferred (back to the delayed set for `deferMs` plus jitter) without spending an
 * attempt. So a fast receiver gets every slot it can use (deferring its deliveries costs more than
 * sending them: bench/webhooks), a slow one holds fewer than `2 × max` slots, and a hanging one has its
 * further deliveries deferred as soon as its oldest request is `maxWaitMs` old.
 */
interface WebhookSlots {
  /** start times (performance.now) of the requests in flight, oldest first */
  starts: number[];
  /** moving average of how long a request held its slot, ms */
  averageMs: number;
  waiters: { resolve: (release: (() => void) | undefined) => void; timer: NodeJS.Timeout }[];
}

/** The per-webhook in-flight cap of a process (see the module comment). */
export class InFlightLimit {
  private readonly webhooks = new Map<string, WebhookSlots>();

  constructor(
    readonly max: number,
    readonly deferMs = 500,
    readonly maxWaitMs = 1000,
  ) {}

  /** A slot for a request to `key`, with its release; undefined when the delivery should be deferred. */
  async acquire(key: string): Promise<(() => void) | undefined> {
    let w = this.webhooks.get(key);
    if (!w) {
      w = { starts: [], averageMs: 0, waiters: [] };
      this.webhooks.set(key, w);
    }
    const now = performance.now();
    if (w.starts.length < this.max) return this.take(key, w, now);
    // the receiver is not answering in time (a hang, or requests slower than a wait is worth)
    const oldestMs = now - (w.starts[0] as number);
    if (oldestMs > this.maxWaitMs) return undefined;
    if (((w.waiters.length + 1) / this.max) * Math.max(w.averageMs, oldestMs) > this.maxWaitMs) return undefined;
    const slots = w;
    return new Promise((resolve) => {
      const waiter = {
        resolve,
        timer: setTimeout(() => {
          slots.waiters.splice(slots.waiters.indexOf(waiter), 1);
          resolve(undefined);
        }, this.maxWaitMs),
      };
      slots.waiters.push(waiter);
    });
  }

  private take(key: string, w: WebhookSlots, now: number): () => void {
    w.starts.push(now);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const end = performance.now();
      w.starts.splice(w.starts.indexOf(now), 1);
      w.averageMs = w.averageMs === 0 ? end - now : 0.8 * w.averageMs + 0.2 * (end - now);
      const next = w.waiters.shift();
      if (next) {
        clearTimeout(next.timer);
        next.resolve(this.take(key, w, end));
      } else if (w.starts.length === 0) {
        this.webhooks.delete(key);
      }
    };
  }
}
