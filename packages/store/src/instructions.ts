/**
 * Instructions of label spaces (docs/contract.md, Instructions): the versions of each space's guide
 * (`label_space_instructions`: Markdown and worked examples) and the space's current version
 * (`label_spaces.instructions_version`). A guide is recorded when a task, batch or manifest job gives one;
 * giving the current guide again (same digest) makes no new version, so a retried submission changes nothing.
 *
 * Concurrency: a space's versions are only written under its row lock (`FOR UPDATE`), taken first in the
 * transaction; the version read after it is the latest committed, so two submissions of different guides
 * make versions n + 1 and n + 2, never two of n + 1.
 */
import { createHash } from "node:crypto";
import { type AnyLabelSpec, choicesOf, type Guide, type InstructionExample, isReservedTaskType } from "@labelgate/api";
import { canonicalJson } from "@labelgate/canonical-json";
import type { Db } from "./database";
import { Prisma } from "./generated/client";
import { queryRows, withTransaction } from "./sql";

/** A guide to record for a label space: the space (created when new, as a task of `type` and `spec` would) and the guide. */
export interface GuideEntry {
  spaceId: string;
  customerId: string;
  type: string;
  /** the label spec without its guide (its identity) */
  spec: AnyLabelSpec;
  guide: Guide;
}

/** A version of a space's instructions as stored. */
export interface InstructionsVersion {
  labelSpaceId: string;
  version: number;
  instructions: string | null;
  examples: InstructionExample[];
  createdAt: Date;
}

/** SHA-256 (hex) of the canonical JSON of a guide: equal guides, equal digests. */
export function guideDigest(guide: Guide): string {
  return createHash("sha256")
    .update(canonicalJson({ instructions: guide.instructions, examples: guide.examples }))
    .digest("hex");
}

export function instructionsStore(db: Db) {
  const { pool } = db;
  return {
    /**
     * Records each entry's guide as its space's new current version unless it is the current one already;
     * a space that does not exist yet (a manifest job's, before its ingestion) is created. Entries of one
     * space: the last one counts. Returns each space's current version after the call.
     */
    async record(entries: GuideEntry[]): Promise<Map<string, number>> {
      const last = new Map<string, GuideEntry>();
      for (const e of entries) last.set(e.spaceId, e);
      const versions = new Map<string, number>();
      for (const e of last.values()) {
        const digest = guideDigest(e.guide);
        const reserved = isReservedTaskType(e.type);
        const version = await withTransaction(pool, async (run) => {
          const [, rows] = await run<[object, { version: number | null; digest: string | null }]>([
            Prisma.sql`
              INSERT INTO label_spaces (id, customer_id, question, options, task_type, label_spec)
              VALUES (${e.spaceId}, ${e.customerId}, ${e.spec.question}, ${choicesOf(e.type, e.spec)}::text[],
                      ${reserved ? e.type : null}, ${reserved ? JSON.stringify(e.spec) : null}::jsonb)
              ON CONFLICT (id) DO NOTHING`,
            Prisma.sql`
              SELECT s.instructions_version AS version, i.digest FROM label_spaces s
              LEFT JOIN label_space_instructions i ON i.label_space_id = s.id AND i.version = s.instructions_version
              WHERE s.id = ${e.spaceId} FOR UPDATE OF s`,
          ]);
          const current = rows[0];
          if (current?.version != null && current.digest === digest) return current.version;
          const next = (current?.version ?? 0) + 1;
          await run(
            [
              Prisma.sql`
                INSERT INTO label_space_instructions (label_space_id, version, instructions, examples, digest)
                VALUES (${e.spaceId}, ${next}, ${e.guide.instructions}, ${JSON.stringify(e.guide.examples)}::jsonb, ${digest})`,
              Prisma.sql`UPDATE label_spaces SET instructions_version = ${next} WHERE id = ${e.spaceId}`,
            ],
            { commit: true },
          );
          return next;
        });
        versions.set(e.spaceId, version);
      }
      return versions;
    },

    /** The current instructions of a label space, or undefined when the space does not exist or has none. */
    async current(spaceId: string): Promise<InstructionsVersion | undefined> {
      const [row] = await queryRows<{
        version: number;
        instructions: string | null;
        examples: InstructionExample[];
        created_at: Date;
      }>(
        pool,
        Prisma.sql`
          SELECT i.version, i.instructions, i.examples, i.created_at FROM label_spaces s
          JOIN label_space_instructions i ON i.label_space_id = s.id AND i.version = s.instructions_version
          WHERE s.id = ${spaceId}`,
      );
      return row
        ? { labelSpaceId: spaceId, version: row.version, instructions: row.instructions, examples: row.examples, createdAt: row.created_at }
        : undefined;
    },
  };
}

export type InstructionsStore = ReturnType<typeof instructionsStore>;
