/** Overview: tasks by status, the label quota, labels per day, time to settle, webhook success. */
import type { DashboardUsage } from "@labelgate/sdk/browser";
import { Card, Stack, Text, Title } from "@mantine/core";
import { useQuery } from "@tanstack/react-query";
import { useMemo } from "react";
import { formatCount, formatSeconds, formatShare } from "../../shared/format";
import { useSession } from "../auth";
import { barSeries, Chart } from "../components/Chart";
import { LabeledProgress, PageHeader, QueryView, Stat, StatusCounts } from "../components/common";

export function OverviewPage() {
  const { client } = useSession();
  const overview = useQuery({ queryKey: ["overview"], queryFn: () => client.dashboard.overview(), refetchInterval: 5000 });
  const usage = useQuery({ queryKey: ["usage-days"], queryFn: () => client.dashboard.usage(), refetchInterval: 30_000 });
  return (
    <>
      <PageHeader title="Overview">Your tasks, quota and labels at a glance.</PageHeader>
      <QueryView query={overview}>
        {(o) => {
          const used = o.label_quota - o.label_quota_remaining;
          const share = o.label_quota > 0 ? used / o.label_quota : 0;
          return (
            <Stack>
              <section aria-labelledby="by-status">
                <Title order={2} size="h4" id="by-status" mb="xs">
                  Tasks by status
                </Title>
                <StatusCounts counts={o.tasks_by_status} />
              </section>
              <Card withBorder>
                <Title order={2} size="h4" id="quota">
                  Label quota
                </Title>
                <Text size="sm" mb="xs">
                  {formatCount(used)} of {formatCount(o.label_quota)} labels used or reserved · {formatCount(o.label_quota_remaining)} left
                </Text>
                <LabeledProgress
                  value={share * 100}
                  color={share > 0.9 ? "red" : share > 0.7 ? "yellow" : "blue"}
                  size="lg"
                  label="Label quota used"
                />
              </Card>
              <div className="cards">
                <Stat
                  label="Labels this month"
                  value={formatCount(o.labels_this_month)}
                  definition="answers labelers sent to your tasks since the 1st of this month (UTC), one per labeler and task"
                />
                <Stat
                  label="Median time to settle"
                  value={formatSeconds(o.median_seconds_to_settle)}
                  hint="tasks settled in the last 30 days"
                  definition="half the tasks settled in the last 30 days took less than this from creation to settlement"
                />
                <Stat
                  label="Webhook deliveries OK"
                  value={formatShare(o.webhook_delivery_success_rate)}
                  hint="last 30 days"
                  definition="share of the webhook deliveries of the last 30 days that your endpoint accepted (2xx), among those delivered or failed"
                />
              </div>
            </Stack>
          );
        }}
      </QueryView>
      <Card withBorder mt="md">
        <QueryView query={usage}>{(u) => <LabelsPerDay usage={u} />}</QueryView>
      </Card>
    </>
  );
}

function LabelsPerDay({ usage }: { usage: DashboardUsage }) {
  const spec = useMemo(
    () =>
      barSeries(usage.days, { x: (d) => Date.parse(`${d.date}T00:00:00Z`) / 1000, y: (d) => d.labels, time: true }, "day (UTC)", "labels"),
    [usage],
  );
  return <Chart spec={spec} title="Labels per day, last 30 days" />;
}
