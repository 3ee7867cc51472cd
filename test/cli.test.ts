import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { attachGuide, chunkKey, InputError, parseCsv, parseJsonl, rankingTable } from "@labelgate/cli";
import { LabelgateClient, type SettledResult, type Task } from "@labelgate/sdk";
import { runCli } from "../packages/cli/test/run-cli";
import { serveManifest } from "../services/manifest-worker/test/helpers";
import { ADMIN_TOKEN, eventually, type System, startSystem } from "./system";

/** Runs the CLI as a child process (packages/cli/test/run-cli.ts). */
const cli = runCli;

const jsonLines = (text: string) =>
  text
    .trim()
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => JSON.parse(l) as Record<string, unknown>);

describe("task file parsers", () => {
  it("JSONL: one task per non-blank line, defaults filled, errors name the line", () => {
    const tasks = parseJsonl('{"data_url":"https://a.example/1.jpg"}\n\n{"data_url":"https://a.example/2.jpg","type":"x"}\n', {
      question: "Q?",
      options: ["a", "b"],
      consensus_threshold: 2,
    });
    expect(tasks).toEqual([
      {
        line: 1,
        task: {
          data_url: "https://a.example/1.jpg",
          type: "image_classification",
          label_spec: { question: "Q?", options: ["a", "b"] },
          consensus_threshold: 2,
        },
      },
      {
        line: 3,
        task: {
          data_url: "https://a.example/2.jpg",
          type: "x",
          label_spec: { question: "Q?", options: ["a", "b"] },
          consensus_threshold: 2,
        },
      },
    ]);
    expect(() => parseJsonl('{"data_url":"x"}\nnot json\n', { question: "Q", options: ["a", "b"] })).toThrow(/line 2: not valid JSON/);
    expect(() => parseJsonl('{"data_url":"x"}\n')).toThrow(/line 1: no label_spec/);
  });

  it("--instructions/--examples: given once per label space, never over a task's own guide", () => {
    const tasks = parseJsonl(
      [
        '{"data_url":"https://a.example/1.jpg"}',
        '{"data_url":"https://a.example/2.jpg"}',
        '{"data_url":"https://a.example/3.jpg","label_spec":{"question":"Other?","options":["x","y"],"instructions":"own"}}',
        '{"data_url":"https://a.example/4.jpg","type":"multi_label_classification"}',
      ].join("\n"),
      { question: "Q?", options: ["a", "b"] },
    );
    const examples = [{ data_text: "an a", answer: { label: "a" } }];
    attachGuide(tasks, { instructions: "Pick **a**.", examples });
    expect(tasks.map((t) => t.task.label_spec)).toEqual([
      { question: "Q?", options: ["a", "b"], instructions: "Pick **a**.", examples },
      { question: "Q?", options: ["a", "b"] },
      { question: "Other?", options: ["x", "y"], instructions: "own" },
      { question: "Q?", options: ["a", "b"], instructions: "Pick **a**.", examples },
    ]);
  });

  it("CSV: columns, options split on |, integers, metadata columns; unknown columns and bad cells are errors", () => {
    const csv =
      'data_url,question,options,consensus_threshold,metadata.sku,metadata\nhttps://a.example/1.jpg,"Cat, or dog?",cat|dog,1,s1,"{""n"":1}"\n';
    expect(parseCsv(csv)).toEqual([
      {
        line: 2,
        task: {
          type: "image_classification",
          data_url: "https://a.example/1.jpg",
          label_spec: { question: "Cat, or dog?", options: ["cat", "dog"] },
          consensus_threshold: 1,
          metadata: { sku: "s1", n: 1 },
        },
      },
    ]);
    expect(() => parseCsv("data_url,opitons\nhttps://a.example/1.jpg,a|b\n")).toThrow(/unknown column\(s\) opitons/);
    expect(() => parseCsv("data_url,question,options,max_labels\nx,Q,a|b,many\n")).toThrow(InputError);
    expect(chunkKey("ab".repeat(32), 3)).toBe(`lgcli-${"ab".repeat(16)}-3`);
  });

  it("CSV pre-labels: prelabel, prelabel_model (or --prelabel-model), prelabel_score; --show-prelabel", () => {
    const csv =
      "data_url,question,options,prelabel,prelabel_model,prelabel_score\n" +
      "https://a.example/1.jpg,Cat?,cat|dog,dog,vit-b,0.8\n" +
      "https://a.example/2.jpg,Cat?,cat|dog,cat,,\n" +
      "https://a.example/3.jpg,Cat?,cat|dog,,,\n";
    const tasks = parseCsv(csv, { prelabelModel: "resnet", showPrelabel: true });
    expect(tasks.map((t) => t.task.prelabel)).toEqual([
      { answer: { label: "dog" }, model: "vit-b", score: 0.8 },
      { answer: { label: "cat" }, model: "resnet" },
      undefined,
    ]);
    expect(tasks[0]?.task.label_spec).toEqual({ question: "Cat?", options: ["cat", "dog"], show_prelabel: true });
    // a reserved type's pre-label is its answer body as JSON
    const typed = parseCsv(
      'data_url,type,question,options,prelabel,prelabel_model\nhttps://a.example/1.jpg,multi_label_classification,Which?,a|b,"{""labels"":[""a""]}",m\n',
    );
    expect(typed[0]?.task.prelabel).toEqual({ answer: { labels: ["a"] }, model: "m" });
    expect(() => parseCsv(csv)).toThrow(/line 3: a prelabel needs its model/);
    expect(() => parseCsv("data_url,question,options,prelabel_model\nhttps://a.example/1.jpg,Q,a|b,m\n")).toThrow(/need a prelabel/);
  });

  it("task types: the type's choices column or flag, data_text, gold_answer as JSON; another type's column is an error", () => {
    const csv =
      "data_url,type,question,classes,entity_types,data_text,gold_answer\n" +
      'https://a.example/1.jpg,bounding_box,Cars?,car|person,,,"{""boxes"":[{""label"":""car"",""x"":1,""y"":2,""w"":3,""h"":4}]}"\n' +
      'https://a.example/2.txt,text_span,Drugs?,,DRUG,"  Aspirin helps.",\n';
    expect(parseCsv(csv)).toEqual([
      {
        line: 2,
        task: {
          type: "bounding_box",
          data_url: "https://a.example/1.jpg",
          label_spec: { question: "Cars?", classes: ["car", "person"] },
          gold_answer: { boxes: [{ label: "car", x: 1, y: 2, w: 3, h: 4 }] },
        },
      },
      {
        line: 3,
        task: {
          type: "text_span",
          data_url: "https://a.example/2.txt",
          label_spec: { question: "Drugs?", entity_types: ["DRUG"] },
          data_text: "  Aspirin helps.",
        },
      },
    ]);
    expect(() => parseCsv("data_url,type,question,options\nx,bounding_box,Q,a|b\n")).toThrow(
      /bounding_box task takes classes, not options/,
    );
    expect(() => parseCsv('data_url,type,question,options,gold_answer\nx,multi_label_classification,Q,a|b,"[1]"\n')).toThrow(
      /line 2: gold_answer must be an answer body/,
    );
    // JSONL: defaults by type; --gold-column holds an answer body for a reserved type
    expect(
      parseJsonl('{"data_url":"x","truth":{"labels":["a"]}}\n', {
        type: "multi_label_classification",
        question: "Q",
        options: ["a", "b"],
        goldColumn: "truth",
      }),
    ).toEqual([
      {
        line: 1,
        task: {
          data_url: "x",
          type: "multi_label_classification",
          label_spec: { question: "Q", options: ["a", "b"] },
          gold_answer: { labels: ["a"] },
        },
      },
    ]);
    expect(() => parseJsonl('{"data_url":"x"}\n', { type: "text_span", question: "Q", options: ["a"] })).toThrow(
      /no label_spec \(give question and entity_types columns, or --question and --entity-types; type text_span\)/,
    );
  });
});

describe("pairwise and free_text files, and the ranking table", () => {
  it("CSV: data_url_b, data_text and data_text_b for pairwise_comparison; free_text and pairwise take the question alone", () => {
    const csv =
      "data_url,type,question,data_url_b,data_text,data_text_b\n" +
      "https://a.example/1.jpg,pairwise_comparison,Older?,https://a.example/2.jpg,,\n" +
      "https://p.example/7,pairwise_comparison,Better?,,Paris.,Lyon.\n" +
      "https://a.example/clip.wav,free_text,Transcribe,,,\n";
    expect(parseCsv(csv).map((t) => t.task)).toEqual([
      {
        type: "pairwise_comparison",
        data_url: "https://a.example/1.jpg",
        data_url_b: "https://a.example/2.jpg",
        label_spec: { question: "Older?" },
      },
      {
        type: "pairwise_comparison",
        data_url: "https://p.example/7",
        data_text: "Paris.",
        data_text_b: "Lyon.",
        label_spec: { question: "Better?" },
      },
      { type: "free_text", data_url: "https://a.example/clip.wav", label_spec: { question: "Transcribe" } },
    ]);
    expect(() => parseCsv("data_url,type,question,options\nx,pairwise_comparison,Q,a|b\n")).toThrow(
      /a pairwise_comparison task takes no choices, not options/,
    );
  });

  it("the ranking table: rank, score, 95% interval, comparisons, item; a summary line", () => {
    const table = rankingTable({
      items: [
        { item: "https://a.example/1.jpg", score: 0.8123, rank: 1, ci_low: 0.1, ci_high: 1.52, comparisons: 6 },
        { item: "text:0123456789abcdef", score: -0.8123, rank: 2, ci_low: -1.52, ci_high: -0.1, comparisons: 6 },
      ],
      labels: 6,
      tie_parameter: 0,
    });
    expect(table.split("\n")).toEqual([
      "rank   score  95% interval      comparisons  item",
      "   1   0.812  [0.100, 1.520]              6  https://a.example/1.jpg",
      "   2  -0.812  [-1.520, -0.100]            6  text:0123456789abcdef",
      "2 items, 6 labels, tie parameter 0.000",
      "",
    ]);
  });
});

describe("labelgate CLI against a running gateway", () => {
  let sys: System;
  let env: Record<string, string>;
  let customer: LabelgateClient;
  let labeler: LabelgateClient;
  const dir = mkdtempSync(path.join(tmpdir(), "lg-cli-"));

  beforeAll(async () => {
    sys = await startSystem();
    const admin = new LabelgateClient({ baseUrl: sys.baseUrl, adminToken: ADMIN_TOKEN });
    const registered = await admin.customers.register({ name: "CLI Co", email: `cli-${Date.now()}@example.com` });
    customer = admin.withCredentials({ apiKey: registered.api_key });
    labeler = admin.withCredentials({ labelerKey: (await admin.admin.createLabeler("cli-labeler")).api_key });
    env = { LABELGATE_URL: sys.baseUrl, LABELGATE_API_KEY: registered.api_key };
  });
  afterAll(async () => {
    await sys.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const totalTasks = async () => (await customer.dashboard.tasks({ per_page: 1 })).total;

  it("submits a JSONL file; a rerun creates no duplicates; task get and result read a settled task", async () => {
    const file = path.join(dir, "tasks.jsonl");
    const lines = [1, 2, 3].map((i) =>
      JSON.stringify({
        type: "image_classification",
        data_url: `https://img.example/${i}.jpg`,
        label_spec: { question: "Animal?", options: ["cat", "dog"] },
        metadata: { i },
      }),
    );
    writeFileSync(file, `${lines.join("\n")}\n`);
    const first = await cli(["submit", file, "--threshold", "1"], env);
    expect(first).toMatchObject({ code: 0 });
    expect(first.stderr).toContain("submitted 3 tasks");
    const out = jsonLines(first.stdout);
    expect(out.map((o) => o.line)).toEqual([1, 2, 3]);
    expect(new Set(out.map((o) => o.batch_id)).size).toBe(1);
    expect(await totalTasks()).toBe(3);

    const again = await cli(["submit", file, "--threshold", "1"], env);
    expect(again.code).toBe(0);
    expect(jsonLines(again.stdout)).toEqual(out);
    expect(await totalTasks()).toBe(3);

    const taskId = String(out[1]?.task_id);
    const got = await cli(["task", "get", taskId], env);
    expect(got.code).toBe(0);
    expect(JSON.parse(got.stdout) as Task).toMatchObject({
      task_id: taskId,
      status: "pending",
      consensus_threshold: 1,
      metadata: { i: 2 },
    });
    const pending = await cli(["result", taskId], env);
    expect(JSON.parse(pending.stdout)).toMatchObject({ task_id: taskId, status: "pending", labels_collected: 0 });

    const claim = await labeler.labeling.claim(taskId);
    await labeler.labeling.label(claim?.claim_id as string, "dog");
    const settled = await cli(["result", taskId, "--wait", "--interval", "100", "--timeout", "30"], env);
    expect(settled.code).toBe(0);
    expect(JSON.parse(settled.stdout) as SettledResult).toMatchObject({ task_id: taskId, status: "settled", consensus_label: "dog" });
  });

  it("submits a CSV file in chunks (each with its own idempotency key); a rerun creates no duplicates", async () => {
    const file = path.join(dir, "tasks.csv");
    writeFileSync(
      file,
      "data_url,question,options,consensus_threshold,metadata.sku\n" +
        "https://img.example/a.jpg,Which fruit?,apple|pear,1,A\n" +
        'https://img.example/b.jpg,"Which fruit, really?",apple|pear|plum,2,B\n' +
        "https://img.example/c.jpg,Which fruit?,apple|pear,,C\n",
    );
    const before = await totalTasks();
    const first = await cli(["submit", file, "--batch-size", "2"], env);
    expect(first.code).toBe(0);
    const out = jsonLines(first.stdout);
    expect(out.map((o) => o.line)).toEqual([2, 3, 4]);
    expect(new Set(out.map((o) => o.batch_id)).size).toBe(2);
    expect(await totalTasks()).toBe(before + 3);
    const b = await customer.tasks.get(String(out[1]?.task_id));
    expect(b).toMatchObject({
      label_spec: { question: "Which fruit, really?", options: ["apple", "pear", "plum"] },
      consensus_threshold: 2,
      metadata: { sku: "B" },
    });
    expect(b.batch_id).toBe(out[1]?.batch_id);

    const again = await cli(["submit", file, "--batch-size", "2"], env);
    expect(again.code).toBe(0);
    expect(jsonLines(again.stdout)).toEqual(out);
    expect(await totalTasks()).toBe(before + 3);
  });

  it("quality flags: --confidence-target, --min-labels and --gold-column make confidence-policy and gold tasks; settings get and set", async () => {
    const file = path.join(dir, "quality.csv");
    writeFileSync(
      file,
      "data_url,question,options,truth\n" + "https://img.example/q1.jpg,Ripe?,yes|no,\n" + "https://img.example/q2.jpg,Ripe?,yes|no,yes\n",
    );
    const bad = await cli(["submit", file, "--confidence-target", "1.5"], env);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--confidence-target");
    const badGain = await cli(["submit", file, "--confidence-target", "0.9", "--min-gain", "lots"], env);
    expect(badGain.code).toBe(2);
    expect(badGain.stderr).toContain("--min-gain");
    const ran = await cli(
      ["submit", file, "--confidence-target", "0.9", "--min-labels", "2", "--min-gain", "0.05", "--gold-column", "truth"],
      env,
    );
    expect(ran.code).toBe(0);
    const [regular, gold] = jsonLines(ran.stdout).map((o) => String(o.task_id));
    expect(await customer.tasks.get(regular as string)).toMatchObject({
      confidence_target: 0.9,
      min_labels: 2,
      min_gain: 0.05,
      gold: false,
      gold_label: null,
    });
    expect(await customer.tasks.get(gold as string)).toMatchObject({ gold: true, gold_label: "yes" });

    const set = await cli(
      ["settings", "set", "--confidence-target", "0.95", "--min-gain", "0.02", "--gold-rate", "0.2", "--min-gold-answers", "4"],
      env,
    );
    expect(set.code).toBe(0);
    expect(JSON.parse(set.stdout)).toMatchObject({
      task_defaults: { confidence_target: 0.95, min_gain: 0.02 },
      quality: { gold_rate: 0.2, min_gold_answers: 4 },
    });
    const cleared = await cli(["settings", "set", "--confidence-target", "none", "--min-gain", "none"], env);
    expect(JSON.parse(cleared.stdout)).toMatchObject({
      task_defaults: { confidence_target: null, min_gain: null },
      quality: { gold_rate: 0.2 },
    });
    const outOfBounds = await cli(["settings", "set", "--min-gain", "0.9"], env);
    expect(outOfBounds.code).not.toBe(0);
    expect(outOfBounds.stderr).toContain("min_gain");
    const got = await cli(["settings", "get"], env);
    expect(JSON.parse(got.stdout)).toEqual(JSON.parse(cleared.stdout));
    const refused = await cli(["settings", "set", "--gold-rate", "3"], env);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain("gold");
  });

  it("creates a manifest job, watches it to completion and exports it to a file", async () => {
    const manifest = [1, 2].map((i) => JSON.stringify({ data_url: `https://img.example/m${i}.jpg`, sku: `m${i}` }));
    const server = await serveManifest(`${manifest.join("\n")}\n`);
    try {
      const created = await cli(
        ["job", "create", server.url(), "--question", "Cat or dog?", "--options", "cat|dog", "--threshold", "1"],
        env,
      );
      expect(created.code).toBe(0);
      const jobId = String((JSON.parse(created.stdout) as { job_id: string }).job_id);
      const watching = cli(["job", "watch", jobId, "--interval", "200"], env);

      await eventually(async () => ((await customer.jobs.get(jobId)).status === "labeling" ? true : undefined), 30_000, "ingestion");
      // label every open task (the earlier files' too): the job's two tasks settle
      for (;;) {
        const c = await labeler.labeling.claim();
        if (!c) break;
        await labeler.labeling.label(c.claim_id, (c.label_spec as { options: string[] }).options[0] as string);
      }
      const watched = await watching;
      expect(watched.code).toBe(0);
      expect(JSON.parse(watched.stdout)).toMatchObject({ job_id: jobId, status: "completed", task_count: 2, tasks_settled: 2 });
      expect(watched.stderr).toContain("completed");

      const file = path.join(dir, "out.jsonl");
      const exported = await cli(["job", "export", jobId, "-o", file], env);
      expect(exported.code).toBe(0);
      expect(exported.stderr).toContain(`wrote 2 lines`);
      const lines = jsonLines(readFileSync(file, "utf8"));
      expect(lines.map((l) => l.source)).toEqual(manifest.map((m) => JSON.parse(m)));
      expect(lines.every((l) => l.consensus_label === "cat")).toBe(true);

      const toStdout = await cli(["job", "export", jobId], env);
      expect(jsonLines(toStdout.stdout)).toEqual(lines);
      // --format (contract §exports): Label Studio tasks to a file, hf records to stdout, a format that does not
      // fit (400: the formats that fit), an unknown one (usage error)
      const lsFile = path.join(dir, "out.json");
      expect((await cli(["job", "export", jobId, "--format", "label-studio", "-o", lsFile], env)).code).toBe(0);
      const tasks = JSON.parse(readFileSync(lsFile, "utf8")) as { id: number; annotations: { result: { value: unknown }[] }[] }[];
      expect(tasks.map((t) => [t.id, t.annotations[0]?.result[0]?.value])).toEqual([
        [1, { choices: ["cat"] }],
        [2, { choices: ["cat"] }],
      ]);
      const hf = await cli(["job", "export", jobId, "--format", "hf"], env);
      expect(jsonLines(hf.stdout).map((r) => r.label)).toEqual(["cat", "cat"]);
      const unfit = await cli(["job", "export", jobId, "--format", "coco"], env);
      expect(unfit.code).toBe(1);
      expect(unfit.stderr).toContain("formats that fit: jsonl, label-studio, hf");
      const unknown = await cli(["job", "export", jobId, "--format", "yolo"], env);
      expect(unknown.code).toBe(2);
      expect(unknown.stderr).toContain("Allowed choices are jsonl, label-studio, coco, conll, hf");

      // a batch's export: `batch export`
      const batch = await customer.tasks.createBatch({
        tasks: [
          { type: "image_classification", data_url: "https://img.example/b.jpg", label_spec: { question: "Q?", options: ["a", "b"] } },
        ],
      });
      await customer.tasks.cancel(batch.task_ids[0] as string);
      const batchOut = await cli(["batch", "export", batch.batch_id, "--format", "jsonl"], env);
      expect(batchOut.code).toBe(0);
      expect(jsonLines(batchOut.stdout)).toMatchObject([{ task_id: batch.task_ids[0], consensus_label: null, metadata: null }]);
    } finally {
      await server.close();
    }
  });

  it("task types: task create per type, labeler claim and label with answer bodies, result --consensus", async () => {
    const admin = new LabelgateClient({ baseUrl: sys.baseUrl, adminToken: ADMIN_TOKEN });
    const keys = await Promise.all([0, 1].map(async (i) => (await admin.admin.createLabeler(`cli-typed-${i}`)).api_key));
    const as = (i: number) => ({ ...env, LABELGATE_LABELER_KEY: keys[i] as string });
    /** Claims `taskId` and labels it with `answer` through the CLI, as labeler `i`; the recorded label. */
    const labelWith = async (i: number, taskId: string, answer: string) => {
      const claimed = await cli(["labeler", "claim", taskId], as(i));
      expect(claimed.code).toBe(0);
      const claim = JSON.parse(claimed.stdout) as { claim_id: string; data_text?: string; task_type: string };
      const labeled = await cli(["labeler", "label", claim.claim_id, answer], as(i));
      expect(labeled).toMatchObject({ code: 0, stderr: "" });
      return { claim, recorded: JSON.parse(labeled.stdout) as { label: string; answer?: unknown } };
    };
    const created = (run: { code: number; stdout: string; stderr: string }) => {
      expect(run).toMatchObject({ code: 0, stderr: "" });
      return String((JSON.parse(run.stdout) as { task_id: string }).task_id);
    };

    // bounding_box: --classes; two labelers' boxes fuse into one consensus box
    const usage = await cli(
      ["task", "create", "--type", "bounding_box", "--data-url", "https://img.example/s.jpg", "--question", "Cars?", "--options", "a|b"],
      env,
    );
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain("a bounding_box task takes --classes, not --options");
    const boxTask = created(
      await cli(
        ["task", "create", "--type", "bounding_box", "--data-url", "https://img.example/s.jpg"].concat([
          "--question",
          "Box every car",
          "--classes",
          "car|person",
          "--threshold",
          "2",
        ]),
        env,
      ),
    );
    expect(await customer.tasks.get(boxTask)).toMatchObject({
      task_type: "bounding_box",
      label_spec: { question: "Box every car", classes: ["car", "person"] },
    });
    // a refused answer: exit 1 with the part named, the claim stays open
    const claimed = JSON.parse((await cli(["labeler", "claim", boxTask], as(0))).stdout) as { claim_id: string };
    const refused = await cli(["labeler", "label", claimed.claim_id, '{"boxes":[{"label":"bus","x":0,"y":0,"w":1,"h":1}]}'], as(0));
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/validation failed[\s\S]*boxes\.0\.label: unknown class "bus"/);
    const answerFile = path.join(dir, "answer.json");
    writeFileSync(answerFile, JSON.stringify({ boxes: [{ label: "car", x: 100, y: 50, w: 200, h: 100 }] }));
    expect((await cli(["labeler", "label", claimed.claim_id, "--answer-file", answerFile], as(0))).code).toBe(0);
    await labelWith(1, boxTask, '{"boxes":[{"label":"car","x":104,"y":52,"w":196,"h":98}]}');
    const boxResult = await cli(["result", boxTask, "--wait", "--consensus", "--interval", "100", "--timeout", "30"], env);
    expect(boxResult.code).toBe(0);
    const boxView = JSON.parse(boxResult.stdout) as { consensus: { boxes: { label: string; support: number; confidence: number }[] } };
    expect(boxView).toMatchObject({ task_id: boxTask, confidence: expect.any(Number) });
    expect(boxView.consensus.boxes).toHaveLength(1);
    expect(boxView.consensus.boxes[0]).toMatchObject({ label: "car", support: 2 });

    // text_span: the text from a file (an emoji first: offsets in code points), spans as JSON
    const textFile = path.join(dir, "note.txt");
    const text = "😀 Aspirin helped Maria sleep.";
    writeFileSync(textFile, text);
    const spanTask = created(
      await cli(
        ["task", "create", "--type", "text_span", "--data-url", "https://texts.example/1.txt", "--data-text-file", textFile].concat([
          "--question",
          "Drugs and people",
          "--entity-types",
          "DRUG|PERSON",
          "--threshold",
          "1",
        ]),
        env,
      ),
    );
    const spans = '{"spans":[{"start":17,"end":22,"label":"PERSON"},{"start":2,"end":9,"label":"DRUG"}]}';
    const spanLabel = await labelWith(0, spanTask, spans);
    expect(spanLabel.claim).toMatchObject({ task_type: "text_span", data_text: text });
    expect(spanLabel.recorded.answer).toEqual({
      spans: [
        { start: 2, end: 9, label: "DRUG" },
        { start: 17, end: 22, label: "PERSON" },
      ],
    });
    const spanResult = await cli(["result", spanTask, "--wait", "--interval", "100", "--timeout", "30"], env);
    const spanSettled = JSON.parse(spanResult.stdout) as SettledResult;
    expect(JSON.parse(spanSettled.consensus_label)).toEqual(spanLabel.recorded.answer);
    expect(spanSettled.consensus).toMatchObject({ spans: [{ start: 2, end: 9, label: "DRUG" }, { label: "PERSON" }] });

    // multi_label_classification: a gold task from --gold-answer, and a labeled one
    const gold = created(
      await cli(
        ["task", "create", "--type", "multi_label_classification", "--data-url", "https://img.example/g.jpg"].concat([
          "--question",
          "Which apply?",
          "--options",
          "red|round",
          "--gold-answer",
          '{"labels":["red"]}',
        ]),
        env,
      ),
    );
    expect(await customer.tasks.get(gold)).toMatchObject({ gold: true, gold_answer: { labels: ["red"] } });
    const badGold = await cli(
      ["task", "create", "--type", "multi_label_classification", "--data-url", "https://img.example/g.jpg"].concat([
        "--question",
        "Which apply?",
        "--options",
        "red|round",
        "--gold-answer",
        "red",
      ]),
      env,
    );
    expect(badGold.code).toBe(2);
    expect(badGold.stderr).toContain("--gold-answer is not valid JSON");
    const multi = created(
      await cli(
        ["task", "create", "--type", "multi_label_classification", "--data-url", "https://img.example/m.jpg"].concat([
          "--question",
          "Which apply?",
          "--options",
          "red|round|ripe",
          "--threshold",
          "1",
        ]),
        env,
      ),
    );
    expect((await labelWith(1, multi, '{"labels":["round","red"]}')).recorded.label).toBe('{"labels":["red","round"]}');
    const multiView = JSON.parse((await cli(["result", multi, "--wait", "--consensus", "--interval", "100"], env)).stdout) as {
      consensus_label: string;
      consensus: { labels: string[]; confidence: Record<string, number> };
    };
    expect(multiView.consensus_label).toBe('{"labels":["red","round"]}');
    expect(multiView.consensus.labels).toEqual(["red", "round"]);
    expect(Object.keys(multiView.consensus.confidence).sort()).toEqual(["red", "ripe", "round"]);

    // single choice through the same commands: an option, and the consensus view of a plain label
    const single = created(
      await cli(
        ["task", "create", "--data-url", "https://img.example/c.jpg", "--question", "Animal?", "--options", "cat|dog", "--threshold", "1"],
        env,
      ),
    );
    expect((await labelWith(0, single, "dog")).recorded.label).toBe("dog");
    const singleView = JSON.parse((await cli(["result", single, "--wait", "--consensus", "--interval", "100"], env)).stdout);
    expect(singleView).toMatchObject({ consensus_label: "dog", consensus: { label: "dog" } });

    const noKey = await cli(["labeler", "claim"], env);
    expect(noKey.code).toBe(2);
    expect(noKey.stderr).toContain("no labeler key");
  });

  it("review and audits: settings set --audit-rate, audits list, review accept / reject --answer / reject; bad input exits 2", async () => {
    const set = await cli(["settings", "set", "--audit-rate", "1"], env);
    expect(set.code).toBe(0);
    expect(JSON.parse(set.stdout)).toMatchObject({ quality: { audit_rate: 1 } });
    const admin = new LabelgateClient({ baseUrl: sys.baseUrl, adminToken: ADMIN_TOKEN });
    const reviewers = await Promise.all(
      [0, 1].map(async (i) => admin.withCredentials({ labelerKey: (await admin.admin.createLabeler(`cli-rev-${i}`)).api_key })),
    );
    /** a single-choice task settled on "cat" by one label */
    const settledCat = async (question = "Reviewed by CLI?") => {
      const t = await customer.tasks.create({
        type: "image_classification",
        data_url: "https://img.example/r.jpg",
        label_spec: { question, options: ["cat", "dog", "bird"] },
        consensus_threshold: 1,
      });
      const claim = await (reviewers[0] as LabelgateClient).labeling.claim(t.task_id);
      await (reviewers[0] as LabelgateClient).labeling.label(claim?.claim_id as string, "cat");
      await customer.tasks.waitForResult(t.task_id, { intervalMs: 100, timeoutMs: 30_000 });
      return t.task_id;
    };
    const [accepted, corrected, rejected, multi] = [await settledCat(), await settledCat(), await settledCat(), await settledCat()];
    const open = await cli(["audits", "list"], env);
    expect(open.code).toBe(0);
    const openPage = JSON.parse(open.stdout) as { total: number; items: { task_id: string; status: string; consensus_label: string }[] };
    expect(openPage.items.map((a) => a.task_id)).toEqual([accepted, corrected, rejected, multi]);
    expect(openPage.items[0]).toMatchObject({ status: "open", consensus_label: "cat" });
    const paged = JSON.parse((await cli(["audits", "list", "--per-page", "1", "--page", "2"], env)).stdout) as typeof openPage;
    expect(paged).toMatchObject({ page: 2, per_page: 1, total: 4, items: [{ task_id: corrected }] });

    // usage errors: nothing sent, nothing stored
    for (const [args, message] of [
      [["review", accepted, "maybe"], '<verdict> must be accept or reject, got "maybe"'],
      [["review", accepted, "accept", "--answer", "dog"], "accept takes no --answer"],
      [["review", accepted, "reject", "--answer", "{not json"], "--answer is not valid JSON"],
      [["review", accepted], "missing required argument 'verdict'"],
      [["audits", "list", "--status", "closed"], '--status must be open or done, got "closed"'],
      [["audits", "list", "--per-page", "101"], "--per-page must be at most 100"],
    ] as [string[], string][]) {
      const run = await cli(args, env);
      expect({ args, code: run.code, stdout: run.stdout }).toEqual({ args, code: 2, stdout: "" });
      expect(run.stderr).toContain(message);
    }
    // the gateway's refusals: exit 1 with its message, nothing stored
    const wrongAnswer = await cli(["review", accepted, "reject", "--answer", "fish"], env);
    expect(wrongAnswer.code).toBe(1);
    expect(wrongAnswer.stderr).toMatch(/400 validation failed/);
    const unknown = await cli(["review", "tsk_doesnotexist", "accept"], env);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/404 task not found/);
    expect((await customer.tasks.get(accepted)).reviews).toEqual([]);

    const ok = await cli(["review", accepted, "accept"], env);
    expect(ok).toMatchObject({ code: 0, stderr: "" });
    expect(JSON.parse(ok.stdout)).toMatchObject({
      review: { task_id: accepted, verdict: "accept", answer: null, revised: false },
      result: { task_id: accepted, status: "settled", revision: 1 },
    });
    const fixed = await cli(["review", corrected, "reject", "--answer", "dog"], env);
    expect(fixed.code).toBe(0);
    expect(JSON.parse(fixed.stdout)).toMatchObject({ review: { verdict: "reject", answer: { label: "dog" }, revised: true } });
    const asJson = await cli(["review", multi, "reject", "--answer", '{"label":"bird"}'], env);
    expect(JSON.parse(asJson.stdout)).toMatchObject({ review: { verdict: "reject", answer: { label: "bird" }, revised: true } });
    const reopened = await cli(["review", rejected, "reject"], env);
    expect(JSON.parse(reopened.stdout)).toMatchObject({ review: { answer: null, revised: true }, result: { status: "labeling" } });
    // a task no longer settled: 409
    const again = await cli(["review", rejected, "accept"], env);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/409 task not settled/);

    const done = JSON.parse((await cli(["audits", "list", "--status", "done"], env)).stdout) as typeof openPage;
    expect(done.items.map((a) => a.task_id).sort()).toEqual([accepted, corrected, rejected, multi].sort());
    expect(JSON.parse((await cli(["audits", "list"], env)).stdout)).toMatchObject({ total: 0, items: [] });
    await eventually(
      async () => ((await customer.tasks.get(corrected)).consensus_label === "dog" ? true : undefined),
      20_000,
      "the corrected revision",
    );
  });

  it("pairwise and free_text: task create per type, a submitted pairwise CSV's batch ranking (table and --json), job ranking errors", async () => {
    const created = (run: { code: number; stdout: string; stderr: string }) => {
      expect(run).toMatchObject({ code: 0, stderr: "" });
      return String((JSON.parse(run.stdout) as { task_id: string }).task_id);
    };
    const textTask = created(
      await cli(["task", "create", "--type", "free_text", "--data-url", "https://a.example/c.wav", "--question", "Transcribe"], env),
    );
    expect(await customer.tasks.get(textTask)).toMatchObject({ task_type: "free_text", label_spec: { question: "Transcribe" } });
    const pairTask = created(
      await cli(
        ["task", "create", "--type", "pairwise_comparison", "--data-url", "https://p.example/1", "--question", "Better?"].concat([
          "--data-text",
          "Paris.",
          "--data-text-b",
          "Lyon.",
        ]),
        env,
      ),
    );
    expect(await customer.tasks.get(pairTask)).toMatchObject({ data_text: "Paris.", data_text_b: "Lyon." });
    // an item flag of another type, a pairwise task without item b: exit 2, or the gateway's 400 (exit 1)
    const wrong = await cli(
      [
        "task",
        "create",
        "--data-url",
        "https://a.example/1.jpg",
        "--question",
        "Q",
        "--options",
        "a|b",
        "--data-url-b",
        "https://a.example/2.jpg",
      ],
      env,
    );
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toContain("--data-url-b is for pairwise_comparison tasks");
    const noB = await cli(
      ["task", "create", "--type", "pairwise_comparison", "--data-url", "https://a.example/1.jpg", "--question", "Q"],
      env,
    );
    expect(noB.code).toBe(1);
    expect(noB.stderr).toContain("data_url_b");

    // a CSV of pairs: its batch, labeled so that p1 > p2 > p3, ranked
    const file = path.join(dir, "pairs.csv");
    const img = (n: string) => `https://img.example/${n}.jpg`;
    writeFileSync(file, `data_url,data_url_b\n${img("p1")},${img("p2")}\n${img("p3")},${img("p2")}\n${img("p1")},${img("p3")}\n`);
    const submitted = await cli(["submit", file, "--type", "pairwise_comparison", "--question", "Older?", "--threshold", "1"], env);
    expect(submitted.code).toBe(0);
    const rows = jsonLines(submitted.stdout);
    const batchId = String(rows[0]?.batch_id);
    for (const [k, winner] of ["a", "b", "a"].entries()) {
      const claim = await labeler.labeling.claim(String(rows[k]?.task_id));
      await labeler.labeling.label(claim?.claim_id as string, { winner: winner as "a" | "b" });
    }
    const asJson = await cli(["batch", "ranking", batchId, "--json"], env);
    expect(asJson.code).toBe(0);
    const ranking = JSON.parse(asJson.stdout) as { items: { item: string; rank: number }[]; labels: number };
    expect(ranking.items.map((i) => i.item)).toEqual([img("p1"), img("p2"), img("p3")]);
    expect(ranking.labels).toBe(3);
    const table = await cli(["batch", "ranking", batchId], env);
    expect(table.code).toBe(0);
    const lines = table.stdout.trim().split("\n");
    expect(lines[0]).toMatch(/^rank +score +95% interval +comparisons +item$/);
    expect(lines[1]).toMatch(new RegExp(`^ +1 .* ${img("p1").replace(/[.]/g, "\\.")}$`));
    expect(lines.at(-1)).toBe("3 items, 3 labels, tie parameter 0.000");
    // a job that is not this customer's (or none): 404, exit 1
    const missing = await cli(["job", "ranking", "job_unknown000000000000000"], env);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("job not found");
  });

  it("errors exit non-zero with a clear message on stderr, and nothing is created from an invalid file", async () => {
    const missing = await cli(["task", "get", "tsk_doesnotexist"], env);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/404 task not found/);
    expect(missing.stdout).toBe("");

    const badKey = await cli(["result", "tsk_x"], { ...env, LABELGATE_API_KEY: "sk_sandbox_wrong" });
    expect(badKey.code).toBe(1);
    expect(badKey.stderr).toMatch(/401 invalid API key; check --api-key/);

    const noKey = await cli(["task", "get", "tsk_x"], { LABELGATE_URL: sys.baseUrl });
    expect(noKey.code).toBe(2);
    expect(noKey.stderr).toContain("no API key");

    const before = await totalTasks();
    const bad = path.join(dir, "bad.csv");
    writeFileSync(bad, "data_url,question,options\nhttps://img.example/ok.jpg,Q?,a|b\nftp://nope/x.jpg,Q?,a|b\n");
    const rejected = await cli(["submit", bad], env);
    expect(rejected.code).toBe(1);
    expect(rejected.stderr).toMatch(/line 3: data_url: must be an http\(s\), s3:\/\/ or gs:\/\/ URL/);
    expect(await totalTasks()).toBe(before);

    const usage = await cli(["submit"], env);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain("missing required argument");
  });
});
