/**
 * @labelgate/store: the only package that talks SQL. Every statement of labelgate and the task state
 * machine live here; services call the store object a runtime creates (`createStore`), whose members hold
 * the batchers (group commit) of that process.
 *
 * Shapes: `createStore({ url, poolMax?, connectTimeoutMs?, statementTimeoutMs?, onPoolError? })`
 * returns a `Store`: `accounts`, `settings`, `tasks`, `batches`, `labeling`, `spaces`, `instructions`, `settlement`, `webhooks`,
 * `deliveries`, `jobs`, `exports`, `items`, `billing`, `dashboard`, `reconcile`, `anchors`, plus `ping()` and `close()`. Refusals are
 * `StoreError`s (a domain kind, errors.ts; the gateway maps them to HTTP answers); database outages surface as
 * the driver's errors (`isDatabaseUnavailable`).
 */
import { type AccountsStore, accountsStore } from "./accounts";
import { type AnchorsStore, anchorsStore } from "./anchors";
import { type BatchesStore, batchesStore } from "./batches";
import { type BillingStore, billingStore } from "./billing";
import { type DashboardStore, dashboardStore } from "./dashboard";
import { createDb, type Db, type DbOptions } from "./database";
import { type DeliveriesStore, deliveriesStore } from "./deliveries";
import { type ExportsStore, exportsStore } from "./exports";
import { type FollowUpsStore, followUpsStore } from "./follow-ups";
import { type InstructionsStore, instructionsStore } from "./instructions";
import { type ItemsStore, itemsStore } from "./items";
import { type JobsStore, jobsStore } from "./jobs";
import { type LabelingStore, labelingStore } from "./labeling";
import { type ReconcileStore, reconcileStore } from "./reconcile";
import { type ReviewsStore, reviewsStore } from "./reviews";
import { type SettingsStore, settingsStore } from "./settings";
import { type SettlementStore, settlementStore } from "./settlement";
import { type SpacesStore, spacesStore } from "./spaces";
import { type TasksStore, tasksStore } from "./tasks";
import { type WebhooksStore, webhooksStore } from "./webhooks";

export type { CustomerKey, CustomerWithHint, IssuedKey, LabelerKey } from "./accounts";
export {
  type Anchor,
  type AnchorBacklog,
  type AnchorConfirmation,
  type AnchoredRecord,
  evmSettlementOf,
  type LeaderLock,
  leafHexOf,
} from "./anchors";
export { type BatchWithCounts, batchPageSql, type ComparisonLabel, type ComparisonSpace } from "./batches";
export type { BillingConfig, InvoiceRow, LineItem, MonthUsage } from "./billing";
export {
  FINALIZE_GRACE_MS,
  invoiceStateSql,
  monthEnd,
  monthIndex,
  monthOf,
  monthOfIndex,
  monthStart,
  price,
  usageByMonthSql,
} from "./billing";
export {
  DELIVERY_WINDOW_DAYS,
  overviewSql,
  QUALITY_WINDOW_DAYS,
  qualitySql,
  SETTLE_WINDOW_DAYS,
  type TaskListOptions,
  taskCountSql,
  taskPageSql,
  USAGE_DAYS,
  usageDaysSql,
} from "./dashboard";
/** The raw database handles (migration tooling and tests that inspect rows; application code uses the store). */
export { createDb, type Db, type DbOptions } from "./database";
export type { AttemptRecord, DeliveryRow, PendingDelivery } from "./deliveries";
export {
  isDatabaseUnavailable,
  isUniqueViolation,
  STORE_ERROR_KINDS,
  StoreError,
  type StoreErrorDetail,
  type StoreErrorKind,
} from "./errors";
export { type FollowUpModes, type FollowUpsStore, followUpsSql, type ParkedFollowUp } from "./follow-ups";
export type {
  ApiKey,
  Batch,
  Claim,
  Customer,
  Delivery,
  DeliveryAttempt,
  Event,
  Job,
  Label,
  Labeler,
  LedgerEntry,
  Task,
  Webhook,
} from "./generated/client";
export { Prisma } from "./generated/client";
export { type GuideEntry, guideDigest, type InstructionsVersion } from "./instructions";
export type { PendingItem } from "./items";
export type { ChunkWritten, IngestingJob, ManifestChunk } from "./jobs";
export type { ClaimResult, LabelRecord, TrainingFeedback } from "./labeling";
export { examVerdict } from "./labeling";
export { GENESIS_HASH, type LedgerRecord, type LedgerVerification, recordHash, verifyLedger } from "./ledger";
export * from "./lifecycle";
export { copyDatabase, dropDatabase, ensureDatabase, migrateDatabase } from "./migrate";
export { type PolicyColumns, policyColumns, policyOf } from "./policy";
export { QuotaExhaustedError } from "./quota";
export type { LostWork } from "./reconcile";
export type { AuditRow, ReviewDone, ReviewedBinRow, ReviewedQuality, ReviewInput, ReviewRow, RevisionRow } from "./reviews";
export { reviewedQuality } from "./reviews";
export { mergeSettings, type QualitySettings, type StoredSettings, storedSettingsOf } from "./settings";
export type { LedgerMode, Settlement, TaskSettledPayload } from "./settlement";
export { calibrationSummary, labelSpaceId, REFIT_TIME_SHARE, spaceIdOf } from "./spaces";
export { type CreatedBatch, type CreatedTask, type NewTask, requestFingerprint } from "./tasks";
export { pgConfigFromUrl, withDatabase } from "./url";
export type { DeliveryWithAttempts } from "./webhooks";

export type StoreOptions = DbOptions;

export interface Store {
  /**
   * The Prisma client and pg pool under the store, for the migration tooling and for tests that inspect
   * rows; application code calls the members below.
   */
  readonly db: Db;
  readonly accounts: AccountsStore;
  readonly settings: SettingsStore;
  readonly tasks: TasksStore;
  readonly batches: BatchesStore;
  readonly labeling: LabelingStore;
  readonly spaces: SpacesStore;
  readonly instructions: InstructionsStore;
  readonly settlement: SettlementStore;
  readonly webhooks: WebhooksStore;
  readonly deliveries: DeliveriesStore;
  readonly jobs: JobsStore;
  /** exports of jobs and batches in every format, streamed page by page */
  readonly exports: ExportsStore;
  /** items fetched after their task was created (a text_span task's text): store it, or cancel the task */
  readonly items: ItemsStore;
  readonly billing: BillingStore;
  readonly dashboard: DashboardStore;
  readonly reconcile: ReconcileStore;
  /** reviews of settled results, the revisions they made, the audit queue */
  readonly reviews: ReviewsStore;
  /** LEDGER=evm: anchor batches, the anchorer's leadership lock, anchored records' proofs */
  readonly anchors: AnchorsStore;
  /** the `follow_up` rows (docs/decisions/0300): the relay's table, and follow-ups written on their own */
  readonly followUps: FollowUpsStore;
  /** Readiness: Postgres answers `SELECT 1`. Never throws. */
  ping(): Promise<boolean>;
  close(): Promise<void>;
}

/** Creates the store of a process over one pg pool (connecting lazily: nothing is awaited here). */
export function createStore(options: StoreOptions): Store {
  return storeOver(createDb(options));
}

/** The store over existing database handles (tests that share a pool). */
export function storeOver(db: Db): Store {
  return {
    db,
    accounts: accountsStore(db),
    settings: settingsStore(db),
    tasks: tasksStore(db),
    batches: batchesStore(db),
    labeling: labelingStore(db),
    spaces: spacesStore(db),
    instructions: instructionsStore(db),
    settlement: settlementStore(db),
    webhooks: webhooksStore(db),
    deliveries: deliveriesStore(db),
    jobs: jobsStore(db),
    exports: exportsStore(db),
    items: itemsStore(db),
    billing: billingStore(db),
    dashboard: dashboardStore(db),
    reconcile: reconcileStore(db),
    reviews: reviewsStore(db),
    anchors: anchorsStore(db),
    followUps: followUpsStore(db),
    ping: () =>
      db.pool.query("SELECT 1").then(
        () => true,
        () => false,
      ),
    close: () => db.close(),
  };
}
