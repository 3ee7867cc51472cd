/**
 * free_text as a task type module (src/types/free_text/module.ts, docs/decisions/0281): the registry's kind
 * reads answers (length, a word after normalization, canonical text), decides under both policies as decide.ts
 * does, matches gold after normalization, and stores its model as rows that read back to the same consensus.
 */
import type { AnyLabelSpec, FreeTextSpec } from "@labelgate/api";
import { type Policy, taskKindOf } from "../src";
import { decideText, emptyTextModel, fitTextModel, normalizeWords, textConsensus } from "../src/types/free_text";

const spec: FreeTextSpec = { question: "Transcribe", max_length: 12 };
const kind = taskKindOf("free_text");
const threshold: Policy = { kind: "threshold", consensusThreshold: 2, maxLabels: 4 };
const confidence: Policy = { kind: "confidence", consensusThreshold: 2, maxLabels: 4, confidenceTarget: 0.9, minLabels: 2, minGain: null };
const vote = (labelerId: string, text: string) => ({ labelerId, value: JSON.stringify({ text }) });

describe("free_text kind", () => {
  it("reads an answer: canonical text, or the issues of a too long or wordless one", () => {
    expect(kind.readAnswer(spec as AnyLabelSpec, { text: " Hi, you\r\n" }, {})).toEqual({
      value: '{"text":"Hi, you"}',
      answer: { text: "Hi, you" },
    });
    expect(kind.readAnswer(spec as AnyLabelSpec, { text: "a".repeat(13) }, {})).toEqual({
      issues: [{ path: ["text"], message: "is 13 code points, more than max_length 12" }],
    });
    expect("issues" in kind.readAnswer(spec as AnyLabelSpec, { text: " ¿?… " }, {})).toBe(true);
    // under `none` punctuation is a word
    expect("value" in kind.readAnswer({ ...spec, normalize: "none" } as AnyLabelSpec, { text: "?" }, {})).toBe(true);
  });

  it("decides as decide.ts: two equal normalized answers under the threshold policy, every word under the confidence policy", () => {
    const model = kind.scoringModel(spec as AnyLabelSpec, null, []);
    const votes = [vote("a", "The cat."), vote("b", "a cat"), vote("c", "the CAT")];
    for (const policy of [threshold, confidence])
      for (let n = 1; n <= votes.length; n++) {
        const d = kind.decide(spec as AnyLabelSpec, { policy, gold: false }, votes.slice(0, n), model, {});
        const words = votes.slice(0, n).map((v) => normalizeWords((JSON.parse(v.value) as { text: string }).text));
        const c = textConsensus(
          emptyTextModel(),
          words.map((w, i) => ({ labelerId: String(i), words: w })),
        );
        const expected = decideText(policy, words, c);
        expect({ policy: policy.kind, n, done: d.done }).toEqual({ policy: policy.kind, n, done: expected.settled });
        if (d.done && expected.settled) expect(d.resolution).toBe(expected.resolution);
      }
    const settled = kind.decide(spec as AnyLabelSpec, { policy: threshold, gold: false }, votes, model, {});
    expect(settled).toMatchObject({ done: true, label: '{"text":"the cat"}', resolution: "consensus" });
    expect((settled.consensus as { words: { word: string }[] }).words.map((w) => w.word)).toEqual(["the", "cat"]);
  });

  it("matches a gold answer after the spec's normalization", () => {
    expect(kind.goldCorrect(spec as AnyLabelSpec, '{"text":"Hello, World"}', '{"text":"hello world"}')).toBe(true);
    expect(kind.goldCorrect({ ...spec, normalize: "none" } as AnyLabelSpec, '{"text":"Hello, World"}', '{"text":"hello world"}')).toBe(
      false,
    );
  });

  it("stores its model as a space row and labeler rows that read back to the same consensus", () => {
    const tasks = Array.from({ length: 6 }, (_, t) => ({
      id: `t${t}`,
      answers: [vote("good", `word ${t} here`), vote("fair", `word ${t} here`), vote("bad", `ward ${t + 1}`)],
      gold: t < 3 ? JSON.stringify({ text: `word ${t} here` }) : null,
      text: null,
    }));
    const out = kind.refit?.(
      {
        id: "lsp",
        type: "free_text",
        spec: spec as AnyLabelSpec,
        version: 1,
        policy: threshold,
        space: null,
        labelers: [],
        tasks,
        labels: 18,
        through: null,
      },
      () => 0,
    );
    if (!out) throw new Error("free_text has a refit");
    const rows = out.labelers.map((l) => ({ labeler_id: l.labelerId, params: l.params }));
    const model = kind.scoringModel(spec as AnyLabelSpec, out.space, rows);
    const direct = fitTextModel(
      tasks.map((t) => ({
        id: t.id,
        answers: t.answers.map((a) => ({ labelerId: a.labelerId, words: normalizeWords((JSON.parse(a.value) as { text: string }).text) })),
        gold: t.gold === null ? undefined : normalizeWords((JSON.parse(t.gold) as { text: string }).text),
      })),
    );
    expect(model).toEqual(direct);
    expect((direct.accuracy.get("good") as number) > (direct.accuracy.get("bad") as number)).toBe(true);
    expect(kind.labelerSummary(out.space, out.labelers[0]?.params)).toEqual({ labels: 6, estimatedAccuracy: null });
  });
});
