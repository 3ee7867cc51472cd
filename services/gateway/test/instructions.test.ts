/**
 * Instructions of a label space (docs/contract.md, Instructions): given in a label spec (task, batch, manifest
 * job), versioned per space (the latest given is current; the same again makes no new version), carried by
 * claims as `instructions_version`, read by labelers at `GET /v1/labeling/spaces/{id}/instructions`; and the
 * bad inputs (too long, an example that does not fit the type, too many examples): 400 with details, nothing
 * stored. Runs against this run's real Postgres and Redis.
 */
import { MAX_INSTRUCTIONS_CHARS } from "@labelgate/api";
import { createLabeler, OPTIONS, registerCustomer, type System, startSystem, taskBody } from "../../../test/system";

let sys: System;
beforeAll(async () => {
  sys = await startSystem();
});
afterAll(() => sys.close());

interface ClaimBody {
  claim_id: string;
  label_space: string;
  instructions_version: number | null;
  label_spec: Record<string, unknown>;
}

const GUIDE = {
  instructions: "## Animals\n\nAnswer **cat** for any cat, kittens included.",
  examples: [{ data_url: "https://images.example/kitten.jpg", answer: { label: "cat" }, explanation: "A kitten is a cat." }],
};

async function submit(key: string, overrides: Record<string, unknown>) {
  return sys.api<{ task_id: string; error?: string; details?: { path: string; message: string }[] }>("POST", "/v1/tasks", {
    token: key,
    body: taskBody(overrides),
  });
}

async function claimOf(taskId: string): Promise<ClaimBody> {
  const l = await createLabeler(sys);
  const res = await sys.api<ClaimBody>("POST", "/v1/labeling/claims", { token: l.key, body: { task_id: taskId } });
  expect(res.status).toBe(201);
  return res.body;
}

async function instructionsOf(space: string) {
  const l = await createLabeler(sys);
  return sys.api("GET", `/v1/labeling/spaces/${space}/instructions`, { token: l.key });
}

/** Rows of the customer's label spaces' instructions (what a refused request must not have written). */
async function storedVersions(customerId: string): Promise<number> {
  const rows = await sys.db.prisma.$queryRaw<{ n: bigint }[]>`
    SELECT count(*) AS n FROM label_space_instructions i JOIN label_spaces s ON s.id = i.label_space_id WHERE s.customer_id = ${customerId}`;
  return Number(rows[0]?.n ?? 0);
}

describe("instructions of a label space", () => {
  test("a task's instructions become its space's version 1, carried by claims and read by labelers", async () => {
    const c = await registerCustomer(sys);
    const created = await submit(c.key, { label_spec: { question: "What animal is this?", options: OPTIONS, ...GUIDE } });
    expect(created.status).toBe(202);
    const claim = await claimOf(created.body.task_id);
    expect(claim.label_space).toMatch(/^lsp_/);
    expect(claim.instructions_version).toBe(1);
    // the claim's label_spec is the space's identity: no guide in it
    expect(claim.label_spec).toEqual({ question: "What animal is this?", options: OPTIONS });
    const got = await instructionsOf(claim.label_space);
    expect(got.status).toBe(200);
    expect(got.body).toMatchObject({
      label_space: claim.label_space,
      version: 1,
      instructions: GUIDE.instructions,
      examples: GUIDE.examples,
    });
    // the same space as a task without instructions: the guide is not part of the space's identity
    const plain = await submit(c.key, {});
    expect((await claimOf(plain.body.task_id)).label_space).toBe(claim.label_space);
    const task = await sys.api("GET", `/v1/tasks/${created.body.task_id}`, { token: c.key });
    expect(task.body.label_spec).toEqual({ question: "What animal is this?", options: OPTIONS });
  });

  test("the latest given is the current version; the same again or none makes no new one", async () => {
    const c = await registerCustomer(sys);
    const spec = { question: "Which animal?", options: OPTIONS };
    const first = await submit(c.key, { label_spec: { ...spec, ...GUIDE } });
    const again = await submit(c.key, { label_spec: { ...spec, ...GUIDE } });
    const none = await submit(c.key, { label_spec: spec });
    for (const r of [first, again, none]) expect(r.status).toBe(202);
    expect((await claimOf(none.body.task_id)).instructions_version).toBe(1);
    const changed = await submit(c.key, { label_spec: { ...spec, instructions: "Birds too: answer **bird** for any bird." } });
    expect(changed.status).toBe(202);
    // every task of the space, old ones included, now carries version 2
    const claim = await claimOf(first.body.task_id);
    expect(claim.instructions_version).toBe(2);
    const got = await instructionsOf(claim.label_space);
    expect(got.body).toMatchObject({ version: 2, instructions: "Birds too: answer **bird** for any bird.", examples: [] });
    expect(await storedVersions(c.id)).toBe(2);
  });

  test("a batch records the last guide given per space; a manifest job records its spec's guide", async () => {
    const c = await registerCustomer(sys);
    const spec = { question: "Batch animal?", options: OPTIONS };
    const batch = await sys.api<{ task_ids: string[] }>("POST", "/v1/tasks/batch", {
      token: c.key,
      body: {
        tasks: [
          taskBody({ label_spec: { ...spec, instructions: "first" } }),
          taskBody({ label_spec: { ...spec, instructions: "second" } }),
          taskBody({ label_spec: spec }),
        ],
      },
    });
    expect(batch.status).toBe(202);
    const claim = await claimOf(batch.body.task_ids[0] as string);
    expect(claim.instructions_version).toBe(1);
    expect((await instructionsOf(claim.label_space)).body).toMatchObject({ version: 1, instructions: "second" });

    const job = await sys.api("POST", "/v1/jobs", {
      token: c.key,
      body: {
        manifest_url: "https://manifests.example/job.jsonl",
        type: "bounding_box",
        label_spec: {
          question: "Box the cars",
          classes: ["car"],
          instructions: "Box every car, parked ones too.",
          examples: [{ data_url: "https://images.example/street.jpg", answer: { boxes: [{ label: "car", x: 1, y: 2, w: 30, h: 20 }] } }],
        },
      },
    });
    expect(job.status).toBe(202);
    const spaces = await sys.db.prisma.$queryRaw<{ id: string; instructions_version: number; label_spec: unknown }[]>`
      SELECT id, instructions_version, label_spec FROM label_spaces WHERE customer_id = ${c.id} AND task_type = 'bounding_box'`;
    expect(spaces).toHaveLength(1);
    expect(spaces[0]?.instructions_version).toBe(1);
    expect(spaces[0]?.label_spec).toEqual({ question: "Box the cars", classes: ["car"] });
    const stored = await sys.db.prisma.$queryRaw<{ label_spec: unknown }[]>`SELECT label_spec FROM jobs WHERE customer_id = ${c.id}`;
    expect(stored[0]?.label_spec).toEqual({ question: "Box the cars", classes: ["car"] });
  });

  test("a space without instructions: claims carry null, the route answers 404", async () => {
    const c = await registerCustomer(sys);
    const created = await submit(c.key, { label_spec: { question: "No guide here?", options: OPTIONS } });
    const claim = await claimOf(created.body.task_id);
    expect(claim.instructions_version).toBeNull();
    const got = await instructionsOf(claim.label_space);
    expect(got.status).toBe(404);
    expect(got.body).toEqual({ error: "instructions not found" });
    expect((await instructionsOf("lsp_doesnotexist")).status).toBe(404);
    expect((await instructionsOf("not-a-space")).status).toBe(404);
    // a customer key is not a labeler key
    const asCustomer = await sys.api("GET", `/v1/labeling/spaces/${claim.label_space}/instructions`, { token: c.key });
    expect(asCustomer.status).toBe(401);
  });
});

describe("bad instructions: 400 with details, nothing stored", () => {
  const cases: [string, Record<string, unknown>, string][] = [
    [
      "instructions over the limit",
      { label_spec: { question: "Q1?", options: OPTIONS, instructions: "x".repeat(MAX_INSTRUCTIONS_CHARS + 1) } },
      "label_spec.instructions",
    ],
    [
      "an example whose answer is not an option",
      {
        label_spec: {
          question: "Q2?",
          options: OPTIONS,
          examples: [{ data_url: "https://images.example/a.jpg", answer: { label: "horse" } }],
        },
      },
      "label_spec.examples.0.answer.label",
    ],
    [
      "an example whose answer is of another type",
      {
        type: "multi_label_classification",
        label_spec: { question: "Q3?", options: OPTIONS, examples: [{ data_text: "a cat", answer: { label: "cat" } }] },
      },
      "label_spec.examples.0.answer",
    ],
    [
      "an example with both data_url and data_text",
      {
        label_spec: {
          question: "Q4?",
          options: OPTIONS,
          examples: [{ data_url: "https://images.example/a.jpg", data_text: "a cat", answer: { label: "cat" } }],
        },
      },
      "label_spec.examples.0",
    ],
    [
      "more than 20 examples",
      {
        label_spec: {
          question: "Q5?",
          options: OPTIONS,
          examples: Array.from({ length: 21 }, () => ({ data_text: "a", answer: { label: "cat" } })),
        },
      },
      "label_spec.examples",
    ],
    [
      "a span example past the end of its text",
      {
        type: "text_span",
        data_text: "Ada Lovelace",
        label_spec: {
          question: "Q6?",
          entity_types: ["person"],
          examples: [{ data_text: "Ada", answer: { spans: [{ start: 0, end: 12, label: "person" }] } }],
        },
      },
      "label_spec.examples.0.answer.spans.0.end",
    ],
  ];

  test.each(cases)("%s", async (_name, overrides, path) => {
    const c = await registerCustomer(sys);
    const single = await submit(c.key, overrides);
    expect(single.status).toBe(400);
    expect(single.body.error).toBe("validation failed");
    expect(single.body.details?.map((d) => d.path)).toContain(path);
    const batch = await sys.api<{ details?: { path: string }[] }>("POST", "/v1/tasks/batch", {
      token: c.key,
      body: { tasks: [taskBody(), taskBody(overrides)] },
    });
    expect(batch.status).toBe(400);
    expect(batch.body.details?.map((d) => d.path)).toContain(`tasks.1.${path}`);
    const tasks = await sys.db.prisma.task.count({ where: { customerId: c.id } });
    expect(tasks).toBe(0);
    expect(await storedVersions(c.id)).toBe(0);
  });

  test("a manifest job whose example does not fit: 400, no job, no space", async () => {
    const c = await registerCustomer(sys);
    const job = await sys.api<{ details?: { path: string }[] }>("POST", "/v1/jobs", {
      token: c.key,
      body: {
        manifest_url: "https://manifests.example/job.jsonl",
        label_spec: { question: "Q7?", options: OPTIONS, examples: [{ data_text: "x", answer: { label: "unicorn" } }] },
      },
    });
    expect(job.status).toBe(400);
    expect(job.body.details?.map((d) => d.path)).toContain("label_spec.examples.0.answer.label");
    expect(await sys.db.prisma.job.count({ where: { customerId: c.id } })).toBe(0);
    expect(await sys.db.prisma.labelSpace.count({ where: { customerId: c.id } })).toBe(0);
  });
});
