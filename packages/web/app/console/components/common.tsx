/** Small building blocks shared by the console's pages. */
import type { TaskCounts } from "@labelgate/sdk/browser";
import {
  Alert,
  Badge,
  Button,
  Card,
  CopyButton,
  Group,
  Loader,
  type MantineSpacing,
  Pagination,
  Progress,
  Stack,
  Table,
  Text,
  Title,
  Tooltip,
} from "@mantine/core";
import type { FormEvent, ReactNode } from "react";
import { Link } from "react-router";
import { errorMessage } from "../../shared/client";
import { formatCount } from "../../shared/format";

const STATUS_COLOR: Record<string, string> = {
  pending: "gray",
  labeling: "blue",
  settling: "violet",
  settled: "green",
  canceled: "dark",
  accepted: "gray",
  in_progress: "blue",
  completed: "green",
  queued: "gray",
  ingesting: "blue",
  failed: "red",
  delivered: "green",
  active: "green",
  excluded: "red",
  failed_qualification: "red",
  open: "blue",
  finalized: "green",
};

/** A status as a colored badge (the text is the status itself). */
export function StatusBadge({ status }: { status: string }) {
  return (
    <Badge color={STATUS_COLOR[status] ?? "gray"} variant="light">
      {status.replaceAll("_", " ")}
    </Badge>
  );
}

/** An item's status as a badge and, dimmed beside it, `children` (when it was created, and more). */
export function StatusLine({
  status,
  mb,
  gap,
  children,
}: {
  status: string;
  mb?: MantineSpacing;
  gap?: MantineSpacing;
  children: ReactNode;
}) {
  return (
    <Group mb={mb} gap={gap}>
      <StatusBadge status={status} />
      <Text size="sm" c="dimmed">
        {children}
      </Text>
    </Group>
  );
}

/** The page's heading and an optional line under it. */
export function PageHeader({ title, children, actions }: { title: ReactNode; children?: ReactNode; actions?: ReactNode }) {
  return (
    <Group justify="space-between" align="flex-start" mb="md">
      <div>
        <Title order={1} size="h2">
          {title}
        </Title>
        {children && (
          <Text c="dimmed" size="sm">
            {children}
          </Text>
        )}
      </div>
      {actions}
    </Group>
  );
}

/** Loading and error states of a query: renders `children` once data is there. */
export function QueryView<T>({
  query,
  children,
}: {
  query: { data: T | undefined; error: unknown; isPending: boolean };
  children: (data: T) => ReactNode;
}) {
  if (query.error) return <ErrorAlert error={query.error} title="Could not load" />;
  if (query.data === undefined) return <Loader aria-label="Loading" />;
  return <>{children(query.data)}</>;
}

/** An error (of a query or a mutation) as a red alert with its message; nothing without an error. */
export function ErrorAlert({ error, title, mt }: { error: unknown; title?: string; mt?: MantineSpacing }) {
  if (!error) return null;
  return (
    <Alert color="red" title={title} mt={mt} role="alert">
      {errorMessage(error)}
    </Alert>
  );
}

/** A card with a section heading. */
export function SectionCard({ title, children }: { title: ReactNode; children: ReactNode }) {
  return (
    <Card withBorder>
      <Title order={2} size="h4" mb="xs">
        {title}
      </Title>
      {children}
    </Card>
  );
}

/**
 * A form on a card: its fields (`children`), then the error of `submission` (an alert titled `failure`),
 * `notice` (e.g. what the last submission made), and the button `submit` that runs `submission`.
 */
export function FormCard({
  title,
  submission,
  failure,
  submit,
  notice,
  children,
}: {
  title: string;
  submission: { mutate: () => void; error: unknown; isPending: boolean };
  failure: string;
  submit: string;
  notice?: ReactNode;
  children: ReactNode;
}) {
  const onSubmit = (e: FormEvent) => {
    e.preventDefault();
    submission.mutate();
  };
  return (
    <SectionCard title={title}>
      <form onSubmit={onSubmit}>
        <Stack gap="sm">
          {children}
          <ErrorAlert error={submission.error} title={failure} />
          {notice}
          <Group>
            <Button type="submit" loading={submission.isPending}>
              {submit}
            </Button>
          </Group>
        </Stack>
      </form>
    </SectionCard>
  );
}

/** An item's id as a link to its page, `/<section>/<id>`. */
export function IdLink({ section, id }: { section: string; id: string }) {
  return (
    <Link to={`/${section}/${encodeURIComponent(id)}`} className="mono id-link" title={id}>
      {id}
    </Link>
  );
}

/** The header row of a table, one column header per name. */
export function ColumnHeads({ names }: { names: string[] }) {
  return (
    <Table.Thead>
      <Table.Tr>
        {names.map((name) => (
          <Table.Th key={name} scope="col">
            {name}
          </Table.Th>
        ))}
      </Table.Tr>
    </Table.Thead>
  );
}

/**
 * A term with its definition a hover away (`title`, dotted underline; `data-definition` for tests): every
 * figure of the console says what it counts.
 */
export function Defined({ term, definition }: { term: ReactNode; definition: string }) {
  return (
    <span className="defined" title={definition} data-definition={definition}>
      {term}
    </span>
  );
}

/** One figure: a dimmed label (its definition a hover away, `Defined`) over a large value. */
export function Fact({ label, testId, definition, children }: { label: string; testId?: string; definition: string; children: ReactNode }) {
  return (
    <div data-figure={label}>
      <Text size="xs" c="dimmed">
        <Defined term={label} definition={definition} />
      </Text>
      <Text fw={700} size="lg" data-testid={testId}>
        {children}
      </Text>
    </div>
  );
}

/** A figure on a card: its label (with its definition a hover away), its value, an optional line under it. */
export function Stat({ label, value, hint, definition }: { label: string; value: ReactNode; hint?: string; definition: string }) {
  return (
    <Card withBorder padding="sm" data-figure={label}>
      <Text size="xs" c="dimmed" tt="uppercase" fw={700}>
        <Defined term={label} definition={definition} />
      </Text>
      <Text size="xl" fw={700}>
        {value}
      </Text>
      {hint && (
        <Text size="xs" c="dimmed">
          {hint}
        </Text>
      )}
    </Card>
  );
}

/** What each status count counts. */
const STATUS_DEFINITION: Record<keyof TaskCounts, string> = {
  pending: "tasks with no label yet",
  labeling: "tasks with at least one label, not yet decided",
  settling: "tasks decided, their ledger record being written",
  settled: "tasks whose result is ready: consensus decided and recorded on the ledger",
  canceled: "tasks canceled before they were decided",
};

/** Tasks by status, one figure a status. */
export function StatusCounts({ counts }: { counts: TaskCounts }) {
  return (
    <div className="cards">
      {(["pending", "labeling", "settling", "settled", "canceled"] as const).map((s) => (
        <Stat key={s} label={s} value={formatCount(counts[s])} definition={STATUS_DEFINITION[s]} />
      ))}
    </div>
  );
}

const ORDER: (keyof TaskCounts)[] = ["settled", "settling", "labeling", "pending", "canceled"];
const BAR_COLOR: Record<keyof TaskCounts, string> = {
  settled: "green",
  settling: "violet",
  labeling: "blue",
  pending: "gray.4",
  canceled: "dark",
};

/**
 * Tasks by status as one stacked bar, with the settled share as its accessible value. `label` names the
 * bar for assistive technology.
 */
export function StatusProgress({ counts, total, label }: { counts: TaskCounts; total: number; label: string }) {
  const done = counts.settled + counts.canceled;
  return (
    <div>
      <Progress.Root size="lg" aria-hidden>
        {ORDER.map((s) =>
          counts[s] > 0 ? (
            <Tooltip key={s} label={`${s}: ${formatCount(counts[s])}`}>
              <Progress.Section value={total > 0 ? (100 * counts[s]) / total : 0} color={BAR_COLOR[s]} />
            </Tooltip>
          ) : null,
        )}
      </Progress.Root>
      <div role="progressbar" aria-label={label} aria-valuemin={0} aria-valuemax={total} aria-valuenow={done} className="visually-hidden">
        {done} of {total} done
      </div>
      <Text size="xs" c="dimmed" mt={4}>
        {ORDER.filter((s) => counts[s] > 0)
          .map((s) => `${formatCount(counts[s])} ${s}`)
          .join(" · ") || "no tasks"}
      </Text>
    </div>
  );
}

/**
 * A long hex value (hashes, transaction ids, addresses) on one line: cut with an ellipsis when the column is
 * narrower than it (a phone: issue 28 item 10), the whole value in its title and a copy button beside it.
 */
export function Hex({ value, name }: { value: string; name: string }) {
  return (
    <span className="hex">
      <span className="hex-text mono" title={value}>
        {value}
      </span>
      <CopyButton value={value}>
        {({ copied, copy }) => (
          <Button variant="subtle" size="compact-xs" onClick={copy} aria-label={`Copy ${name}`}>
            {copied ? "Copied" : "Copy"}
          </Button>
        )}
      </CopyButton>
    </span>
  );
}

/** A value in monospace that may be long (ids, hashes, URLs). */
export function Mono({ children }: { children: ReactNode }) {
  return <span className="mono">{children}</span>;
}

/**
 * A progress bar (0..100) whose accessible name is `label`: Mantine puts `role="progressbar"` on the bar's
 * section, so the name goes there.
 */
export function LabeledProgress({
  value,
  label,
  color,
  size,
  mt,
}: {
  value: number;
  label: string;
  color?: string;
  size?: string;
  mt?: number;
}) {
  return (
    <Progress.Root size={size} mt={mt}>
      <Progress.Section value={value} color={color} aria-label={label} />
    </Progress.Root>
  );
}

/** Page navigation of a paginated list (1-based), every control named for assistive technology. */
export function Pager({
  page,
  total,
  perPage,
  onChange,
}: {
  page: number;
  total: number;
  perPage: number;
  onChange: (page: number) => void;
}) {
  const pages = Math.max(1, Math.ceil(total / perPage));
  return (
    <Pagination
      mt="sm"
      total={pages}
      value={Math.min(page, pages)}
      onChange={onChange}
      getControlProps={(control) => ({ "aria-label": `${control} page` })}
      getItemProps={(p) => ({ "aria-label": `Page ${p}` })}
    />
  );
}
