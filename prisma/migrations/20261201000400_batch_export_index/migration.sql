-- The export of a batch (contract §exports) walks its tasks by id with a keyset cursor, one page per query:
-- this index gives each page in order without sorting the whole batch. Partial like the other batch index
-- (most tasks have no batch).
CREATE INDEX "tasks_batch_id_id_idx" ON "tasks"("batch_id", "id") WHERE "batch_id" IS NOT NULL;
