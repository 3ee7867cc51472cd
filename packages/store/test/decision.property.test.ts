/**
 * One decision rule wherever it runs (docs/architecture.md, docs/decisions.md "One store, one runtime"): for random tasks and random
 * label sequences, every label recorded by the store's label transaction (real Postgres) answers what the
 * pure rule `decide` answers for the labels so far: `labels_needed`, whether it decided the task, the claim
 * cap, and the decision itself (label, confidence, posterior, resolution). The settlement then keeps exactly
 * that decision in the task's ledger record. fast-check generates the cases and shrinks a failure.
 */
import type { TaskInput } from "@labelgate/api";
import { issueKey, KEY_PREFIX } from "@labelgate/core";
import fc from "fast-check";
import { testDatabaseUrl } from "../../../test/env";
import { decide, oneCoinModel, type Vote } from "../src/decision";
import { createStore, type Store } from "../src/index";

let store: Store;
let customerId: string;

beforeAll(async () => {
  store = createStore({ url: testDatabaseUrl(), poolMax: 4 });
  const customer = await store.accounts.register({
    name: "property",
    email: `property-${Date.now()}-${Math.random().toString(36).slice(2)}@example.com`,
    labelQuota: 1_000_000,
    key: issueKey(KEY_PREFIX.sandbox),
  });
  customerId = customer.id;
});
afterAll(() => store.close());

const OPTIONS = ["a", "b", "c", "d"];

/** A task's policy and a label sequence within its max_labels (each label an option index). */
const caseArb = fc
  .record({ k: fc.integer({ min: 2, max: 4 }), threshold: fc.integer({ min: 1, max: 4 }), extra: fc.integer({ min: 0, max: 4 }) })
  .chain(({ k, threshold, extra }) =>
    fc.record({
      options: fc.constant(OPTIONS.slice(0, k)),
      threshold: fc.constant(threshold),
      maxLabels: fc.constant(threshold + extra),
      labels: fc.array(fc.integer({ min: 0, max: k - 1 }), { minLength: 1, maxLength: threshold + extra }),
    }),
  );

it("the label transaction answers what the pure rule answers, and the settlement keeps it", async () => {
  await fc.assert(
    fc.asyncProperty(caseArb, async ({ options, threshold, maxLabels, labels }) => {
      const input: TaskInput = {
        type: "image_classification",
        data_url: "https://images.example/p.jpg",
        label_spec: { question: "property?", options },
        consensus_threshold: threshold,
        max_labels: maxLabels,
      };
      const { task } = await store.tasks.create(customerId, input, undefined);
      const policy = { options, consensusThreshold: threshold, maxLabels };
      // fresh labelers (no settled labels): the one-coin model gives each the prior mean
      const model = oneCoinModel(new Map());
      const votes: Vote[] = [];
      let decided = false;
      for (const [i, index] of labels.entries()) {
        const labeler = await store.accounts.createLabeler(`property-${i}`, issueKey(KEY_PREFIX.labeler));
        const claim = await store.labeling.claim(labeler.id, task.id, 600);
        if (decided) {
          // a decided task takes no claim
          expect(claim).toBeUndefined();
          break;
        }
        if (!claim) throw new Error(`no claim on an undecided task (label ${i})`);
        const value = options[index] as string;
        const recorded = await store.labeling.label(labeler.id, claim.claim_id, value);
        votes.push({ labelerId: labeler.id, value });
        const pure = decide(policy, votes, model);
        expect(recorded.decided).toBe(pure.done);
        expect(recorded.label.labels_needed).toBe(pure.labelsNeeded);
        const row = await store.db.prisma.task.findUniqueOrThrow({ where: { id: task.id } });
        expect(row.claimCap).toBe(pure.claimCap);
        expect(row.labelCounts).toEqual(pure.counts);
        if (pure.done) {
          decided = true;
          expect(row).toMatchObject({
            status: "settling",
            consensusLabel: pure.label,
            confidence: pure.confidence,
            resolution: pure.resolution,
            posterior: pure.posterior,
          });
        } else {
          expect(row.status).toBe("labeling");
        }
      }
      if (!decided) return;
      const settlement = await store.settlement.settle(task.id);
      expect(settlement.outcome).toBe("settled");
      const pure = decide(policy, votes, model);
      if (!pure.done) throw new Error("unreachable");
      const entry = await store.db.prisma.ledgerEntry.findUniqueOrThrow({ where: { taskId: task.id } });
      expect(entry.payload).toMatchObject({
        consensus_label: pure.label,
        confidence: pure.confidence,
        resolution: pure.resolution,
        posterior: pure.posterior,
        label_counts: pure.counts,
        labels_collected: votes.length,
      });
    }),
    { numRuns: 60 },
  );
});
