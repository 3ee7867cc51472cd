-- min_gain of the confidence policy (contract §quality, decision 0267): a task also settles, resolution no_gain,
-- when the best outcome of one more label cannot raise the calibrated probability of a right consensus by it.
-- (No quote marks or semicolons in these comments: the migration runner splits statements on them.)
ALTER TYPE "Resolution" ADD VALUE IF NOT EXISTS 'no_gain';
ALTER TABLE "tasks" ADD COLUMN "min_gain" DOUBLE PRECISION;
ALTER TABLE "jobs" ADD COLUMN "min_gain" DOUBLE PRECISION;
