import path from "node:path";
import {
  computeAccuracy,
  groupByItem,
  itemSettings,
  majorityVoteAccuracy,
  parseAnswers,
  parseGold,
  runReplay,
} from "../scripts/replay-lib";
import { ADMIN_TOKEN, type System, startSystem } from "./system";

const CROWD = path.resolve(__dirname, "../../shared/data/crowd");

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
    sys = await startSystem({ isolatedDatabase: true });
  });
  afterAll(() => sys.close());

  it.each([
    ["dog", 25],
    ["web", 20],
  ])("settles every task of the first items of %s and reports the summary line", async (dataset, limit) => {
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
});
