import type { Prisma } from "./generated/client";

/** Thrown by `reserveQuota` when fewer units remain than asked for (the caller's transaction rolls back). */
export class QuotaExhaustedError extends Error {
  override name = "QuotaExhaustedError";
}

/**
 * Reserves `units` labels of a customer's quota (DESIGN §6), atomically: one conditional UPDATE holds the
 * customer row lock, so concurrent reservations never oversell. Call inside the transaction that creates
 * the tasks. @throws QuotaExhaustedError.
 */
export async function reserveQuota(tx: Prisma.TransactionClient, customerId: string, units: number): Promise<void> {
  const updated = await tx.$executeRaw`
    UPDATE customers SET quota_used = quota_used + ${units}
    WHERE id = ${customerId} AND label_quota - quota_used >= ${units}`;
  if (updated !== 1) throw new QuotaExhaustedError(`fewer than ${units} labels of quota remain`);
}

/** Returns reserved units (canceled or discarded tasks). Never below zero. */
export async function releaseQuota(tx: Prisma.TransactionClient, customerId: string, units: number): Promise<void> {
  if (units <= 0) return;
  await tx.$executeRaw`UPDATE customers SET quota_used = GREATEST(0, quota_used - ${units}) WHERE id = ${customerId}`;
}
