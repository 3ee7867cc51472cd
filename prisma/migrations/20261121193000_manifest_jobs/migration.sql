-- CreateEnum
CREATE TYPE "JobStatus" AS ENUM ('queued', 'ingesting', 'labeling', 'completed', 'failed');

-- AlterEnum
ALTER TYPE "TaskStatus" ADD VALUE 'staged';

-- AlterTable
ALTER TABLE "tasks" ADD COLUMN     "job_id" TEXT,
ADD COLUMN     "manifest_line" INTEGER,
ADD COLUMN     "source" JSONB;

-- CreateTable
CREATE TABLE "jobs" (
    "id" TEXT NOT NULL,
    "customer_id" TEXT NOT NULL,
    "manifest_url" TEXT NOT NULL,
    "task_type" TEXT NOT NULL,
    "question" TEXT NOT NULL,
    "options" TEXT[],
    "consensus_threshold" INTEGER NOT NULL,
    "max_labels" INTEGER NOT NULL,
    "callback_url" TEXT,
    "credentials_ciphertext" TEXT,
    "output_url" TEXT,
    "status" "JobStatus" NOT NULL DEFAULT 'queued',
    "lines_ingested" INTEGER NOT NULL DEFAULT 0,
    "task_count" INTEGER NOT NULL DEFAULT 0,
    "error" TEXT,
    "export_written_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "started_at" TIMESTAMPTZ(3),
    "ingested_at" TIMESTAMPTZ(3),
    "completed_at" TIMESTAMPTZ(3),
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "jobs_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "jobs_customer_id_created_at_idx" ON "jobs"("customer_id", "created_at");

-- CreateIndex
CREATE INDEX "tasks_job_id_status_idx" ON "tasks"("job_id", "status");

-- CreateIndex
CREATE UNIQUE INDEX "tasks_job_id_manifest_line_key" ON "tasks"("job_id", "manifest_line");

-- AddForeignKey
ALTER TABLE "tasks" ADD CONSTRAINT "tasks_job_id_fkey" FOREIGN KEY ("job_id") REFERENCES "jobs"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "jobs" ADD CONSTRAINT "jobs_customer_id_fkey" FOREIGN KEY ("customer_id") REFERENCES "customers"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

