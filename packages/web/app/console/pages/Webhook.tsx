/**
 * A webhook's deliveries, newest first, filterable by status, each with its attempt log (attempt, manual or
 * automatic, status code, latency, error, time) and a redeliver action (one new attempt of the same event).
 */
import type { Delivery, DeliveryStatus } from "@labelgate/sdk/browser";
import { Badge, Button, Card, Group, Select, Stack, Table, Text } from "@mantine/core";
import { keepPreviousData, useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { Link, useParams } from "react-router";
import { formatTime } from "../../shared/format";
import { useSession } from "../auth";
import { ColumnHeads, ErrorAlert, Mono, PageHeader, Pager, QueryView, StatusBadge } from "../components/common";

const STATUSES: DeliveryStatus[] = ["pending", "delivered", "failed"];

export function WebhookPage() {
  const { id: webhookId = "" } = useParams();
  const { client } = useSession();
  const [page, setPage] = useState(1);
  const [status, setStatus] = useState<DeliveryStatus | "">("");
  const hooks = useQuery({ queryKey: ["webhooks"], queryFn: () => client.webhooks.list() });
  const hook = hooks.data?.find((h) => h.webhook_id === webhookId);
  const deliveries = useQuery({
    queryKey: ["deliveries", webhookId, { page, status }],
    queryFn: () => client.webhooks.deliveries(webhookId, { page, per_page: 20, status }),
    placeholderData: keepPreviousData,
    refetchInterval: (q) => (q.state.data?.items.some((d) => d.status === "pending") ? 1000 : 5000),
  });
  return (
    <>
      <PageHeader title="Webhook deliveries">
        {hook ? (
          <>
            <span className="break-all">{hook.callback_url}</span> · {hook.active ? "active" : "deleted"}
          </>
        ) : (
          <Mono>{webhookId}</Mono>
        )}
      </PageHeader>
      <Text size="sm" mb="sm">
        <Link to="/webhooks">All webhooks</Link>
      </Text>
      <Group mb="sm">
        <Select
          label="Status"
          data={[{ value: "", label: "All deliveries" }, ...STATUSES.map((s) => ({ value: s, label: s }))]}
          value={status}
          onChange={(v) => {
            setStatus((STATUSES.find((s) => s === v) ?? "") as DeliveryStatus | "");
            setPage(1);
          }}
          allowDeselect={false}
          w={180}
        />
      </Group>
      <QueryView query={deliveries}>
        {(data) => (
          <Stack>
            {data.items.length === 0 && <Text c="dimmed">No delivery{status ? ` ${status}` : ""} yet.</Text>}
            {data.items.map((d) => (
              <DeliveryCard key={d.delivery_id} webhookId={webhookId} delivery={d} active={hook?.active ?? true} />
            ))}
            <Pager page={page} total={data.total} perPage={data.per_page} onChange={setPage} />
          </Stack>
        )}
      </QueryView>
    </>
  );
}

function DeliveryCard({ webhookId, delivery, active }: { webhookId: string; delivery: Delivery; active: boolean }) {
  const { client } = useSession();
  const queryClient = useQueryClient();
  const redeliver = useMutation({
    mutationFn: () => client.webhooks.redeliver(webhookId, delivery.delivery_id),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ["deliveries", webhookId] }),
  });
  return (
    <Card withBorder data-delivery-id={delivery.delivery_id} data-testid="delivery">
      <Group justify="space-between" align="flex-start">
        <div>
          <Group gap="xs">
            <StatusBadge status={delivery.status} />
            <Text size="sm">
              {delivery.task_id !== null ? (
                <>
                  {delivery.event} of task{" "}
                  <Link to={`/tasks/${encodeURIComponent(delivery.task_id)}`} className="mono">
                    {delivery.task_id}
                  </Link>
                </>
              ) : (
                <>
                  {delivery.event} of job{" "}
                  <Link to={`/jobs/${encodeURIComponent(delivery.job_id ?? "")}`} className="mono">
                    {delivery.job_id}
                  </Link>
                </>
              )}
            </Text>
          </Group>
          <Text size="xs" c="dimmed">
            event <Mono>{delivery.event_id}</Mono> · {delivery.attempts} attempt{delivery.attempts === 1 ? "" : "s"} · created{" "}
            {formatTime(delivery.created_at)}
            {delivery.delivered_at ? ` · delivered ${formatTime(delivery.delivered_at)}` : ""}
          </Text>
        </div>
        <Button
          size="xs"
          variant="light"
          onClick={() => redeliver.mutate()}
          loading={redeliver.isPending}
          disabled={!active}
          aria-label={`Redeliver the event of ${delivery.task_id !== null ? `task ${delivery.task_id}` : `job ${delivery.job_id}`}`}
        >
          Redeliver
        </Button>
      </Group>
      <ErrorAlert error={redeliver.error} mt="xs" />
      {redeliver.isSuccess && (
        <Text size="xs" c="var(--mantine-color-green-text)" role="status">
          Attempt queued.
        </Text>
      )}
      <Table mt="xs" captionSide="top" verticalSpacing={4}>
        <caption className="visually-hidden">
          Attempts of the delivery of {delivery.task_id !== null ? `task ${delivery.task_id}` : `job ${delivery.job_id}`}
        </caption>
        <ColumnHeads names={["Attempt", "Result", "Status code", "Latency", "Error", "Started"]} />
        <Table.Tbody>
          {delivery.attempt_log.map((a) => (
            <Table.Tr key={a.attempt_id} data-testid="attempt">
              <Table.Td>
                {a.attempt}
                {a.manual && (
                  <Badge size="xs" ml={4} variant="light" color="gray">
                    manual
                  </Badge>
                )}
              </Table.Td>
              <Table.Td>{a.success ? "ok" : "failed"}</Table.Td>
              <Table.Td>{a.status_code ?? "—"}</Table.Td>
              <Table.Td>{a.latency_ms} ms</Table.Td>
              <Table.Td className="break-all">{a.error ?? "—"}</Table.Td>
              <Table.Td>{formatTime(a.started_at)}</Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
      {delivery.attempt_log.length === 0 && (
        <Text size="xs" c="dimmed">
          No attempt yet.
        </Text>
      )}
    </Card>
  );
}
