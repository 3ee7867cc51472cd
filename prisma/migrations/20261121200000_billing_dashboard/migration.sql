-- CreateEnum
CREATE TYPE "InvoiceStatus" AS ENUM ('open', 'finalized');

-- CreateTable
CREATE TABLE "invoices" (
    "id" TEXT NOT NULL,
    "customer_id" TEXT NOT NULL,
    "month" TEXT NOT NULL,
    "status" "InvoiceStatus" NOT NULL,
    "currency" TEXT NOT NULL,
    "labels_collected" INTEGER NOT NULL,
    "tasks_settled" INTEGER NOT NULL,
    "amount_cents" BIGINT NOT NULL,
    "line_items" JSONB NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "finalized_at" TIMESTAMPTZ(3),

    CONSTRAINT "invoices_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "invoices_customer_id_month_key" ON "invoices"("customer_id", "month");

-- CreateIndex
CREATE INDEX "tasks_customer_id_status_created_at_id_idx" ON "tasks"("customer_id", "status", "created_at", "id");

-- CreateIndex
CREATE INDEX "tasks_customer_id_status_settled_at_id_idx" ON "tasks"("customer_id", "status", "settled_at", "id");

-- CreateIndex
CREATE INDEX "tasks_customer_id_settled_at_id_idx" ON "tasks"("customer_id", "settled_at", "id");

-- CreateIndex
CREATE INDEX "deliveries_customer_id_status_created_at_idx" ON "deliveries"("customer_id", "status", "created_at");

-- AddForeignKey
ALTER TABLE "invoices" ADD CONSTRAINT "invoices_customer_id_fkey" FOREIGN KEY ("customer_id") REFERENCES "customers"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

