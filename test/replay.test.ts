import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import {
  computeAccuracy,
  confidenceItemSettings,
  expectedCalibrationError,
  groupByItem,
  itemSettings,
  majorityVoteAccuracy,
  parseAnswers,
  parseGold,
  pickGoldItems,
  runReplay,
} from "@labelgate/replay";
import { ADMIN_TOKEN, type System, startSystem } from "./system";

/** The crowd data shipped in the repository (dog, rte: each folder names its source). */
const CROWD = path.resolve(__dirname, "../data/crowd");

describe("replay helpers", () => {
  it("parses answers in recorded order and groups them by item", () => {
    const answers = parseAnswers("item,worker,label\n1,a,0\n2,b,1\n1,c,1\n\n");
    expect(answers).toHaveLength(3);
    const groups = groupByItem(answers);
    expect([...groups.keys()]).toEqual(["1", "2"]);
    expect(groups.get("1")?.map((a) => a.worker)).toEqual(["a", "c"]);
  });

  it("lowers max_labels (and then the threshold) for items with few recorded answers", () => {
    expect(itemSettings(10, 3)).toMatchObject({ consensusThreshold: 3, maxLabels: 7 });
    expect(itemSettings(5, 3)).toMatchObject({ consensusThreshold: 3, maxLabels: 5 });
    expect(itemSettings(1, 3)).toMatchObject({ consensusThreshold: 1, maxLabels: 1 });
  });

  it("confidence policy settings: max_labels = recorded answers, at most 50; threshold never above it", () => {
    expect(confidenceItemSettings(10)).toMatchObject({ consensusThreshold: 3, maxLabels: 10 });
    expect(confidenceItemSettings(2)).toMatchObject({ consensusThreshold: 2, maxLabels: 2 });
    expect(confidenceItemSettings(80)).toMatchObject({ maxLabels: 50 });
  });

  it("picks a seeded share of the items with gold: the same items for the same seed, others for another", () => {
    const items = Array.from({ length: 200 }, (_, i) => String(i));
    const gold = new Map(items.filter((i) => Number(i) % 2 === 0).map((i) => [i, "a"]));
    const a = pickGoldItems(items, gold, 0.1, 1);
    expect(a.size).toBe(10);
    expect([...a].every((i) => gold.has(i))).toBe(true);
    expect(pickGoldItems(items, gold, 0.1, 1)).toEqual(a);
    expect(pickGoldItems(items, gold, 0.1, 2)).not.toEqual(a);
    expect(pickGoldItems(items, gold, 0, 1).size).toBe(0);
    expect(() => pickGoldItems(items, gold, 1.5, 1)).toThrow(RangeError);
  });

  it("ECE over 10 equal-width bins: |accuracy - confidence| weighted by the bins' shares", () => {
    // bin 9: 2 predictions at 0.95, 1 right (|0.5 - 0.95| = 0.45); bin 6: 2 at 0.6, both right (0.4)
    const { ece, bins } = expectedCalibrationError([
      { confidence: 0.95, correct: true },
      { confidence: 0.95, correct: false },
      { confidence: 0.6, correct: true },
      { confidence: 0.6, correct: true },
    ]);
    expect(ece).toBeCloseTo(0.5 * 0.45 + 0.5 * 0.4, 10);
    expect(bins[9]).toMatchObject({ tasks: 2, accuracy: 0.5 });
    expect(bins[6]?.mean_confidence).toBeCloseTo(0.6, 10);
    expect(expectedCalibrationError([{ confidence: 1, correct: true }]).bins[9]?.tasks).toBe(1);
    expect(expectedCalibrationError([]).ece).toBeNull();
  });

  it("scores accuracy against gold only for items with gold, and majority vote with 1/k tie credit", () => {
    const gold = parseGold("item,label\n1,0\n2,1\n");
    expect(
      computeAccuracy(
        new Map([
          ["1", "0"],
          ["2", "0"],
          ["3", "1"],
        ]),
        gold,
      ).accuracy,
    ).toBe(0.5);
    const groups = groupByItem(parseAnswers("item,worker,label\n1,a,0\n1,b,1\n2,a,1\n2,b,1\n2,c,0\n"));
    // item 1 is a 0/1 tie (credit 1/2), item 2 is a clear 1 (credit 1)
    expect(majorityVoteAccuracy(groups, gold).accuracy).toBe(0.75);
  });
});

describe("a short replay of real crowd data through the whole system", () => {
  let sys: System;
  beforeAll(async () => {
    sys = await startSystem();
  });
  afterAll(() => sys.close());

  it.each([["dog", 25]])("settles every task of the first items of %s and reports the summary line", async (dataset, limit) => {
    const summary = await runReplay({
      dataset: path.join(CROWD, dataset),
      baseUrl: sys.baseUrl,
      adminToken: ADMIN_TOKEN,
      limit,
      concurrency: 8,
    });
    expect(summary).toMatchObject({ dataset, tasks: limit, settled: limit });
    expect(summary.accuracy).toBeGreaterThan(0.5);
    expect(summary.majority_vote_accuracy_all_labels).toBeGreaterThan(0.5);
    expect(summary.labels_per_task).toBeGreaterThanOrEqual(1);
    expect(summary.labels_per_task).toBeLessThanOrEqual(7);
    // every settled task has a ledger record and exactly one task.settled event
    const settled = await sys.db.prisma.task.count({ where: { status: "settled" } });
    expect(await sys.db.prisma.ledgerEntry.count()).toBe(settled);
    expect(await sys.db.prisma.event.count({ where: { type: "task.settled" } })).toBe(settled);
  });

  it("the confidence policy with gold: gold tasks fed first and never settled, the summary's share and ECE", async () => {
    const before = await sys.db.prisma.task.count({ where: { status: "settled" } });
    const summary = await runReplay({
      dataset: path.join(CROWD, "rte"),
      baseUrl: sys.baseUrl,
      adminToken: ADMIN_TOKEN,
      limit: 40,
      concurrency: 8,
      confidenceTarget: 0.9,
      goldShare: 0.25,
      seed: 7,
    });
    expect(summary).toMatchObject({ dataset: "rte", policy: "confidence", target: 0.9, gold_share: 0.25, seed: 7, gold_tasks: 10 });
    expect(summary.tasks).toBe(30);
    expect(summary.settled).toBe(30);
    expect(summary.label_share).toBeGreaterThan(0);
    expect(summary.label_share).toBeLessThanOrEqual(1);
    expect(summary.ece).not.toBeNull();
    expect(Object.keys(summary.resolutions).every((r) => r === "confidence" || r === "max_labels")).toBe(true);
    expect(Object.values(summary.resolutions).reduce((a, b) => a + b, 0)).toBe(30);
    // the gold tasks were labeled (10 answers each in rte) and never settled
    const gold = await sys.db.prisma.task.findMany({
      where: { goldLabel: { not: null } },
      select: { status: true, labelsCollected: true },
    });
    expect(gold).toHaveLength(10);
    expect(gold.every((g) => g.status !== "settled" && g.labelsCollected > 0)).toBe(true);
    expect(await sys.db.prisma.task.count({ where: { status: "settled" } })).toBe(before + 30);
    // one label space for the whole dataset's tasks of this customer
    const spaces = await sys.db.prisma.task.groupBy({ by: ["labelSpaceId"], where: { question: "rte: which label?" } });
    expect(spaces).toHaveLength(1);
  });

  it.each([
    ["threshold policy", {}],
    ["confidence policy", { confidenceTarget: 0.9 }],
  ])("%s: items with fewer recorded answers than the threshold settle on them (issue 27)", async (_name, policy) => {
    // items with 1 and 2 answers get max_labels equal to their answer count; one with 2 that disagree
    const dir = mkdtempSync(path.join(os.tmpdir(), "lg-replay-short-"));
    try {
      const workers = ["w1", "w2", "w3", "w4", "w5"];
      const rows = [
        ["one", "w1", "cat"],
        ["two", "w1", "dog"],
        ["two", "w2", "dog"],
        ["split", "w3", "cat"],
        ["split", "w4", "dog"],
        ...workers.map((w) => ["five", w, "cat"]),
      ];
      writeFileSync(path.join(dir, "answers.csv"), `item,worker,label\n${rows.map((r) => r.join(",")).join("\n")}\n`);
      writeFileSync(path.join(dir, "gold.csv"), "item,label\none,cat\ntwo,dog\nsplit,cat\nfive,cat\n");
      const summary = await runReplay({ dataset: dir, baseUrl: sys.baseUrl, adminToken: ADMIN_TOKEN, concurrency: 4, ...policy });
      expect(summary).toMatchObject({ tasks: 4, settled: 4, not_leader: 0 });
      // every answer of the short items was used: 1 + 2 + 2, and the five-answer item settled on agreement
      expect(summary.label_share).toBeGreaterThanOrEqual(5 / rows.length);
      expect(summary.accuracy).toBeGreaterThanOrEqual(0.75); // "split" is a coin toss between two new labelers
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
