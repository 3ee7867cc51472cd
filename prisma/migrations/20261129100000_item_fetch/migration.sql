-- The item fetch of a text_span task created without data_text (docs/decisions/0191): why the body of its
-- data_url could not become its text (not found, too long, not UTF-8, unreachable after every retry). The task
-- is canceled with this reason, null for every other task.
-- (No quote marks or semicolons in these comments: the migration runner splits statements on them.)
ALTER TABLE "tasks" ADD COLUMN "item_error" TEXT;

-- the reconciliation finds the tasks still waiting for their item (a partial index: few rows, most tasks never wait)
CREATE INDEX "tasks_item_pending_idx" ON "tasks" ("updated_at") WHERE "item_pending";
