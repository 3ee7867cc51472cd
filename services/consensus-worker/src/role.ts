/**
 * The consensus worker's role on the runtime: its handlers on the `consensus`, `reconcile`, `refitSweep` and
 * `modelRefit` queues, the reconcile and refit-sweep schedules (registered at start, re-registered when a
 * Redis restarted without its data lost them), the fit threads of the refits, and one reconciliation pass at
 * start, so work lost while no worker ran is requeued at once rather than at the first scheduled run.
 */

import { ledgerMode } from "@labelgate/config";
import { queueKeysOf } from "@labelgate/queue";
import { defineRole } from "@labelgate/runtime";
import { Anchorer } from "./anchorer";
import { consensusHandlers } from "./handlers";
import { reconcile } from "./reconcile";
import { createFitPool } from "./refit";

/** Extra time a pending delivery gets beyond its attempt's timeout before it counts as lost, ms. */
const DELIVERY_GRACE_MARGIN_MS = 2000;

export const consensusRole = defineRole({
  role: "consensus-worker",
  queues: queueKeysOf("consensus-worker"),
  async start(ctx, env) {
    const { store, queue, logger, metrics } = ctx;
    const ledger = ledgerMode(env);
    const fitPool = createFitPool(env.REFIT_CONCURRENCY);
    const deps = {
      fit: fitPool.fit,
      store,
      queue,
      relay: ctx.relay,
      logger,
      metrics,
      graceMs: env.RECONCILE_GRACE_MS,
      // an inline first attempt runs without a job for up to WEBHOOK_TIMEOUT_MS (plus a slot wait)
      deliveryGraceMs: env.RECONCILE_GRACE_MS + env.WEBHOOK_TIMEOUT_MS + DELIVERY_GRACE_MARGIN_MS,
      webhookRetryMax: env.WEBHOOK_RETRY_MAX,
      ledger,
    };
    // LEDGER=evm: the anchorer runs in every consensus worker; one leads (advisory lock), the others stand by
    const anchorer =
      ledger === "evm"
        ? new Anchorer({
            store,
            relay: ctx.relay,
            logger,
            metrics,
            rpcUrl: env.EVM_RPC_URL as string,
            privateKey: env.EVM_PRIVATE_KEY as string,
            contract: env.ANCHOR_CONTRACT_ADDRESS,
            confirmations: env.EVM_CONFIRMATIONS,
            intervalMs: env.ANCHOR_INTERVAL_MS,
            maxLeaves: env.ANCHOR_MAX_LEAVES,
            reorgDepth: env.ANCHOR_REORG_DEPTH,
            webhookRetryMax: env.WEBHOOK_RETRY_MAX,
          })
        : undefined;
    anchorer?.start();
    logger.info({ ledger, rpc: ledger === "evm" ? redactUrl(env.EVM_RPC_URL as string) : undefined }, "settlement ledger");
    const workers = ctx.startWorkers(consensusHandlers(deps), {
      concurrency: { consensus: env.CONSENSUS_CONCURRENCY, reconcile: 1, refitSweep: 1, modelRefit: env.REFIT_CONCURRENCY },
    });
    await queue.schedule("reconcile", env.RECONCILE_INTERVAL_MS, {});
    await queue.schedule("refitSweep", env.REFIT_INTERVAL_MS, {});
    const stopReconcile = queue.keepScheduled("reconcile", env.RECONCILE_INTERVAL_MS, {}, (err) =>
      logger.warn({ err }, "reconcile scheduler check failed"),
    );
    const stopRefits = queue.keepScheduled("refitSweep", env.REFIT_INTERVAL_MS, {}, (err) =>
      logger.warn({ err }, "refit sweep scheduler check failed"),
    );
    const initial = reconcile(deps).catch((err: unknown) => logger.warn({ err }, "start-up reconciliation failed (the schedule retries)"));
    return {
      drain: async (budgetMs: number) => {
        stopReconcile();
        stopRefits();
        await initial;
        const returned = await workers.closeWithin(budgetMs);
        await anchorer?.stop();
        return returned;
      },
      close: () => fitPool.close(),
    };
  },
});

/** An RPC URL as logged: without credentials, path or query (providers put API keys there). */
function redactUrl(url: string): string {
  const u = new URL(url);
  return `${u.protocol}//${u.host}`;
}
