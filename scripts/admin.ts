/** `pnpm admin <command>`: the operator CLI; see scripts/admin-lib.ts for the commands. */
import { parseArgs } from "node:util";
import { resolveAdminToken } from "@labelgate/replay";
import { AdminCliError, adminRequest, sendAdmin } from "./admin-lib";

async function main(): Promise<void> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      "base-url": { type: "string", default: "http://127.0.0.1:3000" },
      "admin-token": { type: "string" },
      "keep-sandbox-key": { type: "boolean" },
      tier: { type: "string" },
      page: { type: "string" },
      "per-page": { type: "string" },
      limit: { type: "string" },
    },
  });
  const request = adminRequest(positionals, {
    keepSandboxKey: values["keep-sandbox-key"],
    tier: values.tier,
    page: values.page,
    perPage: values["per-page"],
    limit: values.limit,
  });
  const token = resolveAdminToken(values["admin-token"], process.env, process.cwd());
  const body = await sendAdmin(values["base-url"] as string, token, request);
  process.stdout.write(`${JSON.stringify(body, null, 2)}\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(err instanceof AdminCliError ? err.exitCode : 1);
});
