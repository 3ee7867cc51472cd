/**
 * free_text as a task type module (src/types/free_text/module.ts, docs/decisions/0281): the registry's kind
 * reads answers (length, a word after normalization, canonical text), decides under both policies as decide.ts
 * does, matches gold after normalization, and stores its model as rows that read back to the same consensus.
 */
import type { AnyLabelSpec, FreeTextSpec } from "@labelgate/api";
import { decideParts, type Policy, taskKindOf } from "../src";
import { decideText, emptyTextModel, fitTextModel, freeTextType, normalizeWords, textConsensus } from "../src/types/free_text";

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

  it("decides without aligning what the threshold policy cannot settle, exactly as the full parts decide", () => {
    const model = kind.scoringModel(spec as AnyLabelSpec, null, []);
    const texts = ["the cat", "a cat", "the cat", "the hat", "a cat", "cat"];
    const answersOf = (votes: ReturnType<typeof vote>[]) =>
      votes.map((v) => ({ labelerId: v.labelerId, answer: JSON.parse(v.value) as { text: string } }));
    const counted = (parts: { counts: readonly number[] | null }[]) => parts.filter((p) => p.counts !== null);
    let seed = 7;
    const next = () => {
      seed = (seed * 16807) % 2147483647;
      return seed / 2147483647;
    };
    for (let trial = 0; trial < 40; trial++) {
      const votes = Array.from({ length: 4 }, (_, i) => vote(`l${i}`, texts[Math.floor(next() * texts.length)] as string));
      for (const policy of [threshold, confidence, { ...confidence, minLabels: 3 }])
        for (let n = 1; n <= votes.length; n++) {
          const some = votes.slice(0, n);
          const full = freeTextType.aggregate(spec, model as never, answersOf(some));
          expect(counted(freeTextType.countedParts?.(spec, answersOf(some)) ?? [])).toEqual(counted(full.parts));
          const expected = decideParts(policy, n, full.parts);
          const d = kind.decide(spec as AnyLabelSpec, { policy, gold: false }, some, model, {});
          expect({ n, done: d.done, labelsNeeded: d.labelsNeeded }).toEqual({
            n,
            done: expected.settled,
            labelsNeeded: expected.settled ? 0 : Math.max(1, expected.labelsNeeded),
          });
          if (d.done && expected.settled)
            expect({ resolution: d.resolution, label: d.label }).toEqual({ resolution: expected.resolution, label: full.consensusLabel });
        }
    }
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
