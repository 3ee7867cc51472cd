/**
 * Quality (contract §quality): the settled tasks of the last 90 days (confidence, resolution, agreement, labels per
 * task), the calibration plot of `confidence` against gold answers (mean confidence against accuracy per
 * bin, the diagonal of perfect calibration, the ECE) and beside it the same diagram of reviewed results with their
 * figures per label space, the labelers table (GET /v1/dashboard/labelers) and
 * the settings form (GET/PATCH /v1/customers/me/settings) with the API's 400 details shown at their fields.
 * The labelers table and the settings are shown when the gateway has their routes (capabilities.ts).
 */
import { type DashboardQuality, type LabelerQualityList, type Settings, ValidationError } from "@labelgate/sdk/browser";
import { Alert, Badge, Button, Card, Group, NumberInput, Stack, Table, Text } from "@mantine/core";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { createColumnHelper } from "@tanstack/react-table";
import { type FormEvent, useMemo, useState } from "react";
import { ROUTE, useCapabilities } from "../../shared/capabilities";
import { formatCount, formatShare } from "../../shared/format";
import { useSession } from "../auth";
import { barSeries, Chart, type PointSeries } from "../components/Chart";
import { ColumnHeads, Defined, ErrorAlert, Mono, PageHeader, QueryView, SectionCard, Stat, StatusBadge } from "../components/common";
import { type CoreFeatures, QueryTable } from "../components/DataTable";

type Calibration = NonNullable<DashboardQuality["calibration"]>;
type Reviewed = DashboardQuality["reviewed"];
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
                <Stat
                  label="Tasks settled"
                  value={formatCount(q.tasks_settled)}
                  hint={`last ${q.window_days} days`}
                  definition={`tasks settled in the last ${q.window_days} days: the tasks every other figure here is about`}
                />
                <Stat
                  label="Mean confidence"
                  value={formatShare(q.mean_confidence)}
                  definition="mean of the settled tasks' confidence: for a single choice, the probability its label is right; for a box, span or multi-label task, the probability its whole answer is right"
                />
                <Stat
                  label="Agreement"
                  value={formatShare(q.agreement_rate)}
                  hint={q.agreement_rate === null ? "no task with 2 labels or more" : "labels equal to their task's consensus"}
                  definition="share of the labels of settled single-choice tasks with at least 2 labels that equal their task's consensus (a lone label agrees with itself, so those tasks are left out)"
                />
                <Stat
                  label="By consensus"
                  value={formatShare(q.resolution.consensus.share)}
                  hint={`${formatCount(q.resolution.consensus.tasks)} tasks`}
                  definition="share of settled tasks decided by the threshold rule: enough labels agreed"
                />
                <Stat
                  label="By confidence"
                  value={formatShare(q.resolution.confidence.share)}
                  hint={`${formatCount(q.resolution.confidence.tasks)} tasks`}
                  definition="share of settled tasks decided when their confidence reached the confidence target"
                />
                <Stat
                  label="At max labels"
                  value={formatShare(q.resolution.max_labels.share)}
                  hint={`${formatCount(q.resolution.max_labels.tasks)} tasks`}
                  definition="share of settled tasks that reached max_labels undecided and settled on their leading answer"
                />
              </div>
              <Card withBorder>
                <LabelsPerTask quality={q} />
              </Card>
              <div className="reliability-pair">
                <SectionCard title="Calibration">
                  {q.calibration ? (
                    <ReliabilityPlot
                      bins={q.calibration.bins}
                      ece={q.calibration.ece}
                      measured={`${formatCount(q.calibration.gold_tasks)} gold tasks`}
                      testId="ece"
                      yLabel="accuracy on gold"
                      title="Calibration: accuracy on gold against mean confidence, per bin"
                    />
                  ) : (
                    <Text size="sm" c="dimmed">
                      No gold answers yet: calibration compares the confidence of decisions with the gold label of gold tasks. Add tasks
                      with a <code>gold_label</code> to measure it.
                    </Text>
                  )}
                </SectionCard>
                <SectionCard title="Reviewed results">
                  <Reviewed reviewed={q.reviewed} />
                </SectionCard>
              </div>
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

/**
 * A reliability diagram: mean confidence against accuracy of each non-empty bin, with the diagonal of perfect
 * calibration, under the ECE over `measured` (what the accuracy was measured on). Drawn for gold tasks and for
 * reviewed results.
 */
function ReliabilityPlot({
  bins,
  ece,
  measured,
  testId,
  yLabel,
  title,
}: {
  bins: Calibration["bins"];
  ece: number | null;
  measured: string;
  testId: string;
  yLabel: string;
  title: string;
}) {
  const spec = useMemo<PointSeries>(() => {
    const used = bins.filter((b) => b.tasks > 0 && b.mean_confidence !== null && b.accuracy !== null);
    return {
      kind: "points",
      x: used.map((b) => b.mean_confidence as number),
      y: used.map((b) => b.accuracy as number),
      diagonal: true,
      range: [0, 1],
      xLabel: "mean confidence",
      yLabel,
    };
  }, [bins, yLabel]);
  return (
    <>
      <Text size="sm" mb="xs" data-testid={testId}>
        Expected calibration error (ECE): <strong>{formatShare(ece)}</strong> over {measured} (10 equal-width bins; 0% is perfect: among
        decisions at confidence c, a share c is right).
      </Text>
      <Chart spec={spec} title={title} height={280} />
    </>
  );
}

/**
 * What customers' reviews say of `confidence` (contract §quality): reviewed results are a uniform sample of
 * what settled (the audit queue), so their reliability diagram is drawn beside the gold one; then each label
 * space's figures.
 */
function Reviewed({ reviewed }: { reviewed: Reviewed }) {
  if (reviewed.reviews === 0)
    return (
      <Text size="sm" c="dimmed" data-testid="no-reviews">
        No reviewed result yet: set the customer setting <code>quality.audit_rate</code> (PATCH /v1/customers/me/settings) and review the
        audits (the Review page) to measure the confidence of settled results against your own answers.
      </Text>
    );
  return (
    <Stack gap="xs">
      <Text size="sm" data-testid="reviewed-summary">
        <Defined
          term="Reviewed accuracy"
          definition="share of the reviewed results the latest review found right: accepted, or rejected with an answer equal to the result"
        />
        : <strong>{formatShare(reviewed.reviewed_accuracy)}</strong> of {formatCount(reviewed.reviews)} reviewed results ·{" "}
        <Defined term="mean confidence" definition="mean confidence of the reviewed results when they were reviewed" />{" "}
        {formatShare(reviewed.mean_confidence_reviewed)}
      </Text>
      <ReliabilityPlot
        bins={reviewed.bins}
        ece={reviewed.ece}
        measured={`${formatCount(reviewed.reviews)} reviewed results`}
        testId="reviewed-ece"
        yLabel="accuracy found by reviews"
        title="Reviewed results: accuracy found by reviews against mean confidence, per bin"
      />
      <div className="table-scroll">
        <Table captionSide="top" data-testid="reviewed-spaces">
          <caption>Reviewed results by label space</caption>
          <ColumnHeads names={["Label space", "Reviews", "Reviewed accuracy", "Mean confidence", "ECE"]} />
          <Table.Tbody>
            {reviewed.label_spaces.map((s) => (
              <Table.Tr key={s.label_space_id}>
                <Table.Td>
                  {s.question}
                  {s.task_type ? ` (${s.task_type})` : ""}
                </Table.Td>
                <Table.Td>{formatCount(s.reviews)}</Table.Td>
                <Table.Td>{formatShare(s.reviewed_accuracy)}</Table.Td>
                <Table.Td>{formatShare(s.mean_confidence_reviewed)}</Table.Td>
                <Table.Td>{formatShare(s.ece)}</Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      </div>
    </Stack>
  );
}

const helper = createColumnHelper<CoreFeatures, LabelerRow>();
const labelerColumns = helper.columns([
  helper.accessor("labeler_id", {
    header: "Labeler",
    cell: (info) => {
      const model = info.row.original.model;
      return (
        <>
          <Mono>{info.getValue()}</Mono>
          {model !== null && model !== undefined && (
            <Text size="xs" data-testid="model-labeler">
              <Badge size="xs" variant="light" color="grape" mr={4}>
                model
              </Badge>
              <Mono>model:{model}</Mono>
            </Text>
          )}
        </>
      );
    },
  }),
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
        One row per labeler and label space. Labels: the labeler's answers in the space (one per task, however many boxes or spans it
        holds), as of the space's last fit. Gold answers: its answers to gold tasks. Gold accuracy: share of gold answers equal to the gold
        label. Estimated accuracy: from the labeler's Dawid-Skene confusion matrix. Excluded: gold accuracy below the minimum with 95%
        posterior probability. A row marked model is a model's pre-labels (its labeler model:NAME), weighed like a person's and never
        charged.
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
  {
    group: "task_defaults",
    name: "min_gain",
    label: "Min gain",
    help: "confidence policy: also settle (no_gain) when one more label cannot raise the confidence by this much (0.001–0.5); empty: off",
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
  {
    group: "quality",
    name: "audit_rate",
    label: "Audit rate",
    help: "share of settled tasks drawn at random into the audit queue for your review (0–1; empty: 0)",
    decimals: true,
  },
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
