/** free_text quality core (src/types/free_text): normalization, alignment, weighted vote, fit, stopping, degenerate inputs. */
import {
  alignSequences,
  decideText,
  emptyTextModel,
  equalAnswers,
  fitAccuracies,
  fitLogistic,
  fitPlatt,
  fitTextModel,
  normalizeText,
  normalizeWords,
  slotCorrectness,
  type TextAnswer,
  type TextModel,
  type TextTask,
  textConsensus,
  textParts,
  voteWeight,
  wordDistance,
} from "../src/types/free_text";

const w = (s: string) => normalizeWords(s);
const answer = (labelerId: string, text: string): TextAnswer => ({ labelerId, words: w(text) });
const model = (accuracy: Record<string, number> = {}, defaultAccuracy = 0.85): TextModel => ({
  ...emptyTextModel(),
  accuracy: new Map(Object.entries(accuracy)),
  defaultAccuracy,
});
/** The network as rows of words per sequence ("-" = no word). */
const rows = (sequences: string[]) => {
  const slots = alignSequences(sequences.map(w));
  return sequences.map((_, i) => slots.map((s) => s.words[i] ?? "-").join(" "));
};

describe("normalization (`words`, the default)", () => {
  it("folds case, NFKC, replaces punctuation by a space and collapses white space", () => {
    expect(normalizeText("  Hello,   WORLD!\n")).toBe("hello world");
    expect(normalizeText("ﬁne Ｆｕｌｌ")).toBe("fine full"); // NFKC: ligature and full-width letters
    expect(normalizeWords("air-tight, I'm (sure)…")).toEqual(["air", "tight", "i", "m", "sure"]);
    expect(normalizeWords("«Quoted» — dash")).toEqual(["quoted", "dash"]);
  });
  it("keeps numbers as written and symbols", () => {
    // "%" is punctuation in Unicode (Po), "$" a symbol (Sc)
    expect(normalizeWords("In 1845, 3.5% of $20")).toEqual(["in", "1845", "3", "5", "of", "$20"]);
    expect(normalizeWords("eighteen forty five")).not.toEqual(normalizeWords("1845"));
  });
  it("gives no words for an empty or blank text, and `none` only splits on white space", () => {
    expect(normalizeWords("")).toEqual([]);
    expect(normalizeWords(" \t\n ")).toEqual([]);
    expect(normalizeWords("...!?")).toEqual([]);
    expect(normalizeWords("Hello,  World!", "none")).toEqual(["Hello,", "World!"]);
  });
});

describe("word distance", () => {
  it("counts substitutions, insertions and deletions of words", () => {
    expect(wordDistance(w("a b c"), w("a b c"))).toBe(0);
    expect(wordDistance(w("a b c"), w("a x c"))).toBe(1);
    expect(wordDistance(w("a b c"), w("a c"))).toBe(1);
    expect(wordDistance(w("a c"), w("a b c d"))).toBe(2);
    expect(wordDistance([], w("a b"))).toBe(2);
    expect(wordDistance([], [])).toBe(0);
  });
  it("treats each word as one symbol, however long", () => {
    expect(wordDistance(["extraordinary"], ["extraordinarily"])).toBe(1);
  });
});

describe("alignment into a word transition network", () => {
  it("lines up equal words and puts a substituted word in its slot", () => {
    expect(rows(["the cat sat", "the bat sat"])).toEqual(["the cat sat", "the bat sat"]);
  });
  it("opens a slot for an inserted word, where earlier sequences have none", () => {
    expect(rows(["the cat sat", "the black cat sat"])).toEqual(["the - cat sat", "the black cat sat"]);
  });
  it("leaves a deleted word's slot empty for the sequence that lacks it", () => {
    expect(rows(["the black cat sat", "the cat sat", "black cat"])).toEqual(["the black cat sat", "the - cat sat", "- black cat -"]);
  });
  it("puts a misspelt word in the slot of its nearest word when a gap has more slots than words", () => {
    expect(rows(["we saw three big dogs", "we saw tree dogs"])).toEqual(["we saw three big dogs", "we saw tree - dogs"]);
  });
  it("aligns empty sequences as all-empty slots and no sequences as no slots", () => {
    expect(alignSequences([])).toEqual([]);
    expect(alignSequences([[], []])).toEqual([]);
    expect(rows(["", "a b"])).toEqual(["- -", "a b"]);
  });
});

describe("weighted word vote", () => {
  it("takes the majority word of each slot, dropping a word most answers lack", () => {
    const c = textConsensus(model(), [answer("a", "the cat sat"), answer("b", "the bat sat"), answer("c", "the cat sat down")]);
    expect(c.text).toBe("the cat sat");
    expect(c.words).toEqual(["the", "cat", "sat"]);
    expect(c.wordConfidences).toHaveLength(3);
    expect(c.slots).toHaveLength(4);
    expect(c.slots[3]?.word).toBeNull();
    expect(c.agreeing).toBe(1);
  });
  it("lets one reliable labeler outvote two unreliable ones in a slot", () => {
    const answers = [answer("good", "a red car"), answer("poor1", "a bed car"), answer("poor2", "a bed car")];
    expect(textConsensus(model(), answers).text).toBe("a bed car");
    expect(textConsensus(model({ good: 0.99, poor1: 0.3, poor2: 0.3 }), answers).text).toBe("a red car");
    // and the weight grows with accuracy
    expect(voteWeight(0.99)).toBeGreaterThan(voteWeight(0.9));
    expect(voteWeight(0.9)).toBeGreaterThan(voteWeight(0.3));
  });
  it("breaks a tie by the more trusted labeler's word", () => {
    const answers = [answer("x", "one two"), answer("y", "one too")];
    expect(textConsensus(model({ x: 0.9, y: 0.91 }), answers).text).toBe("one too");
    expect(textConsensus(model({ x: 0.91, y: 0.9 }), answers).text).toBe("one two");
  });
  it("is more confident with more agreeing answers, and the slot posteriors are probabilities", () => {
    const one = textConsensus(model(), [answer("a", "hello world")]);
    const three = textConsensus(model(), [answer("a", "hello world"), answer("b", "hello world"), answer("c", "hello world")]);
    expect(three.wordConfidences[0]).toBeGreaterThan(one.wordConfidences[0] as number);
    expect(three.confidence).toBeGreaterThan(one.confidence);
    for (const s of three.slots) {
      const total = s.choices.reduce((a, c) => a + c.posterior, 0);
      expect(total).toBeLessThan(1); // the rest is "a word no answer has"
      expect(s.raw).toBe(s.choices[0]?.posterior);
    }
  });
  it("gives an empty consensus for no answers or only empty answers", () => {
    for (const answers of [[], [answer("a", "")], [answer("a", " "), answer("b", "?!")]]) {
      const c = textConsensus(model(), answers);
      expect(c.text).toBe("");
      expect(c.slots).toEqual([]);
      expect(c.confidence).toBeGreaterThan(0);
      expect(c.confidence).toBeLessThanOrEqual(1);
    }
  });
  it("returns the one answer's text when there is one answer", () => {
    const c = textConsensus(model(), [answer("a", "Just one, answer.")]);
    expect(c.text).toBe("just one answer");
    expect(c.agreeing).toBe(1);
  });
  it("keeps words out of an empty answer's way: an empty answer votes 'no word' in every slot", () => {
    const c = textConsensus(model(), [answer("a", "a b"), answer("b", "a b"), answer("c", "")]);
    expect(c.text).toBe("a b");
    expect(c.slots.every((s) => s.votes[2] === null)).toBe(true);
  });
});

/** A crowd with known truth: labelers of accuracy acc change each word with probability 1 - acc. */
function crowd(seed: number) {
  let state = seed >>> 0;
  const random = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const vocabulary = Array.from({ length: 40 }, (_, i) => `w${i}`);
  const labelers = [
    ...Array.from({ length: 4 }, (_, i) => ({ id: `good${i}`, acc: 0.97 })),
    ...Array.from({ length: 4 }, (_, i) => ({ id: `poor${i}`, acc: 0.6 })),
  ];
  const tasks: (TextTask & { truth: string[] })[] = [];
  for (let t = 0; t < 80; t++) {
    const truth = Array.from({ length: 6 }, () => vocabulary[Math.floor(random() * vocabulary.length)] as string);
    const chosen = [...labelers].sort(() => random() - 0.5).slice(0, 5);
    const answers = chosen.map((l) => ({
      labelerId: l.id,
      words: truth.map((word) => (random() < l.acc ? word : (vocabulary[Math.floor(random() * vocabulary.length)] as string))),
    }));
    tasks.push({ id: `t${t}`, answers, truth });
  }
  return tasks;
}

describe("fit", () => {
  it("estimates labeler accuracies without gold, good labelers above poor ones", () => {
    const tasks = crowd(7);
    const { accuracy, defaultAccuracy } = fitAccuracies(tasks);
    for (let i = 0; i < 4; i++) expect(accuracy.get(`good${i}`)).toBeGreaterThan(accuracy.get(`poor${i}`) as number);
    expect(accuracy.get("good0")).toBeGreaterThan(0.85);
    expect(accuracy.get("poor0")).toBeLessThan(0.75);
    expect(defaultAccuracy).toBeGreaterThan(0.6);
    expect(defaultAccuracy).toBeLessThan(0.95);
  });
  it("the weighted consensus makes no more word errors than the unweighted vote", () => {
    const tasks = crowd(11);
    const fitted = fitTextModel(tasks);
    const flat = emptyTextModel();
    let weighted = 0;
    let unweighted = 0;
    for (const t of tasks) {
      weighted += wordDistance(textConsensus(fitted, t.answers).words, t.truth);
      unweighted += wordDistance(textConsensus(flat, t.answers).words, t.truth);
    }
    expect(weighted).toBeLessThanOrEqual(unweighted);
  });
  it("calibrates the confidences on gold tasks, and keeps the identity maps without gold", () => {
    const tasks = crowd(3);
    expect(fitTextModel(tasks).word).toEqual({ coefficients: [0, 1, 0, 0] });
    const withGold = fitTextModel(tasks.map((t, i) => (i % 2 === 0 ? { ...t, gold: t.truth } : t)));
    expect(withGold.word).not.toEqual({ coefficients: [0, 1, 0, 0] });
    // on the other half: mean word confidence within 0.1 of the share of right words
    let right = 0;
    let confidence = 0;
    let n = 0;
    tasks.forEach((t, i) => {
      if (i % 2 === 0) return;
      const c = textConsensus(withGold, t.answers);
      slotCorrectness(c, t.truth).forEach((r, s) => {
        right += r ? 1 : 0;
        confidence += c.slots[s]?.confidence as number;
        n++;
      });
    });
    expect(Math.abs(confidence / n - right / n)).toBeLessThan(0.1);
  });
  it("rejects a prior strength that is not positive", () => {
    expect(() => fitAccuracies([], { priorWords: 0 })).toThrow(RangeError);
  });
  it("ignores single-answer tasks for accuracies and keeps every labeler at the default", () => {
    const { accuracy } = fitAccuracies([{ id: "t", answers: [answer("a", "x y")] }]);
    expect(accuracy.size).toBe(0);
  });
});

describe("logistic and Platt maps", () => {
  it("recovers a Platt map that shrinks overconfident scores", () => {
    const samples = [];
    for (let i = 0; i < 200; i++) samples.push({ raw: 0.99, right: i < 160, weight: 1 });
    for (let i = 0; i < 200; i++) samples.push({ raw: 0.6, right: i < 100, weight: 1 });
    const map = fitPlatt(samples);
    const at = (raw: number) => 1 / (1 + Math.exp(-(map.a * Math.log(raw / (1 - raw)) + map.b)));
    expect(at(0.99)).toBeCloseTo(0.8, 1);
    expect(at(0.6)).toBeCloseTo(0.5, 1);
  });
  it("returns the start on no samples", () => {
    expect(fitLogistic([], [0, 1, 0, 0])).toEqual([0, 1, 0, 0]);
    expect(fitPlatt([])).toEqual({ a: 1, b: 0 });
  });
});

describe("slot correctness against gold", () => {
  it("marks matched words right and a wrong 'no word' slot wrong", () => {
    const c = textConsensus(model(), [answer("a", "the cat sat"), answer("b", "the bat sat"), answer("c", "the cat sat down")]);
    expect(slotCorrectness(c, w("the cat sat"))).toEqual([true, true, true, true]);
    expect(slotCorrectness(c, w("the bat sat down"))).toEqual([true, false, true, false]);
  });
});

describe("stopping", () => {
  const threshold = { kind: "threshold", consensusThreshold: 2, maxLabels: 4 } as const;
  const confidence = { kind: "confidence", confidenceTarget: 0.9, minLabels: 1, maxLabels: 4 } as const;
  const decide = (policy: Parameters<typeof decideText>[0], m: TextModel, texts: string[]) => {
    const answers = texts.map((t, i) => answer(`l${i}`, t));
    return decideText(
      policy,
      answers.map((a) => a.words),
      textConsensus(m, answers),
    );
  };
  it("threshold policy: settles on consensus_threshold equal normalized answers", () => {
    expect(equalAnswers([w("Hello, world"), w("hello world!"), w("hello")])).toBe(2);
    expect(decide(threshold, model(), ["Hello, world"])).toEqual({ settled: false, labelsNeeded: 3 });
    expect(decide(threshold, model(), ["Hello, world", "hello world!"])).toEqual({ settled: true, resolution: "consensus" });
    expect(decide(threshold, model(), ["a", "b", "c"])).toEqual({ settled: false, labelsNeeded: 1 });
    expect(decide(threshold, model(), ["a", "b", "c", "d"])).toEqual({ settled: true, resolution: "max_labels" });
  });
  it("confidence policy: settles when every slot reaches the target, not before", () => {
    const sharp: TextModel = { ...model({}, 0.95), word: { coefficients: [0, 1, 0, 0] } };
    // one answer of a 0.95 labeler: raw slot posterior 76/76.5 > 0.9 per word
    expect(decide(confidence, sharp, ["hello world"])).toEqual({ settled: true, resolution: "confidence" });
    // a split slot stays below the target
    expect(decide(confidence, sharp, ["hello world", "hello word"])).toEqual({ settled: false, labelsNeeded: 2 });
    expect(decide(confidence, sharp, ["hello world", "hello word", "hello ward"])).toEqual({ settled: false, labelsNeeded: 1 });
    // two agreeing 0.95 labelers against one: 76^2 / (76^2 + 76 + 0.5) > 0.9
    expect(decide(confidence, sharp, ["hello world", "hello word", "hello world"])).toEqual({ settled: true, resolution: "confidence" });
    expect(decide(confidence, sharp, ["hello world", "hello word", "hello ward", "hello wild"])).toEqual({
      settled: true,
      resolution: "max_labels",
    });
    // a poor labeler's single answer does not settle
    expect(decide(confidence, model({}, 0.5), ["hello world"])).toEqual({ settled: false, labelsNeeded: 3 });
  });
  it("min_labels holds a confident task open", () => {
    const sharp: TextModel = { ...model({}, 0.95), word: { coefficients: [0, 1, 0, 0] } };
    expect(decide({ ...confidence, minLabels: 2 }, sharp, ["hello world"])).toEqual({ settled: false, labelsNeeded: 3 });
  });
  it("an all-empty consensus is one part at the whole text's confidence", () => {
    const c = textConsensus(model(), [answer("a", "")]);
    expect(textParts(c)).toEqual([]);
    const d = decideText(confidence, [[]], c);
    expect(d.settled).toBe(c.confidence >= 0.9);
  });
  it("rejects a policy outside its bounds", () => {
    expect(() => decide({ kind: "threshold", consensusThreshold: 0, maxLabels: 4 }, model(), ["a"])).toThrow(RangeError);
    expect(() => decide({ kind: "confidence", confidenceTarget: 1.5, minLabels: 1, maxLabels: 4 }, model(), ["a"])).toThrow(RangeError);
  });
});
