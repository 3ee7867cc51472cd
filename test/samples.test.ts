/**
 * The sample items (data/samples, docs/decisions/0221; issue 40 item 6): served read-only by the gateway at
 * `/samples/`, used by the README's examples, and a text task given only a sample's loopback URL gets its text
 * under the outbound URL policy of `pnpm start` (ALLOW_PRIVATE_URLS off), not canceled.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { SAMPLES_DIR, sampleFileOf, sampleNames } from "@labelgate/core";
import { eventually, registerCustomer, type System, startSystem } from "./system";

describe("sampleFileOf", () => {
  it("names a sample file for a loopback /samples/ URL of any port", () => {
    for (const host of ["127.0.0.1:3000", "localhost:8080", "[::1]:3000", "127.0.0.2"])
      expect(sampleFileOf(`http://${host}/samples/texts/letter.txt`)).toBe(path.join(SAMPLES_DIR, "texts", "letter.txt"));
    expect(sampleFileOf("http://127.0.0.1:3000/samples/cat.svg")).toBe(path.join(SAMPLES_DIR, "cat.svg"));
  });
  it("names nothing else: other hosts, other files, escapes, queries, credentials, other schemes", () => {
    for (const url of [
      "https://cdn.example.com/samples/texts/letter.txt",
      "http://10.0.0.1/samples/texts/letter.txt",
      "http://127.0.0.1:3000/samples/texts/nope.txt",
      "http://127.0.0.1:3000/samples/texts",
      "http://127.0.0.1:3000/samples/..%2F..%2Fpackage.json",
      "http://127.0.0.1:3000/samples/texts%2Fletter.txt/../../../package.json",
      "http://127.0.0.1:3000/samples/texts/letter.txt?x=1",
      "http://user:pw@127.0.0.1:3000/samples/texts/letter.txt",
      "ftp://127.0.0.1/samples/texts/letter.txt",
      "http://127.0.0.1:3000/other/texts/letter.txt",
      "not a url",
    ])
      expect({ url, file: sampleFileOf(url) }).toEqual({ url, file: undefined });
  });
});

describe("the committed samples", () => {
  it("has pictures for classification and boxes and texts for spans", () => {
    expect(sampleNames()).toEqual(expect.arrayContaining(["cat.svg", "dog.svg", "street.svg", "fruit.svg", "texts/letter.txt"]));
    for (const name of sampleNames().filter((n) => n.endsWith(".svg"))) {
      const svg = readFileSync(path.join(SAMPLES_DIR, name), "utf8");
      expect({ name, svg: /^<svg xmlns="http:\/\/www.w3.org\/2000\/svg" width="\d+" height="\d+"/.test(svg) }).toEqual({ name, svg: true });
      expect({ name, script: /<script|on\w+=|href=/i.test(svg) }).toEqual({ name, script: false });
    }
  });
  it("every sample the README names exists, and the README names no unreachable example host", () => {
    const readme = readFileSync(path.resolve(__dirname, "..", "README.md"), "utf8");
    const named = [...readme.matchAll(/\/samples\/([\w./-]+\.(?:svg|txt))/g)].map((m) => m[1]);
    expect(named.length).toBeGreaterThan(0);
    for (const name of named) expect({ name, exists: sampleNames().includes(name as string) }).toEqual({ name, exists: true });
    expect(readme).not.toMatch(/images\.example|texts\.example/);
  });
});

describe("served by the gateway", () => {
  let sys: System;
  beforeAll(async () => {
    // pnpm start's outbound policy: loopback and private addresses refused
    sys = await startSystem({ allowPrivateUrls: false });
  });
  afterAll(async () => {
    await sys?.close();
  });

  it("answers each sample read-only, with a type and a policy that runs nothing", async () => {
    const svg = await fetch(`${sys.baseUrl}/samples/cat.svg`);
    expect(svg.status).toBe(200);
    expect(svg.headers.get("content-type")).toBe("image/svg+xml");
    expect(svg.headers.get("content-security-policy")).toContain("sandbox");
    expect(svg.headers.get("x-content-type-options")).toBe("nosniff");
    expect(await svg.text()).toBe(readFileSync(path.join(SAMPLES_DIR, "cat.svg"), "utf8"));
    const text = await fetch(`${sys.baseUrl}/samples/texts/letter.txt`);
    expect([text.status, text.headers.get("content-type")]).toEqual([200, "text/plain; charset=utf-8"]);
    for (const [method, url] of [
      ["POST", "/samples/cat.svg"],
      ["PUT", "/samples/cat.svg"],
      ["DELETE", "/samples/cat.svg"],
      ["GET", "/samples/"],
      ["GET", "/samples/nope.svg"],
      ["GET", "/samples/..%2f..%2fpackage.json"],
    ] as const) {
      const res = await fetch(`${sys.baseUrl}${url}`, { method });
      expect({ method, url, status: res.status }).toEqual({ method, url, status: 404 });
    }
  });

  it("a text_span task given only a sample's URL gets the sample's text; another loopback URL is still refused", async () => {
    const c = await registerCustomer(sys);
    const spec = { question: "Mark the people and places", entity_types: ["person", "place"] };
    const create = async (data_url: string) => {
      const res = await sys.api<{ task_id: string }>("POST", "/v1/tasks", {
        token: c.key,
        body: { type: "text_span", data_url, label_spec: spec, consensus_threshold: 1 },
      });
      expect(res.status).toBe(202);
      return res.body.task_id;
    };
    const task = async (id: string) =>
      (await sys.api<{ status: string; data_text?: string; item_error?: string }>("GET", `/v1/tasks/${id}`, { token: c.key })).body;
    const sample = await create(`${sys.baseUrl}/samples/texts/letter.txt`);
    const other = await create(`${sys.baseUrl}/v1/health`);
    const fetched = await eventually(async () => {
      const t = await task(sample);
      return t.data_text !== undefined || t.status === "canceled" ? t : undefined;
    });
    expect(fetched).toMatchObject({ status: "pending", data_text: readFileSync(path.join(SAMPLES_DIR, "texts", "letter.txt"), "utf8") });
    const refused = await eventually(async () => {
      const t = await task(other);
      return t.status === "canceled" ? t : undefined;
    });
    expect(refused.item_error).toMatch(/private or loopback/);
  });
});
