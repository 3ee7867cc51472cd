-- The decision is taken when a label is recorded (packages/store/src/decision.ts, docs/decisions.md
-- "One store, one runtime"): a deciding label moves its task to `settling` with its label, confidence,
-- posterior and resolution, and the settlement keeps them.
--
-- 1. `labels_needed` held the claim cap (how many labelers may hold a claim at once), not what the label
--    response calls labels_needed: it is renamed for what it is.
-- 2. The decision's posterior (option -> probability).
-- 3. An open task always takes at least one more claim. A task left open with a cap of 0 by the earlier
--    code (decidable, its consensus job not yet run) makes this migration fail here: drain the consensus
--    queue of the earlier version before migrating.
-- (No semicolon in these comments: the migration engine splits the script at every one.)
ALTER TABLE "tasks" RENAME COLUMN "labels_needed" TO "claim_cap";

ALTER TABLE "tasks" ADD COLUMN "posterior" JSONB;

ALTER TABLE "tasks" ADD CONSTRAINT "open_tasks_claimable" CHECK (NOT ("status" IN ('pending', 'labeling') AND "claim_cap" < 1));
