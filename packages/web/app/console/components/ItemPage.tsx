/**
 * The page of one item at `/<section>/:id` (a task, a batch, a job): {@link useItem} reads the id from the
 * route and polls the item until it is final; {@link ItemPage} heads the page with the id and renders the
 * item once it is loaded; {@link StatusCard} is the first card of a batch's or a job's page.
 */
import type { LabelgateClient } from "@labelgate/sdk/browser";
import { Card, type MantineSpacing } from "@mantine/core";
import { type UseQueryResult, useQuery } from "@tanstack/react-query";
import type { ReactNode } from "react";
import { useParams } from "react-router";
import { formatTime } from "../../shared/format";
import { useSession } from "../auth";
import { Mono, PageHeader, QueryView, StatusLine } from "./common";

/**
 * The item of the route's `:id`, cached as `[kind, id]` and read again every `poll.everyMs` until it is
 * loaded and `poll.until(item)` says it is final.
 */
export function useItem<T>(
  kind: string,
  get: (client: LabelgateClient, id: string) => Promise<T>,
  poll: { everyMs: number; until: (item: T) => boolean },
): { id: string; item: UseQueryResult<T> } {
  const { id = "" } = useParams();
  const { client } = useSession();
  const item = useQuery({
    queryKey: [kind, id],
    queryFn: () => get(client, id),
    refetchInterval: (q) => (q.state.data !== undefined && poll.until(q.state.data) ? false : poll.everyMs),
  });
  return { id, item };
}

/** The page of item `id`: its id as the heading, `kind` under it, then `children` of the loaded item. */
export function ItemPage<T>({
  id,
  kind,
  item,
  children,
}: {
  id: string;
  kind: string;
  item: UseQueryResult<T>;
  children: (item: T) => ReactNode;
}) {
  return (
    <>
      <PageHeader title={<Mono>{id}</Mono>}>{kind}</PageHeader>
      <QueryView query={item}>{children}</QueryView>
    </>
  );
}

/** A card that opens with an item's status and when it was created (then `note`), `gap` above `children`. */
export function StatusCard({
  status,
  createdAt,
  note,
  gap,
  children,
}: {
  status: string;
  createdAt: string;
  note?: string;
  gap: MantineSpacing;
  children: ReactNode;
}) {
  return (
    <Card withBorder>
      <StatusLine status={status} mb={gap}>
        created {formatTime(createdAt)}
        {note}
      </StatusLine>
      {children}
    </Card>
  );
}
