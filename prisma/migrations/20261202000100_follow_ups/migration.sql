-- Follow-ups as rows (docs/decisions/0300): the queue work a commit causes, written in the same transaction
-- as the change, moved to BullMQ by the relay (packages/queue FollowUpRelay) and deleted once enqueued.
CREATE TABLE "follow_up" (
    "id" BIGSERIAL NOT NULL,
    "queue" TEXT NOT NULL,
    "payload" JSONB NOT NULL,
    "attempts" INTEGER,
    "requeue" BOOLEAN NOT NULL DEFAULT false,
    "delay_ms" INTEGER,
    "available_at" TIMESTAMPTZ(3) NOT NULL DEFAULT now(),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT now(),
    "relay_attempts" INTEGER NOT NULL DEFAULT 0,

    CONSTRAINT "follow_up_pkey" PRIMARY KEY ("id")
);

-- the relay's claim: the due rows, oldest first
CREATE INDEX "follow_up_available_at_idx" ON "follow_up"("available_at");

-- The follow-ups each change causes, declared once with the table it changes (docs/decisions/0301): whichever
-- statement makes the change, its follow-up row is written by the same statement, in its transaction.
-- The migration runner splits the file at every semicolon, quoted or not: the function bodies are E'...' strings
-- whose semicolons are written \073.

-- an event (the events outbox, any type of the event catalog) is routed to its webhooks: `routeEvent`
CREATE FUNCTION "follow_up_route_event"() RETURNS trigger LANGUAGE plpgsql AS E'
BEGIN
  INSERT INTO "follow_up" ("queue", "payload") VALUES (''routeEvent'', jsonb_build_object(''eventId'', NEW."id"))\073
  RETURN NULL\073
END ';
CREATE TRIGGER "follow_up_route_event" AFTER INSERT ON "events"
  FOR EACH ROW EXECUTE FUNCTION "follow_up_route_event"();

-- a task decided (by its deciding label, or by a review's answer: `last_label_id` is then the review's id)
-- is settled: `consensus`
CREATE FUNCTION "follow_up_settle_task"() RETURNS trigger LANGUAGE plpgsql AS E'
BEGIN
  INSERT INTO "follow_up" ("queue", "payload")
  VALUES (''consensus'', jsonb_build_object(''taskId'', NEW."id", ''labelId'', NEW."last_label_id"))\073
  RETURN NULL\073
END ';
CREATE TRIGGER "follow_up_settle_task" AFTER UPDATE OF "status" ON "tasks"
  FOR EACH ROW WHEN (NEW."status" = 'settling' AND OLD."status" IS DISTINCT FROM NEW."status" AND NEW."last_label_id" IS NOT NULL)
  EXECUTE FUNCTION "follow_up_settle_task"();

-- a task created without its item (`item_pending`, docs/decisions/0194) fetches it: `itemFetch`
CREATE FUNCTION "follow_up_fetch_item"() RETURNS trigger LANGUAGE plpgsql AS E'
BEGIN
  INSERT INTO "follow_up" ("queue", "payload") VALUES (''itemFetch'', jsonb_build_object(''taskId'', NEW."id"))\073
  RETURN NULL\073
END ';
CREATE TRIGGER "follow_up_fetch_item" AFTER INSERT ON "tasks"
  FOR EACH ROW WHEN (NEW."item_pending") EXECUTE FUNCTION "follow_up_fetch_item"();

-- a manifest job created is ingested: `manifestIngest`
CREATE FUNCTION "follow_up_ingest_job"() RETURNS trigger LANGUAGE plpgsql AS E'
BEGIN
  INSERT INTO "follow_up" ("queue", "payload") VALUES (''manifestIngest'', jsonb_build_object(''manifestJobId'', NEW."id"))\073
  RETURN NULL\073
END ';
CREATE TRIGGER "follow_up_ingest_job" AFTER INSERT ON "jobs"
  FOR EACH ROW EXECUTE FUNCTION "follow_up_ingest_job"();

-- a manifest job completed writes its export (a no-op without `output_url`): `manifestExport`
CREATE FUNCTION "follow_up_export_job"() RETURNS trigger LANGUAGE plpgsql AS E'
BEGIN
  INSERT INTO "follow_up" ("queue", "payload") VALUES (''manifestExport'', jsonb_build_object(''manifestJobId'', NEW."id"))\073
  RETURN NULL\073
END ';
CREATE TRIGGER "follow_up_export_job" AFTER UPDATE OF "status" ON "jobs"
  FOR EACH ROW WHEN (NEW."status" = 'completed' AND OLD."status" IS DISTINCT FROM NEW."status")
  EXECUTE FUNCTION "follow_up_export_job"();
