-- The event catalog (contract §events, docs/decisions/0230): events of a manifest job (job.completed, job.failed)
-- have no task. An event row is about a task (task_id) or a job (job_id), one per cause: (task_id, type, revision)
-- for a task's events, (job_id, type) for a job's. A delivery of a job event has no task.
ALTER TABLE "events" ALTER COLUMN "task_id" DROP NOT NULL;
ALTER TABLE "events" ADD COLUMN "job_id" TEXT;
ALTER TABLE "events" ADD CONSTRAINT "events_subject_check" CHECK (("task_id" IS NULL) <> ("job_id" IS NULL));
CREATE UNIQUE INDEX "events_job_id_type_key" ON "events"("job_id", "type") WHERE "job_id" IS NOT NULL;
ALTER TABLE "deliveries" ALTER COLUMN "task_id" DROP NOT NULL;
