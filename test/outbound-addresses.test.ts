/**
 * IPv4 inside IPv6 (issue 28, docs/reliability.md "Hardening"): every URL the service would call itself is
 * refused when its host is an IPv6 form of a refused IPv4 address (IPv4-compatible `::a.b.c.d`, IPv4-mapped,
 * NAT64, 6to4, Teredo) or any address ipaddr.js does not classify as plainly public, through the real gateway
 * (ALLOW_PRIVATE_URLS=false): webhook URLs (400), job manifest and output URLs and S3 endpoints (400), literal
 * or resolved by DNS. Public addresses in each form are still accepted. The same refusal at connect time is in
 * packages/core/test/outbound-url.test.ts.
 */
import { errorBodySchema } from "./routes";
import { registerCustomer, type System, startSystem } from "./system";

/** Hosts (the bracketed part of a URL) of refused addresses. */
const REFUSED_HOSTS = [
  "[::127.0.0.1]",
  "[::7f00:1]",
  "[::169.254.169.254]",
  "[::a9fe:a9fe]",
  "[::10.0.0.1]",
  "[::0.0.0.0]",
  "[::ffff:169.254.169.254]",
  "[::ffff:7f00:1]",
  "[0:0:0:0:0:ffff:127.0.0.1]",
  "[::ffff:192.168.1.1]",
  "[::ffff:0:127.0.0.1]",
  "[64:ff9b::127.0.0.1]",
  "[64:ff9b::a9fe:a9fe]",
  "[64:ff9b::10.0.0.1]",
  "[64:ff9b:1::7f00:1]",
  "[2002:7f00:1::1]",
  "[2002:a9fe:a9fe::1]",
  "[2002:c0a8:101::1]",
  "[2001:0:4136:e378:8000:63bf:80ff:fffe]",
  "[2001:db8::1]",
  "[100::1]",
  "[fec0::1]",
  "[ff02::1]",
  "[4000::1]",
  "0.0.0.0",
  "192.0.2.1",
  "198.18.0.1",
  "240.0.0.1",
  "255.255.255.255",
];

/** Addresses a name may resolve to that must be refused (the forms above, as DNS would answer them). */
const REFUSED_ANSWERS = ["::7f00:1", "::a9fe:a9fe", "::ffff:127.0.0.1", "64:ff9b::7f00:1", "2002:7f00:1::1", "2001::1", "fd00::1"];

/** Public hosts in each form: accepted. */
const PUBLIC_HOSTS = ["93.184.216.34", "[2606:4700:4700::1111]", "[::ffff:93.184.216.34]", "[64:ff9b::5db8:d822]"];

let sys: System;
let key: string;

/** A resolver: `private-<i>.example.test` → REFUSED_ANSWERS[i], `public.example.test` → a public address. */
async function resolve(host: string): Promise<string[]> {
  const m = /^private-(\d+)\.example\.test$/.exec(host);
  if (m) return [REFUSED_ANSWERS[Number(m[1])] as string];
  if (host === "public.example.test") return ["2606:4700:4700::1111"];
  throw Object.assign(new Error(`${host} does not resolve`), { code: "ENOTFOUND" });
}

beforeAll(async () => {
  sys = await startSystem({ workers: false, allowPrivateUrls: false, resolve });
  key = (await registerCustomer(sys)).key;
});
afterAll(async () => {
  await sys?.close();
});

let n = 0;
/** A URL of `host` with a path of its own (webhook URLs are unique per customer). */
const url = (scheme: string, host: string) => `${scheme}://${host}/hook-${++n}`;

function job(over: Record<string, unknown>) {
  return { manifest_url: "https://93.184.216.34/manifest.jsonl", label_spec: { question: "q?", options: ["a", "b"] }, ...over };
}

/** Each request of `cases` whose answer is not a 400 with the spec's error body naming the field. */
async function notRefused(cases: [string, string, Record<string, unknown>, string][]): Promise<string[]> {
  const wrong: string[] = [];
  for (const [what, path, body, field] of cases) {
    const res = await sys.api("POST", path, { token: key, body });
    const ok =
      res.status === 400 &&
      errorBodySchema.safeParse(res.body).success &&
      JSON.stringify(res.body).includes(field) &&
      /private or loopback/.test(JSON.stringify(res.body));
    if (!ok) wrong.push(`${what}: ${res.status} ${JSON.stringify(res.body)}`);
  }
  return wrong;
}

it("refuses webhook URLs whose host is an IPv6 form of a refused IPv4 address or not plainly public (400)", async () => {
  const cases: [string, string, Record<string, unknown>, string][] = [];
  for (const host of REFUSED_HOSTS) {
    for (const scheme of ["http", "https"]) {
      const u = url(scheme, host);
      cases.push([`webhook ${u}`, "/v1/webhooks", { callback_url: u, secret: "ipv6-secret-0123456789" }, "callback_url"]);
    }
  }
  expect(await notRefused(cases)).toEqual([]);
  expect(cases.length).toBe(2 * REFUSED_HOSTS.length);
});

it("refuses manifest URLs, output URLs and S3 endpoints of those hosts (400); no job is created", async () => {
  const cases: [string, string, Record<string, unknown>, string][] = [];
  for (const host of REFUSED_HOSTS) {
    cases.push([`manifest ${host}`, "/v1/jobs", job({ manifest_url: url("https", host) }), "manifest_url"]);
    cases.push([`output ${host}`, "/v1/jobs", job({ output_url: url("https", host) }), "output_url"]);
    cases.push([
      `endpoint ${host}`,
      "/v1/jobs",
      job({
        manifest_url: "s3://bucket/m.jsonl",
        credentials: { access_key_id: "AKIAIPV6", secret_access_key: "ipv6-secret-key", region: "us-east-1", endpoint: url("http", host) },
      }),
      "endpoint",
    ]);
  }
  expect(await notRefused(cases)).toEqual([]);
  const jobs = await sys.api<{ total: number }>("GET", "/v1/jobs", { token: key });
  expect(jobs.status).toBe(200);
  expect(jobs.body.total).toBe(0);
});

it("refuses a webhook host that resolves to such an address (400)", async () => {
  const cases: [string, string, Record<string, unknown>, string][] = REFUSED_ANSWERS.map((answer, i) => {
    const u = url("https", `private-${i}.example.test`);
    return [`webhook resolving to ${answer}`, "/v1/webhooks", { callback_url: u, secret: "ipv6-secret-0123456789" }, "callback_url"];
  });
  expect(await notRefused(cases)).toEqual([]);
});

it("control: public hosts in each form, literal or resolved, are accepted", async () => {
  for (const host of [...PUBLIC_HOSTS, "public.example.test"]) {
    const hook = await sys.api("POST", "/v1/webhooks", {
      token: key,
      body: { callback_url: url("https", host), secret: "ipv6-secret-0123456789" },
    });
    expect({ host, status: hook.status, body: hook.body }).toMatchObject({ host, status: 201 });
    const created = await sys.api("POST", "/v1/jobs", { token: key, body: job({ manifest_url: url("https", host) }) });
    expect({ host, status: created.status }).toEqual({ host, status: 202 });
  }
});
