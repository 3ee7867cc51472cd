/**
 * Quota (contract §accounts), counted in labels: `customers.quota_used` = labels reserved by open tasks
 * plus labels charged beyond reservations. Every statement that moves it is built here: a submission
 * reserves `consensus_threshold` labels per task atomically (a conditional UPDATE under the customer's row
 * lock, so concurrent reservations never oversell); a label beyond its task's reservation is charged; a
 * canceled task or a failed manifest job releases what it still holds.
 */
import { Prisma } from "./generated/client";

/** Thrown when fewer units remain than a reservation asks for (the caller's transaction rolls back). */
export class QuotaExhaustedError extends Error {
  override name = "QuotaExhaustedError";
}

/**
 * A data-modifying CTE body: reserves `need.n` units for every customer of the relation `need`
 * (columns `customer_id`, `n`) that has them left, and returns the ids of those customers (`RETURNING
 * c.id`); a customer short of quota is left untouched and absent from the result.
 */
export function reserveSql(need: Prisma.Sql): Prisma.Sql {
  return Prisma.sql`
    UPDATE customers c SET quota_used = c.quota_used + need.n
    FROM ${need}
    WHERE c.id = need.customer_id AND c.label_quota - c.quota_used >= need.n
    RETURNING c.id`;
}

/** `reserveSql` for one customer and `units`. */
export function reserveOneSql(customerId: string, units: number): Prisma.Sql {
  return reserveSql(Prisma.sql`(SELECT ${customerId}::text AS customer_id, ${units}::int AS n) need`);
}

/**
 * Charges labels recorded beyond their tasks' reservations: locks the customers owing units in id order
 * (the order every writer locks customers in), then adds the units. Two statements of one transaction.
 */
export function chargeSql(charges: ReadonlyMap<string, number>): [Prisma.Sql, Prisma.Sql] {
  const ids = [...charges.keys()].sort();
  const units = ids.map((id) => charges.get(id) as number);
  return [
    Prisma.sql`SELECT id FROM customers WHERE id = ANY(${ids}::text[]) ORDER BY id FOR UPDATE`,
    Prisma.sql`
      UPDATE customers c SET quota_used = c.quota_used + ch.units
      FROM unnest(${ids}::text[], ${units}::int[]) AS ch(id, units)
      WHERE c.id = ch.id`,
  ];
}

/** Returns `units` reserved units of a customer (canceled or discarded tasks); never below zero. */
export function releaseSql(customerId: string, units: Prisma.Sql | number): Prisma.Sql {
  return Prisma.sql`UPDATE customers SET quota_used = GREATEST(0, quota_used - (${units})::int) WHERE id = ${customerId}`;
}
