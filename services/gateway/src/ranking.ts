/**
 * The ranking of the items a batch's or a job's pairwise comparisons compared (contract §task-types;
 * docs/decisions/0289, 0306): the stored labels and their spaces' models (`store.batches.comparisons`) fitted by
 * @labelgate/quality `rankStoredPairwise`, in the wire's `Ranking` shape.
 */
import { type AnyLabelSpec, ApiError } from "@labelgate/api";
import type * as wire from "@labelgate/api/types";
import { MAX_RANKED_ITEMS, pairwiseItemId, RANKED_TASK_TYPE, rankStoredPairwise, type StoredPairwiseSpace } from "@labelgate/quality";
import type { Store } from "@labelgate/store";

/**
 * The ranking of the customer's batch or job `scope`, fitted now on every label of its pairwise tasks.
 * @returns null when the customer has no such batch or job
 * @throws ApiError validation (400, path `id`) when the labels compare more than MAX_RANKED_ITEMS items
 */
export async function rankingOf(
  store: Store,
  customerId: string,
  scope: { kind: "batch" | "job"; id: string },
): Promise<wire.Ranking | null> {
  const found = await store.batches.comparisons(customerId, scope, RANKED_TASK_TYPE);
  if (!found) return null;
  const { labels, spaces } = found;
  const items = new Set(labels.flatMap((l) => [pairwiseItemId(l.data_url, l.data_text), pairwiseItemId(l.data_url_b, l.data_text_b)]));
  if (items.size > MAX_RANKED_ITEMS)
    throw new ApiError("validation", [
      {
        path: "id",
        message: `the ${scope.kind} compares ${items.size} items; a ranking takes at most ${MAX_RANKED_ITEMS} (docs/decisions/0289)`,
      },
    ]);
  const bySpace = new Map<string, StoredPairwiseSpace>(
    spaces.map((s) => [s.id, { spec: s.label_spec as AnyLabelSpec, space: s.model, labelers: s.labelers }]),
  );
  const ranking = rankStoredPairwise(
    bySpace,
    labels.map((l) => ({
      itemA: pairwiseItemId(l.data_url, l.data_text),
      itemB: pairwiseItemId(l.data_url_b, l.data_text_b),
      spaceId: l.label_space_id,
      labelerId: l.labeler_id,
      value: l.value,
    })),
  );
  return {
    items: ranking.items.map((i) => ({
      item: i.item,
      score: i.score,
      rank: i.rank,
      ci_low: i.ciLow,
      ci_high: i.ciHigh,
      comparisons: i.comparisons,
    })),
    labels: labels.length,
    tie_parameter: ranking.tieParameter,
  };
}

/**
 * Refuses the ranking of a job of another type than the ranked one (a job has one type).
 * @throws ApiError validation (400, path `id`)
 */
export function requireRankedJob(job: { id: string; taskType: string }): void {
  if (job.taskType !== RANKED_TASK_TYPE)
    throw new ApiError("validation", [
      { path: "id", message: `job ${job.id} is a ${job.taskType} job; a ranking ranks the items of ${RANKED_TASK_TYPE} tasks` },
    ]);
}
