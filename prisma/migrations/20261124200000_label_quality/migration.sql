-- Label quality (../shared/DESIGN.md §10, docs/decisions.md "Label quality"): label spaces with their
-- Dawid-Skene model, per-labeler rows, the confidence policy and gold tasks, customer settings.
--
-- A label space is a customer's (question, ordered options). Its id is derived from them
-- (packages/store/src/spaces.ts `labelSpaceId`: "lsp_" + the first 32 hex digits of SHA-256 over the
-- customer id and the byte-length-prefixed question and options), so a submission names its space without
-- a lookup and two concurrent submissions of a new space insert the same row. The backfill below computes
-- the same id for existing tasks.
-- (No semicolon in these comments: the migration engine splits the script at every one.)
CREATE TABLE "label_spaces" (
    "id" TEXT NOT NULL,
    "customer_id" TEXT NOT NULL,
    "question" TEXT NOT NULL,
    "options" TEXT[],
    "model" JSONB,
    "version" INTEGER NOT NULL DEFAULT 0,
    "fitted_through" TIMESTAMPTZ(3),
    "fitted_labels" INTEGER NOT NULL DEFAULT 0,
    "fitted_at" TIMESTAMPTZ(3),
    "fit_ms" INTEGER,
    "calibration_bins" JSONB,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "label_spaces_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "label_spaces_customer_id_idx" ON "label_spaces"("customer_id");
ALTER TABLE "label_spaces" ADD CONSTRAINT "label_spaces_customer_id_fkey" FOREIGN KEY ("customer_id") REFERENCES "customers"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

CREATE TABLE "labeler_models" (
    "label_space_id" TEXT NOT NULL,
    "labeler_id" TEXT NOT NULL,
    "params" JSONB,
    "version" INTEGER NOT NULL DEFAULT 0,
    "gold_answers" INTEGER NOT NULL DEFAULT 0,
    "gold_correct" INTEGER NOT NULL DEFAULT 0,
    "excluded_at" TIMESTAMPTZ(3),
    CONSTRAINT "labeler_models_pkey" PRIMARY KEY ("label_space_id", "labeler_id")
);
ALTER TABLE "labeler_models" ADD CONSTRAINT "labeler_models_label_space_id_fkey" FOREIGN KEY ("label_space_id") REFERENCES "label_spaces"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "labeler_models" ADD CONSTRAINT "labeler_models_labeler_id_fkey" FOREIGN KEY ("labeler_id") REFERENCES "labelers"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

ALTER TYPE "Resolution" ADD VALUE 'confidence';

ALTER TABLE "customers" ADD COLUMN "settings" JSONB NOT NULL DEFAULT '{}';

ALTER TABLE "jobs" ADD COLUMN "confidence_target" DOUBLE PRECISION;
ALTER TABLE "jobs" ADD COLUMN "min_labels" INTEGER;
ALTER TABLE "jobs" ADD COLUMN "gold_task_count" INTEGER NOT NULL DEFAULT 0;

-- the one-coin model's agreement counters give way to the label spaces' Dawid-Skene models
ALTER TABLE "labelers" DROP COLUMN "settled_labels";
ALTER TABLE "labelers" DROP COLUMN "agreed_labels";

ALTER TABLE "tasks" ADD COLUMN "label_space_id" TEXT;
ALTER TABLE "tasks" ADD COLUMN "confidence_target" DOUBLE PRECISION;
ALTER TABLE "tasks" ADD COLUMN "min_labels" INTEGER;
ALTER TABLE "tasks" ADD COLUMN "gold_label" TEXT;
ALTER TABLE "tasks" ADD CONSTRAINT "tasks_label_space_id_fkey" FOREIGN KEY ("label_space_id") REFERENCES "label_spaces"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
-- gold tasks a generic claim may serve: open gold tasks of a label space
CREATE INDEX "tasks_label_space_id_gold_idx" ON "tasks"("label_space_id", "created_at") WHERE "gold_label" IS NOT NULL;

ALTER TABLE "labels" ADD COLUMN "label_space_id" TEXT;
-- the refit's reads (every label of a space) and its staleness check (the newest label of a space)
CREATE INDEX "labels_label_space_id_created_at_idx" ON "labels"("label_space_id", "created_at");

-- Backfill: the label space of every existing task, then of its labels.
INSERT INTO "label_spaces" ("id", "customer_id", "question", "options")
SELECT DISTINCT ON (s.id) s.id, s.customer_id, s.question, s.options
FROM (
  SELECT 'lsp_' || substr(encode(sha256(convert_to(
           t.customer_id || E'\n' || octet_length(t.question) || ':' || t.question ||
           COALESCE((SELECT string_agg(E'\n' || octet_length(o) || ':' || o, '' ORDER BY i) FROM unnest(t.options) WITH ORDINALITY AS x(o, i)), ''),
         'UTF8')), 'hex'), 1, 32) AS id, t.customer_id, t.question, t.options
  FROM "tasks" t
) s
ON CONFLICT ("id") DO NOTHING;

UPDATE "tasks" t SET "label_space_id" = 'lsp_' || substr(encode(sha256(convert_to(
           t.customer_id || E'\n' || octet_length(t.question) || ':' || t.question ||
           COALESCE((SELECT string_agg(E'\n' || octet_length(o) || ':' || o, '' ORDER BY i) FROM unnest(t.options) WITH ORDINALITY AS x(o, i)), ''),
         'UTF8')), 'hex'), 1, 32)
WHERE "label_space_id" IS NULL;

UPDATE "labels" l SET "label_space_id" = t."label_space_id" FROM "tasks" t WHERE t."id" = l."task_id" AND l."label_space_id" IS NULL;

-- every task and label names its space from now on
ALTER TABLE "tasks" ALTER COLUMN "label_space_id" SET NOT NULL;
ALTER TABLE "labels" ALTER COLUMN "label_space_id" SET NOT NULL;
