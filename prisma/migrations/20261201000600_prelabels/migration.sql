-- Pre-labels (docs/contract.md, Pre-labels): a task may carry a model prediction, recorded as the label of a
-- labeler named model:NAME, one per customer and model name. Such a labeler has no key: its key_hash is a
-- value no key hashes to (model: and its id), and disabled_at stays null. customer_id and model are null for people.
-- tasks.prelabel keeps the pre-label as given (answer, model, score), tasks.show_prelabel whether labelers see it.
-- (No quote marks or semicolons in these comments: the migration runner splits statements on them.)
ALTER TABLE "labelers" ADD COLUMN "customer_id" TEXT;
ALTER TABLE "labelers" ADD COLUMN "model" TEXT;

ALTER TABLE "labelers" ADD CONSTRAINT "labelers_customer_id_fkey"
    FOREIGN KEY ("customer_id") REFERENCES "customers"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

CREATE UNIQUE INDEX "labelers_customer_id_model_key" ON "labelers"("customer_id", "model");

ALTER TABLE "tasks" ADD COLUMN "prelabel" JSONB;
ALTER TABLE "tasks" ADD COLUMN "show_prelabel" BOOLEAN NOT NULL DEFAULT false;

-- a manifest job label_spec.show_prelabel: its tasks get it
ALTER TABLE "jobs" ADD COLUMN "show_prelabel" BOOLEAN NOT NULL DEFAULT false;
