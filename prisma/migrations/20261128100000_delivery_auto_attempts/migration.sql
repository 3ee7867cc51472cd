-- A manual redelivery is an attempt of its own (../shared/DESIGN.md §7, issue 28): it neither uses up nor
-- restarts the automatic schedule. deliveries.attempts stays the count of every attempt (the wire's
-- `attempts`, the attempt log's numbering), and auto_attempts counts the automatic ones, which WEBHOOK_RETRY_MAX
-- bounds. Existing rows: every attempt not marked manual in the log.
-- (No semicolon in these comments: the migration engine splits the script at every one.)
ALTER TABLE "deliveries" ADD COLUMN "auto_attempts" INTEGER NOT NULL DEFAULT 0;

UPDATE "deliveries" d SET "auto_attempts" = s.n
FROM (SELECT "delivery_id", count(*)::int AS n FROM "delivery_attempts" WHERE NOT "manual" GROUP BY "delivery_id") s
WHERE s."delivery_id" = d."id";
