/**
 * SQL fragments shared by the store's modules: status conditions derived from the state machine's lists
 * (lifecycle.ts), so no statement spells a status list of its own.
 */
import type { TaskStatus } from "@labelgate/api";
import { Prisma } from "./generated/client";

/** `<column> IN ('a', 'b')` for a list of enum values (literals of our own lists, never user input). */
export function statusIn(column: string, statuses: readonly TaskStatus[]): Prisma.Sql {
  if (statuses.length === 0) throw new Error("statusIn: empty status list");
  for (const s of statuses) if (!/^[a-z_]+$/.test(s)) throw new Error(`not a status: ${s}`);
  return Prisma.raw(`${column} IN (${statuses.map((s) => `'${s}'`).join(", ")})`);
}
