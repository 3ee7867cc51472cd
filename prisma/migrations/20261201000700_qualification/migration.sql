-- Qualification (contract §qualification, docs/decisions/0276): a labeler's exam state in a label space, the
-- reason of its exclusion, and the explanation a gold task shows after a training answer.
ALTER TABLE "labeler_models" ADD COLUMN "qualified_at" TIMESTAMPTZ(3);
ALTER TABLE "labeler_models" ADD COLUMN "excluded_reason" TEXT;
ALTER TABLE "tasks" ADD COLUMN "gold_explanation" TEXT;
