/**
 * `pairwise_comparison` in the console (contract §task-types): a task's consensus winner with its posterior per
 * answer, and the ranking of a batch's items (`PairwiseRanking`): a table of scores with their 95% intervals and
 * a plot of the scores by rank with their intervals (the console's `Chart`).
 */
import { Badge, Table, Text } from "@mantine/core";
import { Chart, type PointSeries } from "../../console/components/Chart";
import { LabeledProgress } from "../../console/components/common";
import { type ConsensusView, type ConsensusViewProps, percent } from "../../console/task-types/view-kit";

function PairwiseView({ value, posterior, source }: ConsensusViewProps) {
  const winner = "winner" in value ? (value.winner as string) : null;
  const confidence = "confidence" in value && typeof value.confidence === "number" ? value.confidence : null;
  return (
    <ul className="tt-options" aria-label={source === "gold" ? "The gold winner" : "The consensus winner"}>
      {(["a", "b", "tie"] as const)
        .filter((o) => o !== "tie" || posterior?.tie !== undefined || winner === "tie")
        .map((o) => {
          const p = posterior?.[o];
          return (
            <li key={o} className="tt-option" data-testid="consensus-option" data-chosen={winner === o}>
              <Text span fw={600}>
                {o === "tie" ? "tie" : `item ${o}`}
              </Text>
              <Badge color={winner === o ? "green" : "gray"} variant="light">
                {winner === o ? `winner${confidence !== null ? ` · ${percent(confidence)}` : ""}` : "—"}
              </Badge>
              {p !== undefined ? (
                <LabeledProgress value={100 * p} label={`P(${o})`} size="lg" color={winner === o ? "green" : "gray"} />
              ) : (
                <span />
              )}
            </li>
          );
        })}
    </ul>
  );
}

/** The console view of a pairwise consensus or gold answer. */
export const pairwiseView: ConsensusView = {
  parts: "Answers",
  drawsItem: null,
  render: (p) => ("winner" in p.value ? <PairwiseView {...p} /> : null),
  ranking: (p) => <PairwiseRanking items={p.items} />,
};

/** One ranked item (`GET /v1/batches/{id}/ranking`). */
export interface RankedItem {
  item: string;
  score: number;
  rank: number;
  ci_low: number;
  ci_high: number;
  comparisons: number;
}

/**
 * The ranking table with each score's 95% interval, and a plot of the scores by rank with their intervals (the
 * console's `Chart`; its numbers are also in a hidden table).
 */
export function PairwiseRanking({ items }: { items: readonly RankedItem[] }) {
  if (items.length === 0) return <Text>No comparisons labeled yet.</Text>;
  const spec: PointSeries = {
    kind: "points",
    x: items.map((i) => i.rank),
    y: items.map((i) => i.score),
    interval: { low: items.map((i) => i.ci_low), high: items.map((i) => i.ci_high), label: "95% interval" },
    connect: false,
    xLabel: "Rank",
    yLabel: "Score (log strength)",
  };
  return (
    <>
      <Table striped aria-label="Ranking" data-testid="ranking-table">
        <Table.Thead>
          <Table.Tr>
            <Table.Th>Rank</Table.Th>
            <Table.Th>Item</Table.Th>
            <Table.Th>Score</Table.Th>
            <Table.Th>95% interval</Table.Th>
            <Table.Th>Comparisons</Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {items.map((i) => (
            <Table.Tr key={i.item} data-testid="ranking-row">
              <Table.Td>{i.rank}</Table.Td>
              <Table.Td>{i.item}</Table.Td>
              <Table.Td>{i.score.toFixed(2)}</Table.Td>
              <Table.Td>
                {i.ci_low.toFixed(2)} to {i.ci_high.toFixed(2)}
              </Table.Td>
              <Table.Td>{i.comparisons}</Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
      <div data-testid="ranking-plot">
        <Chart spec={spec} title="Scores by rank with their 95% intervals" height={260} />
      </div>
    </>
  );
}
