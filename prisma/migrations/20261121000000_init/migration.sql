-- CreateSchema
CREATE SCHEMA IF NOT EXISTS "public";

-- CreateEnum
CREATE TYPE "Tier" AS ENUM ('sandbox', 'production');

-- CreateEnum
CREATE TYPE "TaskStatus" AS ENUM ('pending', 'labeling', 'settling', 'settled', 'canceled');

-- CreateEnum
CREATE TYPE "ClaimStatus" AS ENUM ('active', 'labeled', 'expired');

-- CreateEnum
CREATE TYPE "Resolution" AS ENUM ('consensus', 'max_labels');

-- CreateTable
CREATE TABLE "customers" (
    "id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "email" TEXT NOT NULL,
    "tier" "Tier" NOT NULL DEFAULT 'sandbox',
    "label_quota" INTEGER NOT NULL,
    "quota_used" INTEGER NOT NULL DEFAULT 0,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "customers_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "api_keys" (
    "id" TEXT NOT NULL,
    "customer_id" TEXT NOT NULL,
    "key_hash" TEXT NOT NULL,
    "hint" TEXT NOT NULL,
    "tier" "Tier" NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "revoked_at" TIMESTAMPTZ(3),

    CONSTRAINT "api_keys_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "batches" (
    "id" TEXT NOT NULL,
    "customer_id" TEXT NOT NULL,
    "task_count" INTEGER NOT NULL,
    "callback_url" TEXT,
    "idempotency_key" TEXT,
    "request_hash" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "batches_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "tasks" (
    "id" TEXT NOT NULL,
    "customer_id" TEXT NOT NULL,
    "batch_id" TEXT,
    "task_type" TEXT NOT NULL,
    "data_url" TEXT NOT NULL,
    "question" TEXT NOT NULL,
    "options" TEXT[],
    "callback_url" TEXT,
    "consensus_threshold" INTEGER NOT NULL,
    "max_labels" INTEGER NOT NULL,
    "metadata" JSONB,
    "idempotency_key" TEXT,
    "request_hash" TEXT,
    "status" "TaskStatus" NOT NULL DEFAULT 'pending',
    "labels_collected" INTEGER NOT NULL DEFAULT 0,
    "label_counts" JSONB NOT NULL DEFAULT '{}',
    "labels_needed" INTEGER NOT NULL,
    "quota_reserved" INTEGER NOT NULL,
    "last_label_id" TEXT,
    "last_label_at" TIMESTAMPTZ(3),
    "consensus_label" TEXT,
    "confidence" DOUBLE PRECISION,
    "resolution" "Resolution",
    "ledger_txid" TEXT,
    "settled_at" TIMESTAMPTZ(3),
    "canceled_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "tasks_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "labelers" (
    "id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "key_hash" TEXT NOT NULL,
    "hint" TEXT NOT NULL,
    "settled_labels" INTEGER NOT NULL DEFAULT 0,
    "agreed_labels" INTEGER NOT NULL DEFAULT 0,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "disabled_at" TIMESTAMPTZ(3),

    CONSTRAINT "labelers_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "claims" (
    "id" TEXT NOT NULL,
    "task_id" TEXT NOT NULL,
    "labeler_id" TEXT NOT NULL,
    "status" "ClaimStatus" NOT NULL DEFAULT 'active',
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "claims_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "labels" (
    "id" TEXT NOT NULL,
    "task_id" TEXT NOT NULL,
    "customer_id" TEXT NOT NULL,
    "labeler_id" TEXT NOT NULL,
    "claim_id" TEXT NOT NULL,
    "value" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "labels_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "ledger_entries" (
    "seq" BIGSERIAL NOT NULL,
    "txid" TEXT NOT NULL,
    "task_id" TEXT NOT NULL,
    "prev_hash" TEXT NOT NULL,
    "hash" TEXT NOT NULL,
    "payload" JSONB NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "ledger_entries_pkey" PRIMARY KEY ("seq")
);

-- CreateTable
CREATE TABLE "events" (
    "id" TEXT NOT NULL,
    "type" TEXT NOT NULL,
    "task_id" TEXT NOT NULL,
    "customer_id" TEXT NOT NULL,
    "payload" JSONB NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "recorded_at" TIMESTAMPTZ(3),

    CONSTRAINT "events_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "customers_email_key" ON "customers"("email");

-- CreateIndex
CREATE UNIQUE INDEX "api_keys_key_hash_key" ON "api_keys"("key_hash");

-- CreateIndex
CREATE INDEX "api_keys_customer_id_idx" ON "api_keys"("customer_id");

-- CreateIndex
CREATE UNIQUE INDEX "batches_customer_id_idempotency_key_key" ON "batches"("customer_id", "idempotency_key");

-- CreateIndex
CREATE INDEX "tasks_customer_id_created_at_idx" ON "tasks"("customer_id", "created_at");

-- CreateIndex
CREATE INDEX "tasks_batch_id_status_idx" ON "tasks"("batch_id", "status");

-- CreateIndex
CREATE INDEX "tasks_status_created_at_idx" ON "tasks"("status", "created_at");

-- CreateIndex
CREATE UNIQUE INDEX "tasks_customer_id_idempotency_key_key" ON "tasks"("customer_id", "idempotency_key");

-- CreateIndex
CREATE UNIQUE INDEX "labelers_key_hash_key" ON "labelers"("key_hash");

-- CreateIndex
CREATE INDEX "claims_task_id_status_idx" ON "claims"("task_id", "status");

-- CreateIndex
CREATE INDEX "claims_labeler_id_task_id_idx" ON "claims"("labeler_id", "task_id");

-- CreateIndex
CREATE UNIQUE INDEX "labels_claim_id_key" ON "labels"("claim_id");

-- CreateIndex
CREATE INDEX "labels_customer_id_created_at_idx" ON "labels"("customer_id", "created_at");

-- CreateIndex
CREATE UNIQUE INDEX "labels_task_id_labeler_id_key" ON "labels"("task_id", "labeler_id");

-- CreateIndex
CREATE UNIQUE INDEX "ledger_entries_txid_key" ON "ledger_entries"("txid");

-- CreateIndex
CREATE UNIQUE INDEX "ledger_entries_task_id_key" ON "ledger_entries"("task_id");

-- CreateIndex
CREATE UNIQUE INDEX "ledger_entries_hash_key" ON "ledger_entries"("hash");

-- CreateIndex
CREATE INDEX "events_recorded_at_created_at_idx" ON "events"("recorded_at", "created_at");

-- CreateIndex
CREATE UNIQUE INDEX "events_task_id_type_key" ON "events"("task_id", "type");

-- AddForeignKey
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_customer_id_fkey" FOREIGN KEY ("customer_id") REFERENCES "customers"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "batches" ADD CONSTRAINT "batches_customer_id_fkey" FOREIGN KEY ("customer_id") REFERENCES "customers"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "tasks" ADD CONSTRAINT "tasks_customer_id_fkey" FOREIGN KEY ("customer_id") REFERENCES "customers"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "tasks" ADD CONSTRAINT "tasks_batch_id_fkey" FOREIGN KEY ("batch_id") REFERENCES "batches"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "claims" ADD CONSTRAINT "claims_task_id_fkey" FOREIGN KEY ("task_id") REFERENCES "tasks"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "claims" ADD CONSTRAINT "claims_labeler_id_fkey" FOREIGN KEY ("labeler_id") REFERENCES "labelers"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "labels" ADD CONSTRAINT "labels_task_id_fkey" FOREIGN KEY ("task_id") REFERENCES "tasks"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "labels" ADD CONSTRAINT "labels_labeler_id_fkey" FOREIGN KEY ("labeler_id") REFERENCES "labelers"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "labels" ADD CONSTRAINT "labels_claim_id_fkey" FOREIGN KEY ("claim_id") REFERENCES "claims"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

