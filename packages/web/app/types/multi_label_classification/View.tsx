import { Badge, Text } from "@mantine/core";
import { LabeledProgress } from "../../console/components/common";
import { type ConsensusView, type ConsensusViewProps, percent } from "../../console/task-types/view-kit";
import { specChoices } from "../../shared/label-spec";

// --- multi_label_classification ---------------------------------------------------------------------

function MultiLabelView({ task, value, labels, posterior, source }: ConsensusViewProps & { labels: string[] }) {
  const chosen = new Set(labels);
  const confidence = "confidence" in value && typeof value.confidence === "object" ? value.confidence : null;
  return (
    <ul className="tt-options" aria-label={source === "gold" ? "Options of the gold answer" : "Options of the consensus"}>
      {specChoices(task.task_type, task.label_spec).map((o) => {
        const p = posterior?.[o];
        const on = chosen.has(o);
        return (
          <li key={o} className="tt-option" data-testid="consensus-option" data-chosen={on}>
            <Text span fw={600}>
              {o}
            </Text>
            <Badge color={on ? "green" : "gray"} variant="light">
              {on ? "chosen" : "not chosen"}
            </Badge>
            {p !== undefined ? (
              <>
                <LabeledProgress value={100 * p} label={`P(${o} applies)`} size="lg" color={on ? "green" : "gray"} />
                <Text span size="sm">
                  P(applies) {percent(p)}
                  {confidence?.[o] !== undefined ? ` · confidence ${percent(confidence[o])}` : ""}
                </Text>
              </>
            ) : (
              <span />
            )}
          </li>
        );
      })}
    </ul>
  );
}

/** The console view of a multi-label consensus or gold answer. */
export const multiLabelView: ConsensusView = {
  parts: "Options",
  drawsItem: null,
  render: (p) => ("labels" in p.value ? <MultiLabelView {...p} labels={p.value.labels} /> : null),
};
