/**
 * Quality: the settled tasks of the last 90 days (confidence, resolution, agreement, labels per task), the
 * calibration plot (drawn when the quality view carries `calibration`), and the places of the labelers table
 * and the quality settings of DESIGN §10 (GET /v1/dashboard/labelers, GET/PATCH /v1/customers/me/settings),
 * which the console fills in once the gateway has those routes.
 */
import type { DashboardQuality } from "@labelgate/sdk/browser";
import { Card, Stack, Text, Title } from "@mantine/core";
import { useQuery } from "@tanstack/react-query";
import { useMemo } from "react";
import { formatCount, formatShare } from "../../shared/format";
import { useSession } from "../auth";
import { type BarSeries, Chart, type PointSeries } from "../components/Chart";
import { PageHeader, QueryView, Stat } from "../components/common";

/** One bin of the calibration of settled confidences against gold answers (a field of newer gateways). */
export interface CalibrationBin {
  lower: number;
  upper: number;
  tasks: number;
  mean_confidence: number;
  accuracy: number;
}

type QualityView = DashboardQuality & { calibration?: { bins: CalibrationBin[]; ece: number | null } };

export function QualityPage() {
  const { client } = useSession();
  const quality = useQuery({ queryKey: ["quality"], queryFn: () => client.dashboard.quality() as Promise<QualityView> });
  return (
    <>
      <PageHeader title="Quality">Settled tasks of the last 90 days, labelers and the quality settings.</PageHeader>
      <Stack>
        <QueryView query={quality}>
          {(q) => (
            <Stack>
              <div className="cards">
                <Stat label="Tasks settled" value={formatCount(q.tasks_settled)} hint={`last ${q.window_days} days`} />
                <Stat label="Mean confidence" value={formatShare(q.mean_confidence)} />
                <Stat label="Agreement" value={formatShare(q.agreement_rate)} hint="labels equal to the consensus" />
                <Stat
                  label="By consensus"
                  value={formatShare(q.resolution.consensus.share)}
                  hint={`${formatCount(q.resolution.consensus.tasks)} tasks`}
                />
                <Stat
                  label="At max labels"
                  value={formatShare(q.resolution.max_labels.share)}
                  hint={`${formatCount(q.resolution.max_labels.tasks)} tasks`}
                />
              </div>
              <Card withBorder>
                <LabelsPerTask quality={q} />
              </Card>
              <Card withBorder>
                <Title order={2} size="h4" mb="xs">
                  Calibration
                </Title>
                {q.calibration ? (
                  <Calibration bins={q.calibration.bins} ece={q.calibration.ece} />
                ) : (
                  <Text size="sm" c="dimmed">
                    This gateway does not report calibration yet (confidence against gold answers, per bin).
                  </Text>
                )}
              </Card>
            </Stack>
          )}
        </QueryView>
        <Card withBorder>
          <Title order={2} size="h4" mb="xs">
            Labelers
          </Title>
          <Text size="sm" c="dimmed">
            Gold accuracy, estimated accuracy and exclusion of each labeler arrive with the gateway's labeler quality routes (GET
            /v1/dashboard/labelers).
          </Text>
        </Card>
        <Card withBorder>
          <Title order={2} size="h4" mb="xs">
            Settings
          </Title>
          <Text size="sm" c="dimmed">
            Task defaults, gold rate and minimum labeler accuracy arrive with the gateway's settings routes (GET and PATCH
            /v1/customers/me/settings).
          </Text>
        </Card>
      </Stack>
    </>
  );
}

function LabelsPerTask({ quality }: { quality: DashboardQuality }) {
  const spec = useMemo<BarSeries>(
    () => ({
      kind: "bars",
      x: quality.labels_per_task.map((b) => b.labels),
      y: quality.labels_per_task.map((b) => b.tasks),
      xLabel: "labels per task",
      yLabel: "tasks",
    }),
    [quality],
  );
  if (quality.labels_per_task.length === 0) return <Text c="dimmed">No task settled in the window.</Text>;
  return <Chart spec={spec} title="Labels per settled task" />;
}

function Calibration({ bins, ece }: { bins: CalibrationBin[]; ece: number | null }) {
  const spec = useMemo<PointSeries>(() => {
    const used = bins.filter((b) => b.tasks > 0);
    return {
      kind: "points",
      x: used.map((b) => b.mean_confidence),
      y: used.map((b) => b.accuracy),
      diagonal: true,
      range: [0, 1],
      xLabel: "confidence",
      yLabel: "accuracy on gold",
    };
  }, [bins]);
  return (
    <>
      <Text size="sm" mb="xs">
        Expected calibration error: {formatShare(ece)} (10 equal-width bins)
      </Text>
      <Chart spec={spec} title="Calibration: accuracy against confidence" height={280} />
    </>
  );
}
