-- Retry-safe claims (../shared/DESIGN.md §4, issue 28): POST /v1/labeling/claims takes an Idempotency-Key, and
-- the same labeler and key return the same claim while it is live.
--
-- The key is stored on the claim it made. The unique index covers only claims with a key whose status is
-- active, so a labeled or released claim leaves it and its key may claim again (a claim that expired by time
-- is marked expired when its key comes back, packages/store/src/labeling.ts). A claim made without a key
-- is not in the index, so the generic claim pays nothing for it. A keyed claim inserts with ON CONFLICT DO
-- NOTHING on this index: a retry finds the first claim instead of making a second one, even when both race.
-- Prisma's schema cannot say the index is partial (schema.prisma keeps the plain declaration under the same name).
-- (No semicolon in these comments: the migration engine splits the script at every one.)
ALTER TABLE "claims" ADD COLUMN "idempotency_key" TEXT;

CREATE UNIQUE INDEX "claims_labeler_id_idempotency_key_key" ON "claims"("labeler_id", "idempotency_key") WHERE "idempotency_key" IS NOT NULL AND "status" = 'active';
