-- Instructions of a label space (docs/contract.md, Instructions): each version given, numbered from 1 per space.
-- The latest is the current one, named by label_spaces.instructions_version (null while the space has none).
-- digest is the SHA-256 of the canonical JSON of the instructions and examples: giving the current ones again
-- makes no new version.
-- (No quote marks or semicolons in these comments: the migration runner splits statements on them.)
ALTER TABLE "label_spaces" ADD COLUMN "instructions_version" INTEGER;

CREATE TABLE "label_space_instructions" (
    "label_space_id" TEXT NOT NULL,
    "version" INTEGER NOT NULL,
    "instructions" TEXT,
    "examples" JSONB NOT NULL DEFAULT '[]',
    "digest" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "label_space_instructions_pkey" PRIMARY KEY ("label_space_id", "version")
);

ALTER TABLE "label_space_instructions" ADD CONSTRAINT "label_space_instructions_label_space_id_fkey"
    FOREIGN KEY ("label_space_id") REFERENCES "label_spaces"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
