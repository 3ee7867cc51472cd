/**
 * A labeler's `labels` after a refit of a reserved type is its answers in the space (issue 40 item 7: a
 * labeler who sent one span answer over a six-token text was shown "Labels 6", the token labels of its
 * entity-type sub-space), whatever the type counts inside an answer.
 */
import { refitTyped, type StoredLabelerRow, type TypedFitInput } from "../src/index";

function input(over: Pick<TypedFitInput, "type" | "spec" | "tasks">): TypedFitInput {
  const labelers: StoredLabelerRow[] = [];
  return {
    id: "lsp_test",
    version: 0,
    policy: { kind: "threshold", consensusThreshold: 2, maxLabels: 3 },
    space: null,
    labelers,
    labels: over.tasks.reduce((n, t) => n + t.answers.length, 0),
    through: null,
    ...over,
  };
}

const labelsOf = (out: ReturnType<typeof refitTyped>) =>
  Object.fromEntries(out.labelers.map((l) => [l.labelerId, (l.params as { labels: number }).labels]));

it("one span answer over a six-token text is one label", () => {
  const text = "Ada Lovelace met Charles Babbage today";
  const out = refitTyped(
    input({
      type: "text_span",
      spec: { question: "Mark people", entity_types: ["person", "place"] },
      tasks: [
        {
          id: "t1",
          text,
          gold: null,
          answers: [{ labelerId: "lbl_a", value: JSON.stringify({ spans: [{ start: 0, end: 12, label: "person" }] }) }],
        },
      ],
    }),
  );
  expect(labelsOf(out)).toEqual({ lbl_a: 1 });
});

it("box and multi-label answers count one label per task answered", () => {
  const boxes = refitTyped(
    input({
      type: "bounding_box",
      spec: { question: "Box the animals", classes: ["cat", "dog"] },
      tasks: [1, 2].map((i) => ({
        id: `t${i}`,
        text: null,
        gold: null,
        answers: [
          {
            labelerId: "lbl_a",
            value: JSON.stringify({
              boxes: [
                { label: "cat", x: 10, y: 10, w: 40, h: 30 },
                { label: "dog", x: 100, y: 60, w: 50, h: 40 },
              ],
            }),
          },
          ...(i === 2 ? [{ labelerId: "lbl_b", value: JSON.stringify({ boxes: [] }) }] : []),
        ],
      })),
    }),
  );
  expect(labelsOf(boxes)).toEqual({ lbl_a: 2, lbl_b: 1 });
  const multi = refitTyped(
    input({
      type: "multi_label_classification",
      spec: { question: "Which apply?", options: ["a", "b", "c"] },
      tasks: [{ id: "t1", text: null, gold: null, answers: [{ labelerId: "lbl_a", value: JSON.stringify({ labels: ["a", "b"] }) }] }],
    }),
  );
  expect(labelsOf(multi)).toEqual({ lbl_a: 1 });
});
