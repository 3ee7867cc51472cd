-- Review, revisions and audits (docs/decisions/0260 to 0263).
-- (No quote marks or semicolons in these comments: the migration runner splits statements on them.)

-- a settled result that a review changed: resolution review
ALTER TYPE "Resolution" ADD VALUE IF NOT EXISTS 'review';

-- the revision a task holds (1 = its first settlement), the options rejected by reviews (a reopened task never
-- settles on them again) and the labels it had when it was last reopened (it takes up to max_labels more)
ALTER TABLE "tasks" ADD COLUMN "revision" INTEGER NOT NULL DEFAULT 1;
ALTER TABLE "tasks" ADD COLUMN "excluded_options" TEXT[] NOT NULL DEFAULT ARRAY[]::TEXT[];
ALTER TABLE "tasks" ADD COLUMN "labels_before" INTEGER NOT NULL DEFAULT 0;

-- one ledger record per task and revision: earlier records stay as they were anchored
ALTER TABLE "ledger_entries" ADD COLUMN "revision" INTEGER NOT NULL DEFAULT 1;
DROP INDEX "ledger_entries_task_id_key";
CREATE UNIQUE INDEX "ledger_entries_task_id_revision_key" ON "ledger_entries"("task_id", "revision");

-- one event per task, type and revision (task.revised comes once per revision)
ALTER TABLE "events" ADD COLUMN "revision" INTEGER NOT NULL DEFAULT 1;
DROP INDEX "events_task_id_type_key";
CREATE UNIQUE INDEX "events_task_id_type_revision_key" ON "events"("task_id", "type", "revision");

-- the revisions a later one replaced, as they were settled (the current one is the task row)
CREATE TABLE "task_revisions" (
    "task_id" TEXT NOT NULL,
    "revision" INTEGER NOT NULL,
    "consensus_label" TEXT NOT NULL,
    "confidence" DOUBLE PRECISION NOT NULL,
    "resolution" "Resolution" NOT NULL,
    "label_counts" JSONB NOT NULL,
    "posterior" JSONB NOT NULL,
    "labels_collected" INTEGER NOT NULL,
    "consensus" JSONB,
    "ledger_txid" TEXT NOT NULL,
    "settled_at" TIMESTAMPTZ(3) NOT NULL,
    "superseded_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "task_revisions_pkey" PRIMARY KEY ("task_id", "revision"),
    CONSTRAINT "task_revisions_task_id_fkey" FOREIGN KEY ("task_id") REFERENCES "tasks"("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- every review a customer made, the latest counting
CREATE TABLE "reviews" (
    "id" TEXT NOT NULL,
    "task_id" TEXT NOT NULL,
    "customer_id" TEXT NOT NULL,
    "label_space_id" TEXT NOT NULL,
    "verdict" TEXT NOT NULL,
    "answer" JSONB,
    "value" TEXT,
    "revision" INTEGER NOT NULL,
    "consensus_label" TEXT NOT NULL,
    "confidence" DOUBLE PRECISION NOT NULL,
    "revised" BOOLEAN NOT NULL DEFAULT false,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "reviews_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "reviews_verdict_check" CHECK ("verdict" IN ('accept', 'reject')),
    CONSTRAINT "reviews_task_id_fkey" FOREIGN KEY ("task_id") REFERENCES "tasks"("id") ON DELETE CASCADE ON UPDATE CASCADE
);
CREATE INDEX "reviews_task_id_created_at_idx" ON "reviews"("task_id", "created_at");
CREATE INDEX "reviews_label_space_id_created_at_idx" ON "reviews"("label_space_id", "created_at");

-- the audit queue: settled tasks drawn at the customer audit_rate
CREATE TABLE "audits" (
    "task_id" TEXT NOT NULL,
    "customer_id" TEXT NOT NULL,
    "label_space_id" TEXT NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'open',
    "review_id" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "closed_at" TIMESTAMPTZ(3),
    CONSTRAINT "audits_pkey" PRIMARY KEY ("task_id"),
    CONSTRAINT "audits_status_check" CHECK ("status" IN ('open', 'done')),
    CONSTRAINT "audits_task_id_fkey" FOREIGN KEY ("task_id") REFERENCES "tasks"("id") ON DELETE CASCADE ON UPDATE CASCADE
);
CREATE INDEX "audits_customer_id_status_created_at_idx" ON "audits"("customer_id", "status", "created_at", "task_id");
