-- On-chain settlement (../shared/DESIGN.md §5, LEDGER=evm): anchor batches as rows, each ledger record's
-- membership (anchor, leaf index, inclusion proof) on its own row, and the deployed anchor contract per chain.
-- A record belongs to at most one anchor (one column), and batches never overlap (unique first and last
-- sequence, consecutive ranges written under the anchorer's leadership).
-- (No semicolon in these comments: the migration engine splits the script at every one.)
CREATE TYPE "AnchorState" AS ENUM ('open', 'sent', 'confirmed');

CREATE TABLE "anchors" (
    "id" BIGSERIAL NOT NULL,
    "state" "AnchorState" NOT NULL DEFAULT 'open',
    "first_seq" BIGINT NOT NULL,
    "last_seq" BIGINT NOT NULL,
    "tree_size" INTEGER NOT NULL,
    "merkle_root" TEXT NOT NULL,
    "chain_id" INTEGER NOT NULL,
    "contract" TEXT NOT NULL,
    "tx_hash" TEXT,
    "raw_tx" TEXT,
    "nonce" INTEGER,
    "tx_hashes" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "sends" INTEGER NOT NULL DEFAULT 0,
    "block_number" BIGINT,
    "block_hash" TEXT,
    "gas_used" BIGINT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "sent_at" TIMESTAMPTZ(3),
    "confirmed_at" TIMESTAMPTZ(3),
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "anchors_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "anchors_range" CHECK ("first_seq" <= "last_seq" AND "tree_size" = "last_seq" - "first_seq" + 1)
);

CREATE UNIQUE INDEX "anchors_first_seq_key" ON "anchors"("first_seq");
CREATE UNIQUE INDEX "anchors_last_seq_key" ON "anchors"("last_seq");
CREATE INDEX "anchors_state_idx" ON "anchors"("state");

CREATE TABLE "anchor_contracts" (
    "chain_id" INTEGER NOT NULL,
    "address" TEXT NOT NULL,
    "deploy_tx" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "anchor_contracts_pkey" PRIMARY KEY ("chain_id")
);

ALTER TABLE "ledger_entries" ADD COLUMN "anchor_id" BIGINT,
ADD COLUMN "leaf_index" INTEGER,
ADD COLUMN "proof" JSONB;

CREATE INDEX "ledger_entries_anchor_id_idx" ON "ledger_entries"("anchor_id");
