/** A batch: its tasks by status as a live progress bar until every task is settled or canceled. */
import { Button, Stack, Text } from "@mantine/core";
import { Link } from "react-router";
import { formatCount } from "../../shared/format";
import { StatusCounts, StatusProgress } from "../components/common";
import { ItemPage, StatusCard, useItem } from "../components/ItemPage";

export function BatchPage() {
  const { id, item } = useItem("batch", (client, batchId) => client.batches.get(batchId), {
    everyMs: 1000,
    until: (b) => b.status === "completed",
  });
  return (
    <ItemPage id={id} kind="Batch" item={item}>
      {(b) => (
        <Stack>
          <StatusCard status={b.status} createdAt={b.created_at} note={b.callback_url ? ` · callback ${b.callback_url}` : ""} gap="sm">
            <div aria-live="polite" data-testid="batch-progress">
              <Text fw={600} mb={4}>
                {formatCount(b.counts.settled)} of {formatCount(b.task_count)} tasks settled
                {b.status === "completed" ? " · batch completed" : ""}
              </Text>
              <StatusProgress counts={b.counts} total={b.task_count} label={`Batch ${b.batch_id} progress`} />
            </div>
          </StatusCard>
          <StatusCounts counts={b.counts} />
          <Button component={Link} to={`/ranking/${b.batch_id}`} variant="light" w="fit-content" data-testid="ranking-link">
            Ranking of its pairwise comparisons
          </Button>
        </Stack>
      )}
    </ItemPage>
  );
}
