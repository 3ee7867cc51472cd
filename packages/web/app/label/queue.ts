/**
 * The labeler's work queue: the current claim plus up to {@link AHEAD} claims taken ahead, each with its
 * image fetched and decoded in the background, so a key press shows the next item at once.
 *
 * Preloading needs claims: the gateway only reveals a task's `data_url` in a claim, and a claim holds one
 * of the task's slots for CLAIM_TTL_SECONDS (10 min). Holding 3 claims ahead costs at most 3 slots per
 * active labeler, for the few seconds a labeler takes per item; in exchange the next item is on screen
 * the moment a key is pressed (no claim round trip, no image download). The queue limits the cost:
 * - it claims ahead only while the current item is shown (never more than 1 + AHEAD claims);
 * - a claim about to expire before it would be shown is released and dropped;
 * - on skip, sign-out and page unload every held claim is released (`DELETE /v1/labeling/claims/{id}`,
 *   where the gateway has that route; otherwise the slots come back when the claims expire);
 * - a 204 (nothing to label) stops claiming ahead; the queue asks again every {@link IDLE_POLL_MS} while
 *   the tab is visible (a hidden tab asks when it is shown again).
 *
 * Labels are posted in the background: the next item is shown first, and a label the gateway refuses
 * (claim expired, task completed by others) is reported as a notice.
 */
import {
  type AnswerBody,
  type Claim,
  ConflictError,
  type LabelgateClient,
  NotFoundError,
  type RecordedLabel,
} from "@labelgate/sdk/browser";
import { errorMessage, isAuthError } from "../shared/client";

/** Claims held beyond the current one (the items preloaded). */
export const AHEAD = 3;
/** How often an empty queue asks for work again, ms. */
export const IDLE_POLL_MS = 5000;
/** A claim that expires within this long is not shown (released instead), ms. */
export const EXPIRY_MARGIN_MS = 30_000;

const IMAGE_EXTENSIONS = /\.(avif|bmp|gif|ico|jpe?g|png|svg|tiff?|webp)$/i;
const OTHER_EXTENSIONS = /\.(csv|docx?|html?|json|jsonl|md|mp3|mp4|ogg|pdf|txt|wav|webm|xlsx?|xml|zip)$/i;

/** How an item is shown. */
export type ItemView =
  | { kind: "image"; url: string; image: HTMLImageElement; state: "loading" | "ready" | "error" }
  | { kind: "link"; url: string }
  | { kind: "unviewable"; url: string };

export interface QueueItem {
  claim: Claim;
  view: ItemView;
}

export type NoticeLevel = "info" | "warning" | "error";

export interface Notice {
  id: number;
  level: NoticeLevel;
  text: string;
}

export interface QueueSnapshot {
  current: QueueItem | null;
  /** items ready after the current one */
  ahead: number;
  /** labels recorded by the gateway in this session */
  labeled: number;
  /** labels sent and not answered yet */
  sending: number;
  /** the last claim attempt answered 204 and nothing is queued */
  nothingToLabel: boolean;
  /** no claim answered yet */
  starting: boolean;
  notices: Notice[];
  /** the key was refused (401): the app signs out */
  signedOut: boolean;
  /** why the last claim found nothing, when the gateway says (contract §qualification) */
  idleReason: "failed_qualification" | null;
  /** the feedback of the latest qualification training answer (the right answer, the explanation), until dismissed */
  training: TrainingShown | null;
}

/** A training answer's feedback as the app shows it: the task and the label response's `training`. */
export interface TrainingShown {
  taskId: string;
  feedback: NonNullable<RecordedLabel["training"]>;
}

/** The URL a browser can load for a claim: its presigned `view_url`, else its http(s) `data_url`. */
export function viewUrlOf(claim: Claim): string | null {
  const url = claim.view_url ?? claim.data_url;
  try {
    const u = new URL(url);
    return u.protocol === "http:" || u.protocol === "https:" ? u.href : null;
  } catch {
    return null;
  }
}

/**
 * Whether a claim is shown as an image: yes for a `bounding_box` task and when its task type names images
 * (`image_classification`), no
 * when it names another medium (text, video, audio, document), else by the URL's extension; an URL with no
 * known extension is tried as an image and shown as a link if it fails to decode.
 */
function looksLikeImage(claim: Claim, url: string): "yes" | "no" | "maybe" {
  const type = claim.task_type ?? "";
  if (type === "bounding_box" || /image|photo|picture/.test(type)) return "yes";
  if (/text|video|audio|document|pdf/.test(type)) return "no";
  const path = new URL(url).pathname;
  if (IMAGE_EXTENSIONS.test(path)) return "yes";
  if (OTHER_EXTENSIONS.test(path)) return "no";
  return "maybe";
}

/**
 * The view of a claim's item, prepared at once: a link or an unviewable URL, or an image element that starts
 * loading now (so it is decoded before it is shown); `onChange` gets the image's view again when it has loaded
 * or failed (a failed "maybe" image becomes a link). The console's review page (contract §review) prepares its
 * items the same way.
 */
export function itemViewOf(claim: Claim, onChange: (view: ItemView) => void): ItemView {
  const url = viewUrlOf(claim);
  if (url === null) return { kind: "unviewable", url: claim.data_url };
  const guess = looksLikeImage(claim, url);
  if (guess === "no") return { kind: "link", url };
  const image = new Image();
  image.alt = `Item of task ${claim.task_id}`;
  image.decoding = "async";
  image.setAttribute("elementtiming", "label-item");
  image.className = "item-image";
  image.src = url;
  image.decode().then(
    () => onChange({ kind: "image", url, image, state: "ready" }),
    () => onChange(guess === "maybe" ? { kind: "link", url } : { kind: "image", url, image, state: "error" }),
  );
  return { kind: "image", url, image, state: "loading" };
}

export class LabelQueue {
  private items: QueueItem[] = [];
  private claiming = false;
  private exhaustedAt = 0;
  private labeled = 0;
  private sending = 0;
  private started = false;
  private signedOut = false;
  private disposed = false;
  private notices: Notice[] = [];
  private idleReason: QueueSnapshot["idleReason"] = null;
  private training: TrainingShown | null = null;
  private noticeId = 0;
  private idleTimer: ReturnType<typeof setTimeout> | undefined;
  private listeners = new Set<() => void>();
  private snapshot: QueueSnapshot;

  constructor(
    private readonly client: LabelgateClient,
    private readonly canRelease: () => boolean,
  ) {
    this.snapshot = this.makeSnapshot();
  }

  /** For useSyncExternalStore. */
  subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };

  getSnapshot = (): QueueSnapshot => this.snapshot;

  /** Starts claiming. */
  start(): void {
    void this.fill();
  }

  /**
   * Answers the current item with `answer`, the answer body of its task type (`{label}`, `{labels}`,
   * `{boxes}` or `{spans}`), and shows the next one at once; the answer is posted in the background.
   */
  answer(answer: AnswerBody): void {
    const item = this.items[0];
    if (!item) return;
    this.items.shift();
    this.sending++;
    this.changed();
    void this.fill();
    this.client.labeling.label(item.claim.claim_id, answer).then(
      (recorded) => {
        this.sending--;
        this.labeled++;
        if (recorded.training) this.training = { taskId: recorded.task_id, feedback: recorded.training };
        this.changed();
      },
      (err: unknown) => {
        this.sending--;
        this.refused(item, err);
      },
    );
  }

  /** Skips the current item: releases its claim and shows the next one. */
  skip(): void {
    const item = this.items.shift();
    if (!item) return;
    this.changed();
    void this.fill();
    void this.release(item, true);
  }

  /** Asks for work again now (after "nothing to label"). */
  retry(): void {
    this.exhaustedAt = 0;
    void this.fill();
  }

  /** Closes the training feedback. */
  dismissTraining(): void {
    this.training = null;
    this.changed();
  }

  dismiss(id: number): void {
    this.notices = this.notices.filter((n) => n.id !== id);
    this.changed();
  }

  /** Stops claiming and releases every held claim (sign-out, page unload). */
  dispose(): void {
    this.disposed = true;
    clearTimeout(this.idleTimer);
    const held = this.items;
    this.items = [];
    for (const item of held) void this.release(item, false);
    this.changed();
  }

  private async fill(): Promise<void> {
    if (this.claiming || this.disposed || this.signedOut) return;
    this.claiming = true;
    try {
      this.dropExpiring();
      while (!this.disposed && this.items.length < 1 + AHEAD) {
        if (this.exhaustedAt > 0 && Date.now() - this.exhaustedAt < IDLE_POLL_MS) break;
        const { claim, idleReason } = await this.client.labeling.claimOrIdle();
        this.started = true;
        this.idleReason = idleReason ?? null;
        if (this.disposed) {
          if (claim) void this.release({ claim, view: { kind: "unviewable", url: claim.data_url } }, false);
          break;
        }
        if (!claim) {
          this.exhaustedAt = Date.now();
          break;
        }
        this.exhaustedAt = 0;
        this.items.push(this.prepare(claim));
        this.changed();
      }
    } catch (err) {
      this.started = true;
      if (isAuthError(err)) {
        this.signedOut = true;
      } else {
        this.notify("error", `Could not get a task: ${errorMessage(err)}`);
        this.exhaustedAt = Date.now();
      }
    } finally {
      this.claiming = false;
      this.changed();
    }
    if (!this.disposed && !this.signedOut && this.items.length < 1 + AHEAD) {
      clearTimeout(this.idleTimer);
      this.idleTimer = setTimeout(() => this.poll(), IDLE_POLL_MS);
    }
  }

  /** The idle poll: asks again while the tab is visible; a hidden tab asks when it is shown again. */
  private poll(): void {
    if (document.visibilityState !== "hidden") {
      void this.fill();
      return;
    }
    const onVisible = () => {
      if (document.visibilityState === "hidden") return;
      document.removeEventListener("visibilitychange", onVisible);
      void this.fill();
    };
    document.addEventListener("visibilitychange", onVisible);
  }

  /** The item of a claim, its image requested and decoded in the background. */
  private prepare(claim: Claim): QueueItem {
    const item: QueueItem = { claim, view: itemViewOf(claim, (view) => this.setView(item, view)) };
    return item;
  }

  private setView(item: QueueItem, view: ItemView): void {
    item.view = view;
    if (this.items.includes(item)) this.changed();
  }

  /** Releases (and drops) queued claims that would expire before they are shown. */
  private dropExpiring(): void {
    const now = Date.now();
    const keep: QueueItem[] = [];
    for (const [i, item] of this.items.entries()) {
      if (i > 0 && Date.parse(item.claim.expires_at) - now < EXPIRY_MARGIN_MS) void this.release(item, false);
      else keep.push(item);
    }
    if (keep.length !== this.items.length) {
      this.items = keep;
      this.changed();
    }
  }

  private async release(item: QueueItem, reportErrors: boolean): Promise<void> {
    if (!this.canRelease()) return;
    try {
      await this.client.labeling.release(item.claim.claim_id);
    } catch (err) {
      // an expired or already released claim holds no slot: nothing to report
      if (err instanceof NotFoundError || err instanceof ConflictError) return;
      if (reportErrors)
        this.notify("warning", `Task ${item.claim.task_id} was skipped, but its claim was not released: ${errorMessage(err)}`);
    }
  }

  private refused(item: QueueItem, err: unknown): void {
    const task = item.claim.task_id;
    if (isAuthError(err)) {
      this.signedOut = true;
    } else if (err instanceof ConflictError && err.error === "claim expired") {
      this.notify("warning", `Your claim on task ${task} expired before the label arrived; the task went back to the queue.`);
    } else if (err instanceof ConflictError && err.error === "task no longer accepts labels") {
      const why = err.body?.status === "canceled" ? "was canceled by its owner" : "was completed by other labelers";
      this.notify("info", `Task ${task} ${why} before your label arrived; nothing was recorded.`);
    } else if (err instanceof NotFoundError) {
      this.notify("warning", `The claim on task ${task} no longer exists; nothing was recorded.`);
    } else {
      this.notify("error", `Your label for task ${task} was not recorded: ${errorMessage(err)}`);
    }
    this.changed();
  }

  private notify(level: NoticeLevel, text: string): void {
    this.notices = [{ id: ++this.noticeId, level, text }, ...this.notices].slice(0, 5);
    this.changed();
  }

  private makeSnapshot(): QueueSnapshot {
    const current = this.items[0] ?? null;
    return {
      current: current ? { claim: current.claim, view: current.view } : null,
      ahead: Math.max(0, this.items.length - 1),
      labeled: this.labeled,
      sending: this.sending,
      nothingToLabel: this.items.length === 0 && this.exhaustedAt > 0,
      starting: !this.started,
      notices: this.notices,
      signedOut: this.signedOut,
      idleReason: this.idleReason,
      training: this.training,
    };
  }

  private changed(): void {
    this.snapshot = this.makeSnapshot();
    for (const l of this.listeners) l();
  }
}
