/** A batch: its tasks by status as a live progress bar until every task is settled or canceled. */
import { Card, Group, Stack, Text } from "@mantine/core";
import { useQuery } from "@tanstack/react-query";
import { useParams } from "react-router";
import { formatCount, formatTime } from "../../shared/format";
import { useSession } from "../auth";
import { Mono, PageHeader, QueryView, Stat, StatusBadge, StatusProgress } from "../components/common";

export function BatchPage() {
  const { id: batchId = "" } = useParams();
  const { client } = useSession();
  const batch = useQuery({
    queryKey: ["batch", batchId],
    queryFn: () => client.batches.get(batchId),
    refetchInterval: (q) => (q.state.data?.status === "completed" ? false : 1000),
  });
  return (
    <>
      <PageHeader title={<Mono>{batchId}</Mono>}>Batch</PageHeader>
      <QueryView query={batch}>
        {(b) => (
          <Stack>
            <Card withBorder>
              <Group mb="sm">
                <StatusBadge status={b.status} />
                <Text size="sm" c="dimmed">
                  created {formatTime(b.created_at)}
                  {b.callback_url ? ` · callback ${b.callback_url}` : ""}
                </Text>
              </Group>
              <div aria-live="polite" data-testid="batch-progress">
                <Text fw={600} mb={4}>
                  {formatCount(b.counts.settled)} of {formatCount(b.task_count)} tasks settled
                  {b.status === "completed" ? " · batch completed" : ""}
                </Text>
                <StatusProgress counts={b.counts} total={b.task_count} label={`Batch ${b.batch_id} progress`} />
              </div>
            </Card>
            <div className="cards">
              {(["pending", "labeling", "settling", "settled", "canceled"] as const).map((s) => (
                <Stat key={s} label={s} value={formatCount(b.counts[s])} />
              ))}
            </div>
          </Stack>
        )}
      </QueryView>
    </>
  );
}
