/**
 * One decision rule wherever it runs (docs/architecture.md, docs/decisions.md "One store, one runtime", "Label
 * quality"): for random tasks of both policies (threshold; confidence with a random target and min_labels),
 * under a label space's prior model or a random fitted Dawid-Skene model stored by a refit, and random label
 * sequences, every label recorded by the store's label transaction (real Postgres) answers what the pure rule
 * `decide` answers for the labels so far: `labels_needed`, whether it decided the task, the claim cap, and the
 * decision itself (label, confidence, posterior, resolution). The settlement then keeps exactly that decision
 * in the task's ledger record. fast-check generates the cases and shrinks a failure.
 */
import type { TaskInput } from "@labelgate/api";
import { issueKey, KEY_PREFIX } from "@labelgate/core";
import {
  type AnyFitInput,
  decide,
  fit,
  LabelTable,
  priorModel,
  resolvePolicy,
  type ScoringModel,
  type LabelVote as Vote,
} from "@labelgate/quality";
import fc from "fast-check";
import { isolatedDatabaseUrl } from "../../../test/system";
import { createStore, dropDatabase, labelSpaceId, policyColumns, type Store } from "../src/index";

type SingleChoiceInput = Extract<AnyFitInput, { kind: "single_choice" }>;

/** The refit input of a single-choice space (spaces.ts `fitInput`). @throws when the space is missing or of a reserved type */
async function singleChoiceInput(spaceId: string): Promise<SingleChoiceInput> {
  const input = await store.spaces.fitInput(spaceId);
  if (input?.kind !== "single_choice") throw new Error(`no single-choice space ${spaceId}`);
  return input;
}

let store: Store;
let customerId: string;
/** the labelers every case draws from (fitted models know them) */
const POOL = 8;
const labelerIds: string[] = [];
let caseNumber = 0;

let databaseUrl: string;

beforeAll(async () => {
  // a database of its own: the other files' systems run refit sweeps over the run's shared database, and a
  // refit of this file's label spaces between a label and the pure rule's check would change the model
  databaseUrl = await isolatedDatabaseUrl();
  store = createStore({ url: databaseUrl, poolMax: 4 });
  const customer = await store.accounts.register({
    name: "property",
    email: `property-${Date.now()}-${Math.random().toString(36).slice(2)}@example.com`,
    labelQuota: 1_000_000,
    key: issueKey(KEY_PREFIX.sandbox),
  });
  customerId = customer.id;
  for (let i = 0; i < POOL; i++) labelerIds.push((await store.accounts.createLabeler(`property-${i}`, issueKey(KEY_PREFIX.labeler))).id);
});
afterAll(async () => {
  await store.close();
  await dropDatabase(databaseUrl);
});

const OPTIONS = ["a", "b", "c", "d"];

/** A task's policy, its space's model (prior, or fitted on random labels) and a label sequence within max_labels. */
const caseArb = fc
  .record({
    k: fc.integer({ min: 2, max: 4 }),
    threshold: fc.integer({ min: 1, max: 4 }),
    extra: fc.integer({ min: 0, max: 4 }),
    confidence: fc.option(
      fc.record({ target: fc.double({ min: 0.5, max: 0.999, noNaN: true }), minLabels: fc.integer({ min: 1, max: 3 }) }),
      { nil: undefined },
    ),
    fitted: fc.boolean(),
    seed: fc.integer(),
  })
  .chain((c) => {
    const maxLabels = Math.max(c.threshold, c.confidence?.minLabels ?? 1) + c.extra;
    return fc.record({
      options: fc.constant(OPTIONS.slice(0, c.k)),
      threshold: fc.constant(c.threshold),
      maxLabels: fc.constant(maxLabels),
      confidence: fc.constant(c.confidence),
      /** random labels of the pool on 30 tasks: the data of the fitted model */
      training: c.fitted
        ? fc.array(
            fc.record({
              task: fc.integer({ min: 0, max: 29 }),
              labeler: fc.integer({ min: 0, max: POOL - 1 }),
              option: fc.integer({ min: 0, max: c.k - 1 }),
            }),
            {
              minLength: 20,
              maxLength: 120,
            },
          )
        : fc.constant(undefined),
      labelers: fc.shuffledSubarray([...Array(POOL).keys()], {
        minLength: Math.min(maxLabels, POOL),
        maxLength: Math.min(maxLabels, POOL),
      }),
      labels: fc.array(fc.integer({ min: 0, max: c.k - 1 }), { minLength: 1, maxLength: Math.min(maxLabels, POOL) }),
    });
  });

/** Fits a model on `training` and stores it as the space's refit; returns the model the label transaction will read. */
async function storeFittedModel(
  spaceId: string,
  options: string[],
  training: { task: number; labeler: number; option: number }[],
): Promise<ScoringModel> {
  const table = new LabelTable(options.length);
  for (const t of training) table.add(`train-${t.task}`, labelerIds[t.labeler] as string, t.option);
  const { model } = fit(table);
  const input = await singleChoiceInput(spaceId);
  if (!input) throw new Error("no space");
  const written = await store.spaces.writeFit(input, {
    kind: "single_choice",
    space: model.space,
    labelers: [...model.labelers.values()],
    calibrationBins: [],
    fitMs: 1,
    outcome: "cold",
    failing: [],
    lift: [],
  });
  expect(written).toBe("written");
  return { space: { ...model.space, version: input.version + 1 }, labelers: model.labelers };
}

it("the label transaction answers what the pure rule answers, and the settlement keeps it", async () => {
  await fc.assert(
    fc.asyncProperty(caseArb, async ({ options, threshold, maxLabels, confidence, training, labelers, labels }) => {
      const question = `property ${caseNumber++}?`;
      const input: TaskInput = {
        type: "image_classification",
        data_url: "https://images.example/p.jpg",
        label_spec: { question, options },
        consensus_threshold: threshold,
        max_labels: maxLabels,
        ...(confidence ? { confidence_target: confidence.target, min_labels: confidence.minLabels } : {}),
      };
      const resolved = resolvePolicy([input]);
      if (!("policy" in resolved)) throw new Error(`the case is not a policy: ${JSON.stringify(resolved.issues)}`);
      const { task } = await store.tasks.create(customerId, { input, policy: policyColumns(resolved.policy) }, undefined);
      const model = training
        ? await storeFittedModel(labelSpaceId(customerId, question, options), options, training)
        : priorModel(options.length);
      const rule = { options, policy: resolved.policy };
      const votes: Vote[] = [];
      let decided = false;
      for (const [i, index] of labels.entries()) {
        const labelerId = labelerIds[labelers[i] as number] as string;
        const claim = await store.labeling.claim(labelerId, task.id, 600);
        if (decided) {
          // a decided task takes no claim
          expect(claim).toBeUndefined();
          break;
        }
        if (!claim) throw new Error(`no claim on an undecided task (label ${i})`);
        const value = options[index] as string;
        const recorded = await store.labeling.label(labelerId, claim.claim_id, { label: value });
        votes.push({ labelerId, value });
        const pure = decide(rule, votes, model);
        expect(recorded.decided).toBe(pure.done);
        expect(recorded.label.labelsNeeded).toBe(pure.labelsNeeded);
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
          expect(confidence ? ["confidence", "max_labels"] : ["consensus", "max_labels"]).toContain(pure.resolution);
        } else {
          expect(row.status).toBe("labeling");
        }
      }
      if (!decided) return;
      const settlement = await store.settlement.settle(task.id);
      expect(settlement.outcome).toBe("settled");
      const pure = decide(rule, votes, model);
      if (!pure.done) throw new Error("unreachable");
      const entry = await store.db.prisma.ledgerEntry.findUniqueOrThrow({ where: { taskId_revision: { taskId: task.id, revision: 1 } } });
      expect(entry.payload).toMatchObject({
        consensus_label: pure.label,
        confidence: pure.confidence,
        resolution: pure.resolution,
        posterior: pure.posterior,
        label_counts: pure.counts,
        labels_collected: votes.length,
      });
    }),
    { numRuns: 80 },
  );
});
