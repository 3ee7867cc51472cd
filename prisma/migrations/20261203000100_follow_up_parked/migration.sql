-- A follow_up row whose work cannot be enqueued for a reason other than an outage (its payload fails the
-- queue catalog's schema, the queue rejects the job, or no relay knows its queue for an hour) is parked:
-- the relay stops trying it, logs it as an error, and reports it (labelgate_follow_up_parked_rows) until an
-- operator retries it (`pnpm admin retry-follow-ups`). docs/decisions/0331.
ALTER TABLE "follow_up" ADD COLUMN "parked_at" TIMESTAMPTZ(3), ADD COLUMN "error" TEXT;
