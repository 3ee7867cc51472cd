/**
 * A TanStack Table (v9, core features: the server sorts, filters and pages) rendered with Mantine's Table.
 * `columns` and `data` must be stable (module scope or memoized), as TanStack Table requires.
 */
import { Table, Text } from "@mantine/core";
import { type ColumnDef, FlexRender, tableFeatures, useTable } from "@tanstack/react-table";

/** The feature set of every console table: none beyond the core (processing is server-side). */
export const coreFeatures = tableFeatures({});
export type CoreFeatures = typeof coreFeatures;

export function DataTable<T extends object>({
  columns,
  data,
  caption,
  empty = "Nothing here yet.",
  rowKey,
}: {
  columns: ColumnDef<CoreFeatures, T>[];
  data: T[];
  caption: string;
  empty?: string;
  rowKey: (row: T) => string;
}) {
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
