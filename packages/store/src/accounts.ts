/**
 * Accounts (contract §authentication, §labelers, §accounts): customers, their API keys (only SHA-256 hashes are
 * stored), labelers and the operator's changes (quota, tier upgrade). Key lookups run on every request:
 * they are batched (one statement on the unique key_hash index for the concurrent requests of a process).
 */
import type { Tier } from "@labelgate/api";
import { Batcher, newId } from "@labelgate/core";
import type { Db } from "./database";
import { isUniqueViolation, StoreError } from "./errors";
import { newestFirstPage } from "./fragments";
import type { Customer, Labeler } from "./generated/client";
import { Prisma } from "./generated/client";
import { queryRows, withTransaction } from "./sql";

/** An API key as issued (core's `issueKey`): the raw key is never stored, only its hash and hint. */
export interface IssuedKey {
  hash: string;
  hint: string;
}

export interface CustomerKey {
  key_hash: string;
  /** the key's id (rate limits are per key) */
  id: string;
  customer_id: string;
  tier: Tier;
  /** the customer's stored settings (settings.ts: task defaults apply to its submissions) */
  settings: unknown;
}

export interface LabelerKey {
  key_hash: string;
  id: string;
}

/** A customer with the hint of its newest active key. */
export interface CustomerWithHint {
  customer: Customer;
  hint: string | null;
}

/**
 * Key lookups by SHA-256 shared by the concurrent requests of this process: one statement per batch (an
 * idle gateway looks each key up alone, at once). Every request still reads the key's current row, so a
 * revoked key is refused from the next request on.
 */
function keyLookup<R extends { key_hash: string }>(
  db: Db,
  sql: (hashes: string[]) => Prisma.Sql,
): (hash: string) => Promise<R | undefined> {
  const batcher = new Batcher<string, R | undefined>(
    async (hashes) => {
      const rows = await queryRows<R>(db.pool, sql([...new Set(hashes)]));
      const byHash = new Map(rows.map((r) => [r.key_hash, r]));
      return hashes.map((h) => byHash.get(h));
    },
    { maxInFlight: 2 },
  );
  return (hash) => batcher.call(hash);
}

export function accountsStore(db: Db) {
  const { prisma } = db;
  const latestHint = async (customerId: string): Promise<string | null> => {
    const key = await prisma.apiKey.findFirst({
      where: { customerId, revokedAt: null },
      orderBy: { createdAt: "desc" },
      select: { hint: true },
    });
    return key?.hint ?? null;
  };

  return {
    /** The active customer key with this hash and its customer's settings (undefined: unknown or revoked). */
    customerKey: keyLookup<CustomerKey>(
      db,
      (hashes) => Prisma.sql`
        SELECT k.key_hash, k.id, k.customer_id, k.tier::text AS tier, c.settings
        FROM api_keys k JOIN customers c ON c.id = k.customer_id
        WHERE k.key_hash = ANY(${hashes}::text[]) AND k.revoked_at IS NULL`,
    ),

    /** The active labeler with this key hash (undefined: unknown or disabled). */
    labelerKey: keyLookup<LabelerKey>(
      db,
      (hashes) => Prisma.sql`SELECT key_hash, id FROM labelers WHERE key_hash = ANY(${hashes}::text[]) AND disabled_at IS NULL`,
    ),

    /**
     * Registers a sandbox customer with its first key. @throws StoreError emailTaken (409).
     */
    async register(input: { name: string; email: string; labelQuota: number; key: IssuedKey }): Promise<Customer> {
      try {
        return await prisma.customer.create({
          data: {
            id: newId("customer"),
            name: input.name,
            email: input.email,
            tier: "sandbox",
            labelQuota: input.labelQuota,
            apiKeys: { create: { id: newId("apiKey"), keyHash: input.key.hash, hint: input.key.hint, tier: "sandbox" } },
          },
        });
      } catch (err) {
        if (isUniqueViolation(err)) throw new StoreError("emailTaken");
        throw err;
      }
    },

    /** A customer and its newest key's hint. @throws StoreError customerNotFound */
    async profile(customerId: string): Promise<CustomerWithHint> {
      const customer = await prisma.customer.findUnique({ where: { id: customerId } });
      if (!customer) throw new StoreError("customerNotFound");
      return { customer, hint: await latestHint(customerId) };
    },

    /** The customer's current tier. @throws StoreError customerGone when the customer vanished */
    async tier(customerId: string): Promise<Tier> {
      const found = await prisma.customer.findUnique({ where: { id: customerId }, select: { tier: true } });
      if (!found) throw new StoreError("customerGone");
      return found.tier;
    },

    /** A page of customers, newest first (operators). */
    async list(query: { page: number; perPage: number; tier?: Tier }): Promise<{ total: number; items: CustomerWithHint[] }> {
      const where = query.tier ? { tier: query.tier } : {};
      const [total, rows] = await Promise.all([
        prisma.customer.count({ where }),
        prisma.customer.findMany({ where, ...newestFirstPage(query.page, query.perPage) }),
      ]);
      const hints = await Promise.all(rows.map((c) => latestHint(c.id)));
      return { total, items: rows.map((customer, i) => ({ customer, hint: hints[i] ?? null })) };
    },

    /** Sets a customer's label quota. @throws StoreError customerNotFound */
    async setQuota(customerId: string, labelQuota: number): Promise<CustomerWithHint> {
      const updated = await prisma.customer.updateMany({ where: { id: customerId }, data: { labelQuota } });
      if (updated.count === 0) throw new StoreError("customerNotFound");
      const customer = await prisma.customer.findUniqueOrThrow({ where: { id: customerId } });
      return { customer, hint: await latestHint(customerId) };
    },

    /**
     * Upgrades a customer to production (contract §authentication): stores the new `sk_live_` key, raises the quota to
     * `productionLabelQuota` if below it, and revokes the sandbox key(s) unless `keepSandboxKey`.
     * @throws StoreError customerNotFound | alreadyProduction
     */
    async upgrade(
      customerId: string,
      options: { key: IssuedKey; productionLabelQuota: number; keepSandboxKey: boolean },
    ): Promise<{ customer: Customer; revoked: number }> {
      const revoked = await withTransaction(db.pool, async (run) => {
        const [, rows] = await run<[object, { tier: Tier; label_quota: number }]>([
          Prisma.sql`SELECT id FROM customers WHERE id = ${customerId} FOR UPDATE`,
          Prisma.sql`SELECT tier::text AS tier, label_quota FROM customers WHERE id = ${customerId}`,
        ]);
        const current = rows[0];
        if (!current) throw new StoreError("customerNotFound");
        if (current.tier === "production") throw new StoreError("alreadyProduction");
        const [, , revokedKeys] = await run<[object, object, { id: string }]>(
          [
            Prisma.sql`UPDATE customers SET tier = 'production', label_quota = GREATEST(label_quota, ${options.productionLabelQuota}::int)
                       WHERE id = ${customerId}`,
            Prisma.sql`INSERT INTO api_keys (id, customer_id, key_hash, hint, tier)
                       VALUES (${newId("apiKey")}, ${customerId}, ${options.key.hash}, ${options.key.hint}, 'production')`,
            Prisma.sql`UPDATE api_keys SET revoked_at = now()
                       WHERE customer_id = ${customerId} AND tier = 'sandbox' AND revoked_at IS NULL AND NOT ${options.keepSandboxKey}::boolean
                       RETURNING id`,
          ],
          { commit: true },
        );
        return revokedKeys.length;
      });
      const customer = await prisma.customer.findUniqueOrThrow({ where: { id: customerId } });
      return { customer, revoked };
    },

    /** Creates a labeler with its key (the raw key is returned once by the caller, never stored). */
    async createLabeler(name: string, key: IssuedKey): Promise<Labeler> {
      return prisma.labeler.create({ data: { id: newId("labeler"), name, keyHash: key.hash, hint: key.hint } });
    },
  };
}

export type AccountsStore = ReturnType<typeof accountsStore>;
