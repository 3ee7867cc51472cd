/**
 * The ranking of the items a batch's or a job's pairwise comparisons compared (`/ranking/:id`, id `bat_...` or
 * `job_...`; `GET /v1/batches/{id}/ranking`, `GET /v1/jobs/{id}/ranking`): the table with each score's 95% interval
 * and the plot of the ranked type's console view (`ConsensusView.ranking`), read again every 10 s while labels may
 * still arrive. A job of another type or past 2,000 items shows the API's error.
 */
import { Button, Card, Group, Text } from "@mantine/core";
import { Link } from "react-router";
import { CONSENSUS_VIEWS } from "../../types/registry";
import { ItemPage, useItem } from "../components/ItemPage";

/** The view of the ranked type (the one whose console view has a `ranking`). */
const RANKED = Object.values(CONSENSUS_VIEWS).find((v) => v?.ranking !== undefined)?.ranking;

export function RankingPage() {
  const { id, item } = useItem(
    "ranking",
    (client, scopeId) => (scopeId.startsWith("job_") ? client.jobs.ranking(scopeId) : client.batches.ranking(scopeId)),
    { everyMs: 10_000, until: () => false },
  );
  const back = id.startsWith("job_") ? `/jobs/${id}` : `/batches/${id}`;
  return (
    <ItemPage id={id} kind={`Ranking of the ${id.startsWith("job_") ? "job" : "batch"}'s pairwise comparisons`} item={item}>
      {(r) => (
        <Card withBorder>
          <Group justify="space-between" mb="sm">
            <Text fw={600} data-testid="ranking-summary">
              {r.items.length} items · {r.labels} labels · tie parameter {r.tie_parameter.toFixed(2)}
            </Text>
            <Button component={Link} to={back} variant="subtle">
              Back to the {id.startsWith("job_") ? "job" : "batch"}
            </Button>
          </Group>
          {RANKED ? RANKED({ items: r.items }) : null}
        </Card>
      )}
    </ItemPage>
  );
}
