/** Billing: a month's usage with its line items (labels priced at the tier they were recorded under), and invoices. */
import type { Invoice, LineItem } from "@labelgate/sdk/browser";
import { Card, Select, Stack, Table, Text } from "@mantine/core";
import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { createColumnHelper } from "@tanstack/react-table";
import { useState } from "react";
import { formatCents, formatCount, formatTime } from "../../shared/format";
import { useSession } from "../auth";
import { ColumnHeads, PageHeader, QueryView, SectionCard, Stat, StatusBadge } from "../components/common";
import { type CoreFeatures, QueryTable } from "../components/DataTable";

/** The last `n` UTC months as `YYYY-MM`, current first. */
function lastMonths(n: number): string[] {
  const now = new Date();
  return Array.from({ length: n }, (_, i) => {
    const d = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - i, 1));
    return `${d.getUTCFullYear()}-${String(d.getUTCMonth() + 1).padStart(2, "0")}`;
  });
}

const helper = createColumnHelper<CoreFeatures, Invoice>();
const invoiceColumns = helper.columns([
  helper.accessor("invoice_id", { header: "Invoice", cell: (info) => <span className="mono">{info.getValue()}</span> }),
  helper.accessor("month", { header: "Month" }),
  helper.accessor("status", { header: "Status", cell: (info) => <StatusBadge status={info.getValue()} /> }),
  helper.accessor("labels_collected", { header: "Labels", cell: (info) => formatCount(info.getValue()) }),
  helper.accessor("tasks_settled", { header: "Tasks settled", cell: (info) => formatCount(info.getValue()) }),
  helper.accessor("amount_cents", { header: "Amount", cell: (info) => formatCents(info.getValue(), info.row.original.currency) }),
  helper.accessor("finalized_at", { header: "Finalized", cell: (info) => formatTime(info.getValue()) }),
]);

function LineItems({ items, currency }: { items: LineItem[]; currency: string }) {
  return (
    <Table captionSide="top">
      <caption>Line items</caption>
      <ColumnHeads names={["Tier", "Labels", "Unit price", "Amount"]} />
      <Table.Tbody>
        {items.map((l) => (
          <Table.Tr key={l.tier}>
            <Table.Td>{l.tier}</Table.Td>
            <Table.Td>{formatCount(l.labels)}</Table.Td>
            <Table.Td>{formatCents(l.unit_price_cents, currency)}</Table.Td>
            <Table.Td>{formatCents(l.amount_cents, currency)}</Table.Td>
          </Table.Tr>
        ))}
      </Table.Tbody>
    </Table>
  );
}

export function BillingPage() {
  const { client } = useSession();
  const months = lastMonths(12);
  const [month, setMonth] = useState(months[0] as string);
  const usage = useQuery({ queryKey: ["usage", month], queryFn: () => client.billing.usage(month), placeholderData: keepPreviousData });
  const invoices = useQuery({ queryKey: ["invoices"], queryFn: () => client.billing.invoices() });
  return (
    <>
      <PageHeader title="Billing">Labels collected per month, priced per tier; invoices.</PageHeader>
      <Stack>
        <Card withBorder>
          <Select label="Month" data={months} value={month} onChange={(v) => v && setMonth(v)} allowDeselect={false} w={160} mb="sm" />
          <QueryView query={usage}>
            {(u) => (
              <Stack gap="sm">
                <div className="cards">
                  <Stat
                    label="Labels collected"
                    value={formatCount(u.labels_collected)}
                    definition="answers labelers sent to your tasks in the month shown (UTC): what you are billed for"
                  />
                  <Stat label="Tasks settled" value={formatCount(u.tasks_settled)} definition="tasks settled in the month shown (UTC)" />
                  <Stat
                    definition="the month's labels, each at the price of the tier you had when it was recorded"
                    label="Amount"
                    value={formatCents(u.amount_cents, u.currency)}
                    hint={`tier ${u.tier}, ${formatCents(u.price_per_label_cents, u.currency)} per label now`}
                  />
                </div>
                {u.line_items.length > 0 ? (
                  <LineItems items={u.line_items} currency={u.currency} />
                ) : (
                  <Text c="dimmed">No label in {u.month}.</Text>
                )}
              </Stack>
            )}
          </QueryView>
        </Card>
        <SectionCard title="Invoices">
          <QueryTable query={invoices} columns={invoiceColumns} caption="Invoices" rowKey={(i) => i.invoice_id} empty="No invoice yet." />
        </SectionCard>
      </Stack>
    </>
  );
}
