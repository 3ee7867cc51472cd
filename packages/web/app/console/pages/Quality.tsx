/**
 * Quality (DESIGN §10): the settled tasks of the last 90 days (confidence, resolution, agreement, labels per
 * task), the calibration plot of `confidence` against gold answers (mean confidence against accuracy per
 * bin, the diagonal of perfect calibration, the ECE), the labelers table (GET /v1/dashboard/labelers) and
 * the settings form (GET/PATCH /v1/customers/me/settings) with the API's 400 details shown at their fields.
 * The labelers table and the settings are shown when the gateway has their routes (capabilities.ts).
 */
import { type DashboardQuality, type LabelerQualityList, type Settings, ValidationError } from "@labelgate/sdk/browser";
import { Alert, Button, Card, Group, NumberInput, Stack, Text } from "@mantine/core";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { createColumnHelper } from "@tanstack/react-table";
import { type FormEvent, useMemo, useState } from "react";
import { ROUTE, useCapabilities } from "../../shared/capabilities";
import { formatCount, formatShare } from "../../shared/format";
import { useSession } from "../auth";
import { barSeries, Chart, type PointSeries } from "../components/Chart";
import { ErrorAlert, Mono, PageHeader, QueryView, SectionCard, Stat, StatusBadge } from "../components/common";
import { type CoreFeatures, QueryTable } from "../components/DataTable";

type Calibration = NonNullable<DashboardQuality["calibration"]>;
type LabelerRow = LabelerQualityList["items"][number];

export function QualityPage() {
  const { client } = useSession();
  const caps = useCapabilities();
  const quality = useQuery({ queryKey: ["quality"], queryFn: () => client.dashboard.quality() });
  return (
    <>
      <PageHeader title="Quality">
        Settled tasks of the last 90 days, calibration on gold tasks, labelers and the quality settings.
      </PageHeader>
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
                  label="By confidence"
                  value={formatShare(q.resolution.confidence.share)}
                  hint={`${formatCount(q.resolution.confidence.tasks)} tasks`}
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
              <SectionCard title="Calibration">
                {q.calibration ? (
                  <CalibrationPlot calibration={q.calibration} />
                ) : (
                  <Text size="sm" c="dimmed">
                    No gold answers yet: calibration compares the confidence of decisions with the gold label of gold tasks. Add tasks with
                    a <code>gold_label</code> to measure it.
                  </Text>
                )}
              </SectionCard>
            </Stack>
          )}
        </QueryView>
        {caps.has(ROUTE.labelers) && <Labelers />}
        {caps.has(ROUTE.settings) && <SettingsForm editable={caps.has(ROUTE.updateSettings)} />}
      </Stack>
    </>
  );
}

function LabelsPerTask({ quality }: { quality: DashboardQuality }) {
  const spec = useMemo(
    () => barSeries(quality.labels_per_task, { x: (b) => b.labels, y: (b) => b.tasks }, "labels per task", "tasks"),
    [quality],
  );
  if (quality.labels_per_task.length === 0) return <Text c="dimmed">No task settled in the window.</Text>;
  return <Chart spec={spec} title="Labels per settled task" />;
}

/** Mean confidence against accuracy of each non-empty bin, with the diagonal of perfect calibration. */
function CalibrationPlot({ calibration }: { calibration: Calibration }) {
  const spec = useMemo<PointSeries>(() => {
    const used = calibration.bins.filter((b) => b.tasks > 0 && b.mean_confidence !== null && b.accuracy !== null);
    return {
      kind: "points",
      x: used.map((b) => b.mean_confidence as number),
      y: used.map((b) => b.accuracy as number),
      diagonal: true,
      range: [0, 1],
      xLabel: "mean confidence",
      yLabel: "accuracy on gold",
    };
  }, [calibration]);
  return (
    <>
      <Text size="sm" mb="xs" data-testid="ece">
        Expected calibration error (ECE): <strong>{formatShare(calibration.ece)}</strong> over {formatCount(calibration.gold_tasks)} gold
        tasks (10 equal-width bins; 0% is perfect: among decisions at confidence c, a share c is right).
      </Text>
      <Chart spec={spec} title="Calibration: accuracy on gold against mean confidence, per bin" height={280} />
    </>
  );
}

const helper = createColumnHelper<CoreFeatures, LabelerRow>();
const labelerColumns = helper.columns([
  helper.accessor("labeler_id", { header: "Labeler", cell: (info) => <Mono>{info.getValue()}</Mono> }),
  helper.accessor("question", {
    header: "Label space",
    cell: (info) => (
      <>
        <div>{info.getValue()}</div>
        <Text size="xs" c="dimmed">
          <Mono>{info.row.original.label_space}</Mono>
        </Text>
      </>
    ),
  }),
  helper.accessor("labels", { header: "Labels", cell: (info) => formatCount(info.getValue()) }),
  helper.accessor("gold_answers", { header: "Gold answers", cell: (info) => formatCount(info.getValue()) }),
  helper.accessor("gold_accuracy", { header: "Gold accuracy", cell: (info) => formatShare(info.getValue()) }),
  helper.accessor("estimated_accuracy", { header: "Estimated accuracy", cell: (info) => formatShare(info.getValue()) }),
  helper.accessor("status", { header: "Status", cell: (info) => <StatusBadge status={info.getValue()} /> }),
]);

function Labelers() {
  const { client } = useSession();
  const labelers = useQuery({ queryKey: ["labelers"], queryFn: () => client.dashboard.labelers(), refetchInterval: 10_000 });
  return (
    <SectionCard title="Labelers">
      <Text size="sm" c="dimmed" mb="xs">
        One row per labeler and label space. Gold accuracy: share of gold answers equal to the gold label. Estimated accuracy: from the
        labeler's Dawid-Skene confusion matrix. Excluded: gold accuracy below the minimum with 95% posterior probability.
      </Text>
      <QueryTable
        query={labelers}
        columns={labelerColumns}
        caption="Labelers by label space"
        empty="No labels yet in your label spaces."
        rowKey={(r) => `${r.labeler_id}/${r.label_space}`}
      />
    </SectionCard>
  );
}

/** The fields of the settings form: group, name, label, help, and whether it takes decimals. */
const FIELDS = [
  { group: "task_defaults", name: "consensus_threshold", label: "Consensus threshold", help: "agreeing labels that settle a task (1–25)" },
  { group: "task_defaults", name: "max_labels", label: "Max labels", help: "labels after which a task settles anyway (1–50)" },
  {
    group: "task_defaults",
    name: "confidence_target",
    label: "Confidence target",
    help: "confidence policy: settle when the leading option's posterior reaches this (0.5–0.999); empty: threshold policy",
    decimals: true,
  },
  { group: "task_defaults", name: "min_labels", label: "Min labels", help: "labels before the confidence target may decide (1–50)" },
  {
    group: "quality",
    name: "gold_rate",
    label: "Gold rate",
    help: "share of a labeler's claims served from unanswered gold tasks (0–1; empty: 0.1)",
    decimals: true,
  },
  {
    group: "quality",
    name: "min_labeler_accuracy",
    label: "Min labeler accuracy",
    help: "exclude labelers whose gold accuracy is below this (between 0 and 1; empty: nobody is excluded)",
    decimals: true,
  },
  { group: "quality", name: "min_gold_answers", label: "Min gold answers", help: "gold answers before exclusion may apply (empty: 10)" },
] as const;

type FieldKey = `${(typeof FIELDS)[number]["group"]}.${(typeof FIELDS)[number]["name"]}`;
type FormValues = Record<FieldKey, string | number>;

function valuesOf(settings: Settings): FormValues {
  const out = {} as FormValues;
  for (const f of FIELDS) {
    const group = settings[f.group] as Record<string, number | null>;
    out[`${f.group}.${f.name}`] = group[f.name] ?? "";
  }
  return out;
}

/** The PATCH body of the form: every field sent, an empty one as `null` (clears it). */
function patchOf(values: FormValues): { task_defaults: Record<string, number | null>; quality: Record<string, number | null> } {
  const patch = { task_defaults: {} as Record<string, number | null>, quality: {} as Record<string, number | null> };
  for (const f of FIELDS) {
    const v = values[`${f.group}.${f.name}`];
    patch[f.group][f.name] = v === "" ? null : Number(v);
  }
  return patch;
}

function SettingsForm({ editable }: { editable: boolean }) {
  const { client } = useSession();
  const settings = useQuery({ queryKey: ["settings"], queryFn: () => client.settings.get() });
  return (
    <SectionCard title="Settings">
      <Text size="sm" c="dimmed" mb="sm">
        Task defaults apply to tasks, batches and jobs that do not set these fields themselves. An empty field is unset.
      </Text>
      <QueryView query={settings}>{(s) => <SettingsEditor settings={s} editable={editable} />}</QueryView>
    </SectionCard>
  );
}

function SettingsEditor({ settings, editable }: { settings: Settings; editable: boolean }) {
  const { client } = useSession();
  const queryClient = useQueryClient();
  const [values, setValues] = useState<FormValues>(() => valuesOf(settings));
  const save = useMutation({
    mutationFn: () => client.settings.update(patchOf(values)),
    onSuccess: (saved) => {
      queryClient.setQueryData(["settings"], saved);
      setValues(valuesOf(saved));
    },
  });
  const fieldErrors = new Map<string, string>();
  const otherErrors: string[] = [];
  if (save.error instanceof ValidationError) {
    for (const d of save.error.details) {
      if (FIELDS.some((f) => `${f.group}.${f.name}` === d.path))
        fieldErrors.set(d.path, [fieldErrors.get(d.path), d.message].filter(Boolean).join("; "));
      else otherErrors.push(d.path ? `${d.path}: ${d.message}` : d.message);
    }
  }
  const onSubmit = (e: FormEvent) => {
    e.preventDefault();
    save.mutate();
  };
  const group = (name: "task_defaults" | "quality", legend: string) => (
    <fieldset className="settings-group">
      <legend>{legend}</legend>
      <div className="settings-fields">
        {FIELDS.filter((f) => f.group === name).map((f) => {
          const key: FieldKey = `${f.group}.${f.name}`;
          return (
            <NumberInput
              key={key}
              name={key}
              label={f.label}
              description={f.help}
              value={values[key]}
              onChange={(v) => setValues((old) => ({ ...old, [key]: v }))}
              allowDecimal={"decimals" in f && f.decimals}
              step={"decimals" in f && f.decimals ? 0.01 : 1}
              clampBehavior="none"
              hideControls
              disabled={!editable}
              error={fieldErrors.get(key)}
            />
          );
        })}
      </div>
    </fieldset>
  );
  return (
    <form onSubmit={onSubmit} aria-label="Settings" noValidate>
      <Stack>
        {group("task_defaults", "Task defaults")}
        {group("quality", "Quality")}
        {otherErrors.length > 0 && (
          <Alert color="red" title="The settings were not saved" role="alert">
            {otherErrors.join("; ")}
          </Alert>
        )}
        <ErrorAlert error={save.error instanceof ValidationError ? null : save.error} title="The settings were not saved" />
        {save.error instanceof ValidationError && fieldErrors.size > 0 && (
          <Text c="red" size="sm" role="alert">
            The settings were not saved: check{" "}
            {FIELDS.filter((f) => fieldErrors.has(`${f.group}.${f.name}`))
              .map((f) => f.label)
              .join(", ")}
            .
          </Text>
        )}
        <Group>
          <Button type="submit" loading={save.isPending} disabled={!editable}>
            Save settings
          </Button>
          {save.isSuccess && (
            <Text size="sm" role="status" c="green">
              Saved.
            </Text>
          )}
        </Group>
      </Stack>
    </form>
  );
}
