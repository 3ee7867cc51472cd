/**
 * SQL fragments shared by the store's modules: status conditions derived from the state machine's lists
 * (lifecycle.ts), so no statement spells a status list of its own; and the order and window of a page of a
 * Prisma list query.
 */
import type { TaskStatus } from "@labelgate/api";
import { Prisma } from "./generated/client";

/** `<column> IN ('a', 'b')` for a list of enum values (literals of our own lists, never user input). */
export function statusIn(column: string, statuses: readonly TaskStatus[]): Prisma.Sql {
  if (statuses.length === 0) throw new Error("statusIn: empty status list");
  for (const s of statuses) if (!/^[a-z_]+$/.test(s)) throw new Error(`not a status: ${s}`);
  return Prisma.raw(`${column} IN (${statuses.map((s) => `'${s}'`).join(", ")})`);
}

/** Prisma `orderBy`, `skip` and `take` of page `page` (from 1) of `perPage` rows, newest first (ties: id descending). */
export function newestFirstPage(page: number, perPage: number) {
  return {
    orderBy: [{ createdAt: "desc" as const }, { id: "desc" as const }],
    skip: (page - 1) * perPage,
    take: perPage,
  };
}
