-- Task types (docs/contract.md, DESIGN 12): multi_label_classification, bounding_box and text_span beside single
-- choice. Nullable columns, so every existing row keeps meaning exactly what it meant (null = single choice).
-- For a reserved type, the value of a label and the gold_label of a gold task hold the canonical JSON of the answer.
-- (No quote marks or semicolons in these comments: the migration runner splits statements on them.)

-- the label_spec of a reserved type as submitted, with options, classes or entity_types, the question and
-- options columns keep the question and those names for every type
ALTER TABLE "tasks" ADD COLUMN "label_spec" JSONB;
-- the text of a text_span task (given as data_text, or the body of data_url once fetched)
ALTER TABLE "tasks" ADD COLUMN "data_text" TEXT;
-- the consensus of a reserved type at the decision: the shape of an answer, each part with its confidence
ALTER TABLE "tasks" ADD COLUMN "consensus" JSONB;
-- the item must be fetched before the task can be labeled (a text_span task without data_text: the body of its
-- data_url), such a task is not claimable until the fetch stores the text and clears this
ALTER TABLE "tasks" ADD COLUMN "item_pending" BOOLEAN NOT NULL DEFAULT false;

-- the type of the tasks of a label space (null: single choice) and its label_spec (reserved types)
ALTER TABLE "label_spaces" ADD COLUMN "task_type" TEXT;
ALTER TABLE "label_spaces" ADD COLUMN "label_spec" JSONB;

-- the label_spec of a manifest job (reserved types)
ALTER TABLE "jobs" ADD COLUMN "label_spec" JSONB;
