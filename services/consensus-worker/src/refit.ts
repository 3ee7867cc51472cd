/**
 * Label space refits (contract §quality): the model of each label space is refitted in the background
 * as labels arrive, never blocking a label.
 * - `refitSweep` (a scheduled job, every REFIT_INTERVAL_MS) finds the spaces due for a refit (the store's
 *   `spaces.due`: new labels since the last fit, in proportion to the space's size) and enqueues one
 *   `modelRefit` per space and version.
 * - `modelRefit` reads the space (every label in recording order, its gold tasks, the stored model to warm
 *   start from), fits it in a worker thread (fit-thread.ts, piscina) and writes the new model with a
 *   compare-and-set on the version read: a refit run twice, or two replicas refitting at once, write once;
 *   the other finds the version moved and drops its work.
 */
import path from "node:path";
import type { Logger } from "@labelgate/core";
import type { Metrics } from "@labelgate/metrics";
import type { AnyFitInput, AnyFitOutput } from "@labelgate/quality";
import type { FollowUpNudge } from "@labelgate/queue";
import type { Store } from "@labelgate/store";
import { Piscina } from "piscina";
import { keptThreads } from "./threads";

/** Spaces a sweep enqueues at most (the rest wait for the next sweep, oldest fit first). */
export const SWEEP_LIMIT = 100;

/** Runs a refit's computation (in a worker thread in the service; tests may run it inline). */
export type FitRunner = (input: AnyFitInput) => Promise<AnyFitOutput>;

export interface RefitDeps {
  store: Store;
  /** the process's follow-up relay, nudged after a commit that wrote follow-up rows (docs/decisions/0300) */
  relay?: FollowUpNudge;
  logger: Logger;
  fit: FitRunner;
  metrics?: Pick<Metrics, "modelRefits" | "modelRefitDuration">;
}

/** Enqueues a refit of every space due (at most SWEEP_LIMIT). @returns the spaces enqueued */
export async function refitSweep(deps: Pick<RefitDeps, "store" | "relay">): Promise<number> {
  const due = await deps.store.spaces.due(SWEEP_LIMIT);
  // follow_up rows, one statement for the sweep; the relay enqueues them (job id per space and version)
  await deps.store.followUps.add({ modelRefit: due.map((space) => ({ labelSpaceId: space.id, version: space.version })) });
  if (due.length > 0) deps.relay?.nudge();
  return due.length;
}

/**
 * Refits one label space from its rows. Safe to run twice or concurrently (compare-and-set on the version).
 * @returns `written`, `stale` (another refit wrote first) or `empty` (no such space, or no label yet)
 */
export async function refitLabelSpace(deps: RefitDeps, labelSpaceId: string): Promise<"written" | "stale" | "empty"> {
  const input = await deps.store.spaces.fitInput(labelSpaceId);
  const labels = input?.kind === "typed" ? input.labels : (input?.labels.length ?? 0);
  if (!input || labels === 0) {
    deps.metrics?.modelRefits.inc({ outcome: "empty" });
    return "empty";
  }
  const output = await deps.fit(input);
  const outcome = await deps.store.spaces.writeFit(input, output);
  deps.metrics?.modelRefits.inc({ outcome });
  deps.metrics?.modelRefitDuration.observe(output.fitMs / 1000);
  const fields = {
    label_space: labelSpaceId,
    version: input.version + 1,
    labels,
    fit_ms: Math.round(output.fitMs),
    outcome,
  };
  if (output.kind === "typed") deps.logger.debug(fields, "label space refit");
  else if (output.outcome === "refused") {
    deps.logger.warn(
      { ...fields, failing_options: output.failing },
      "label space refit refused: no fit has its labelers better than chance on every option; the stored model is kept",
    );
  } else if (output.outcome === "warm") {
    deps.logger.info(
      { ...fields, failing_options: output.failing },
      "label space refit: the fit from majority vote has labelers below chance on some options; the fit from the stored model was kept",
    );
  } else deps.logger.debug(fields, "label space refit");
  return outcome;
}

/** A pool of `threads` worker threads running fit-thread.ts; `close()` ends them. */
export function createFitPool(threads: number): { fit: FitRunner; close: () => Promise<void> } {
  // threads are kept once started: one that ends leaves a zombie (threads.ts)
  const pool = new Piscina<AnyFitInput, AnyFitOutput>(keptThreads(path.join(__dirname, "fit-thread.cjs"), threads));
  return { fit: (input) => pool.run(input), close: () => pool.destroy() };
}
