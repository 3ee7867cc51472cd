/**
 * The TypeScript reference the Python client's tests compare against (run by tests/reference.py as
 * `node --import tsx clients/python/tests/ts_reference.ts` from the repository root): reads one JSON
 * request on stdin, writes one JSON answer on stdout.
 * - `{kind: "verdicts", rpcUrl, cases: [{result, confirmations}]}` → `[{ok, reason}]` of the SDK's verifySettlement;
 * - `{kind: "webhooks", cases: [{body, header, secret, toleranceSeconds, nowMs}]}` → `[{ok, reason, event}]` of
 *   constructEvent (`body` is base64 of the raw bytes; `toleranceSeconds` null = Infinity);
 * - `{kind: "canonical", values: [...]}` → `[string]` of canonicalJson.
 */
import { canonicalJson } from "@labelgate/chain";
import { constructEvent, verifySettlement, WebhookVerificationError } from "@labelgate/sdk";

interface VerdictCase {
  result: unknown;
  confirmations?: number;
}
interface WebhookCase {
  body: string;
  header: string | null;
  secret: string;
  toleranceSeconds: number | null;
  nowMs: number;
}
type Request =
  | { kind: "verdicts"; rpcUrl: string; cases: VerdictCase[] }
  | { kind: "webhooks"; cases: WebhookCase[] }
  | { kind: "canonical"; values: unknown[] };

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

async function answer(req: Request): Promise<unknown> {
  switch (req.kind) {
    case "verdicts": {
      const out: { ok: boolean; reason: string | null }[] = [];
      for (const c of req.cases) {
        const v = await verifySettlement(c.result, { rpcUrl: req.rpcUrl, confirmations: c.confirmations });
        out.push(v.ok ? { ok: true, reason: null } : { ok: false, reason: v.reason });
      }
      return out;
    }
    case "webhooks":
      return req.cases.map((c) => {
        try {
          const event = constructEvent(Buffer.from(c.body, "base64"), c.header, c.secret, {
            toleranceSeconds: c.toleranceSeconds ?? Number.POSITIVE_INFINITY,
            now: new Date(c.nowMs),
          });
          return { ok: true, reason: null, event };
        } catch (err) {
          if (err instanceof WebhookVerificationError) return { ok: false, reason: err.reason, event: null };
          return { ok: false, reason: `error: ${err instanceof Error ? err.message : String(err)}`, event: null };
        }
      });
    case "canonical":
      return req.values.map((v) => canonicalJson(v));
  }
}

readStdin()
  .then(async (text) => {
    process.stdout.write(JSON.stringify(await answer(JSON.parse(text) as Request)));
  })
  .catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
