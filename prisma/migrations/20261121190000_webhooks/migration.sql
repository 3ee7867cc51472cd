-- CreateEnum
CREATE TYPE "WebhookStatus" AS ENUM ('pending', 'delivered', 'failed');

-- AlterTable
ALTER TABLE "tasks" ADD COLUMN     "webhook_status" "WebhookStatus";

-- CreateTable
CREATE TABLE "webhooks" (
    "id" TEXT NOT NULL,
    "customer_id" TEXT NOT NULL,
    "callback_url" TEXT NOT NULL,
    "secret_ciphertext" TEXT NOT NULL,
    "events" TEXT[],
    "active" BOOLEAN NOT NULL DEFAULT true,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "deleted_at" TIMESTAMPTZ(3),

    CONSTRAINT "webhooks_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "deliveries" (
    "id" TEXT NOT NULL,
    "event_id" TEXT NOT NULL,
    "webhook_id" TEXT NOT NULL,
    "customer_id" TEXT NOT NULL,
    "task_id" TEXT NOT NULL,
    "status" "WebhookStatus" NOT NULL DEFAULT 'pending',
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "last_status_code" INTEGER,
    "last_error" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "delivered_at" TIMESTAMPTZ(3),

    CONSTRAINT "deliveries_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "delivery_attempts" (
    "id" TEXT NOT NULL,
    "delivery_id" TEXT NOT NULL,
    "webhook_id" TEXT NOT NULL,
    "event_id" TEXT NOT NULL,
    "attempt" INTEGER NOT NULL,
    "manual" BOOLEAN NOT NULL DEFAULT false,
    "success" BOOLEAN NOT NULL,
    "status_code" INTEGER,
    "error" TEXT,
    "latency_ms" INTEGER NOT NULL,
    "started_at" TIMESTAMPTZ(3) NOT NULL,
    "finished_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "delivery_attempts_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "webhooks_customer_id_active_callback_url_idx" ON "webhooks"("customer_id", "active", "callback_url");

-- CreateIndex
CREATE INDEX "deliveries_webhook_id_created_at_idx" ON "deliveries"("webhook_id", "created_at");

-- CreateIndex
CREATE INDEX "deliveries_webhook_id_status_created_at_idx" ON "deliveries"("webhook_id", "status", "created_at");

-- CreateIndex
CREATE INDEX "deliveries_task_id_idx" ON "deliveries"("task_id");

-- CreateIndex
CREATE UNIQUE INDEX "deliveries_event_id_webhook_id_key" ON "deliveries"("event_id", "webhook_id");

-- CreateIndex
CREATE INDEX "delivery_attempts_delivery_id_attempt_idx" ON "delivery_attempts"("delivery_id", "attempt");

-- AddForeignKey
ALTER TABLE "webhooks" ADD CONSTRAINT "webhooks_customer_id_fkey" FOREIGN KEY ("customer_id") REFERENCES "customers"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "deliveries" ADD CONSTRAINT "deliveries_webhook_id_fkey" FOREIGN KEY ("webhook_id") REFERENCES "webhooks"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "delivery_attempts" ADD CONSTRAINT "delivery_attempts_delivery_id_fkey" FOREIGN KEY ("delivery_id") REFERENCES "deliveries"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

