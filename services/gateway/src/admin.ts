/**
 * Operator routes (`Authorization: Bearer <ADMIN_TOKEN>`): labelers, customer quota, tier upgrade and the
 * customer list. Wrapped by the operator CLI (`pnpm admin ...`, scripts/admin.ts).
 */

import { ApiError, customerPatchBody, customersQuery, labelerBody, pathId, upgradeBody } from "@labelgate/api";
import { issueKey, KEY_PREFIX, newId } from "@labelgate/core";
import type { PrismaClient } from "@labelgate/store";
import { type Request, type RequestHandler, Router } from "express";
import { parse } from "./errors";
import { customerView } from "./views";

export interface AdminRouteDeps {
  prisma: PrismaClient;
  /** label quota a customer is raised to on upgrade (if below) */
  productionLabelQuota: number;
}

function customerId(req: Request): string {
  const id = req.params.id;
  if (typeof id !== "string" || !pathId("cust_").safeParse(id).success) throw new ApiError("customerNotFound");
  return id;
}

async function latestHint(prisma: PrismaClient, id: string): Promise<string | null> {
  const key = await prisma.apiKey.findFirst({
    where: { customerId: id, revokedAt: null },
    orderBy: { createdAt: "desc" },
    select: { hint: true },
  });
  return key?.hint ?? null;
}

export function adminRoutes(deps: AdminRouteDeps, admin: RequestHandler, json: RequestHandler): Router {
  const { prisma } = deps;
  const router = Router();

  router.post("/labelers", admin, json, async (req, res) => {
    const body = parse(labelerBody, req.body);
    const key = issueKey(KEY_PREFIX.labeler);
    const created = await prisma.labeler.create({ data: { id: newId("labeler"), name: body.name, keyHash: key.hash, hint: key.hint } });
    res.status(201).json({ labeler_id: created.id, name: created.name, api_key: key.key, created_at: created.createdAt.toISOString() });
  });

  router.get("/customers", admin, async (req, res) => {
    const q = parse(customersQuery, req.query);
    const where = q.tier ? { tier: q.tier } : {};
    const [total, rows] = await Promise.all([
      prisma.customer.count({ where }),
      prisma.customer.findMany({
        where,
        orderBy: [{ createdAt: "desc" }, { id: "desc" }],
        skip: (q.page - 1) * q.per_page,
        take: q.per_page,
      }),
    ]);
    const hints = await Promise.all(rows.map((c) => latestHint(prisma, c.id)));
    res.json({ page: q.page, per_page: q.per_page, total, items: rows.map((c, i) => customerView(c, hints[i] ?? null)) });
  });

  router.patch("/customers/:id", admin, json, async (req, res) => {
    const id = customerId(req);
    const body = parse(customerPatchBody, req.body);
    const updated = await prisma.customer.updateMany({ where: { id }, data: { labelQuota: body.label_quota } });
    if (updated.count === 0) throw new ApiError("customerNotFound");
    const found = await prisma.customer.findUniqueOrThrow({ where: { id } });
    res.json(customerView(found, await latestHint(prisma, id)));
  });

  /**
   * Upgrade to production (SPEC §5.3): issues an `sk_live_` key (returned once), raises the quota to the
   * production default if below it, and revokes the sandbox key(s) unless `keep_sandbox_key` is true.
   * 409 when the customer is already on production (live-key rotation is a support matter, SPEC §5.7).
   */
  router.post("/customers/:id/upgrade", admin, json, async (req, res) => {
    const id = customerId(req);
    const body = parse(upgradeBody, req.body);
    const key = issueKey(KEY_PREFIX.production);
    const result = await prisma.$transaction(async (tx) => {
      const locked = await tx.$queryRaw<{ tier: string; label_quota: number }[]>`
        SELECT tier::text AS tier, label_quota FROM customers WHERE id = ${id} FOR UPDATE`;
      const current = locked[0];
      if (!current) throw new ApiError("customerNotFound");
      if (current.tier === "production") throw new ApiError("alreadyProduction");
      const customer = await tx.customer.update({
        where: { id },
        data: { tier: "production", labelQuota: Math.max(current.label_quota, deps.productionLabelQuota) },
      });
      const revoked = body.keep_sandbox_key
        ? 0
        : (await tx.apiKey.updateMany({ where: { customerId: id, tier: "sandbox", revokedAt: null }, data: { revokedAt: new Date() } }))
            .count;
      await tx.apiKey.create({ data: { id: newId("apiKey"), customerId: id, keyHash: key.hash, hint: key.hint, tier: "production" } });
      return { customer, revoked };
    });
    res.json({
      ...customerView(result.customer, key.hint),
      api_key: key.key,
      sandbox_keys_revoked: result.revoked,
      message: "Store this live API key now: it is shown only once and cannot be retrieved again.",
    });
  });

  return router;
}
