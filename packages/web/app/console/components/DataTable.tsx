/**
 * A TanStack Table (v9, core features: the server sorts, filters and pages) rendered with Mantine's Table.
 * `columns` and `data` must be stable (module scope or memoized), as TanStack Table requires.
 */
import type { Page, PageQuery } from "@labelgate/sdk/browser";
import { Table, Text } from "@mantine/core";
import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { type ColumnDef, FlexRender, tableFeatures, useTable } from "@tanstack/react-table";
import { useState } from "react";
import { Pager, QueryView } from "./common";

/** The feature set of every console table: none beyond the core (processing is server-side). */
export const coreFeatures = tableFeatures({});
export type CoreFeatures = typeof coreFeatures;

/** What a table shows its rows with: the columns, its accessible caption, the text of no row, and the id of a row. */
interface TableSpec<T extends object> {
  columns: ColumnDef<CoreFeatures, T>[];
  caption: string;
  empty?: string;
  rowKey: (row: T) => string;
}

export function DataTable<T extends object>({ columns, data, caption, empty = "Nothing here yet.", rowKey }: TableSpec<T> & { data: T[] }) {
  const table = useTable({ features: coreFeatures, columns, data, getRowId: (row) => rowKey(row) });
  return (
    <div className="table-scroll">
      <Table striped highlightOnHover verticalSpacing="xs" captionSide="top">
        <caption className="visually-hidden">{caption}</caption>
        <Table.Thead>
          {table.getHeaderGroups().map((group) => (
            <Table.Tr key={group.id}>
              {group.headers.map((header) => (
                <Table.Th key={header.id} scope="col">
                  {header.isPlaceholder ? null : <FlexRender header={header} />}
                </Table.Th>
              ))}
            </Table.Tr>
          ))}
        </Table.Thead>
        <Table.Tbody>
          {table.getRowModel().rows.map((row) => (
            <Table.Tr key={row.id}>
              {row.getAllCells().map((cell) => (
                <Table.Td key={cell.id}>
                  <FlexRender cell={cell} />
                </Table.Td>
              ))}
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
      {data.length === 0 && (
        <Text c="dimmed" ta="center" py="md">
          {empty}
        </Text>
      )}
    </div>
  );
}

/** The items of a query's list as a table, once loaded (QueryView). */
export function QueryTable<T extends object>({
  query,
  ...table
}: TableSpec<T> & { query: { data: { items: T[] } | undefined; error: unknown; isPending: boolean } }) {
  return <QueryView query={query}>{(list) => <DataTable {...table} data={list.items} />}</QueryView>;
}

/**
 * A list the server pages, as a table and a pager: page `page` of `list` (20 a page), cached as
 * `[queryKey, page]` and read again every 2 s while one of its items is `live`, else every 15 s.
 */
export function PagedTable<T extends object>({
  queryKey,
  list,
  live,
  ...table
}: TableSpec<T> & {
  queryKey: string;
  list: (query: PageQuery) => Promise<Page<T>>;
  live: (item: T) => boolean;
}) {
  const [page, setPage] = useState(1);
  const query = useQuery({
    queryKey: [queryKey, page],
    queryFn: () => list({ page, per_page: 20 }),
    placeholderData: keepPreviousData,
    refetchInterval: (q) => (q.state.data?.items.some(live) ? 2000 : 15_000),
  });
  return (
    <QueryView query={query}>
      {(data) => (
        <>
          <DataTable {...table} data={data.items} />
          <Pager page={page} total={data.total} perPage={data.per_page} onChange={setPage} />
        </>
      )}
    </QueryView>
  );
}
