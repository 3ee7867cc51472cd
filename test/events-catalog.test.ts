/**
 * The event catalog (@labelgate/api events.ts) is the one place an event type is declared (docs/architecture.md
 * "Adding an event type"): the verifiers' event modules are generated from it (`pnpm gen:events`), and this test
 * renders them again and fails when a checked-in file differs, as test/openapi.test.ts does for docs/api.md.
 * It also checks what the catalog promises: every entry's payload schema turns into a field table, the TS
 * verifier and the Python client list the catalog's events in its order, and the contract's table names each.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { EVENT_CATALOG, WEBHOOK_EVENTS } from "@labelgate/api";
import { eventFieldChecks } from "@labelgate/api/event-clients";
import { EVENT_FIELDS, WEBHOOK_EVENT_TYPES } from "@labelgate/sdk";
import { GENERATED_EVENT_FILES } from "../scripts/gen-events";

const ROOT = path.resolve(__dirname, "..");

describe("the verifiers' event modules", () => {
  it.each(GENERATED_EVENT_FILES.map(([file, render]) => [file, render] as const))("%s is what pnpm gen:events renders", (file, render) => {
    const current = readFileSync(path.join(ROOT, file), "utf8");
    // on a mismatch: run `pnpm gen:events` and commit the result
    expect(current).toBe(render());
  });

  it("list every event of the catalog, in its order, with its fields", () => {
    expect([...WEBHOOK_EVENT_TYPES]).toEqual([...WEBHOOK_EVENTS]);
    expect(EVENT_FIELDS).toEqual(eventFieldChecks());
    const python = readFileSync(path.join(ROOT, "clients/python/labelgate/events.py"), "utf8");
    expect(python).toContain(`EVENT_TYPES: tuple[str, ...] = (${WEBHOOK_EVENTS.map((e) => JSON.stringify(e)).join(", ")})`);
    for (const name of WEBHOOK_EVENTS) {
      expect(Object.keys(EVENT_FIELDS[name])).toEqual(Object.keys(EVENT_CATALOG[name].payload.shape));
    }
  });
});

describe("the catalog", () => {
  it("gives each event a description, an emit site and a subject; the contract's table names each", () => {
    const contract = readFileSync(path.join(ROOT, "docs/contract.md"), "utf8");
    for (const [name, spec] of Object.entries(EVENT_CATALOG)) {
      expect(name).toMatch(/^(task|job)\.[a-z_]+$/);
      expect(spec.subject).toBe(name.split(".")[0]);
      expect(spec.description.length).toBeGreaterThan(10);
      expect(spec.emittedBy).toMatch(/unique/);
      expect(contract).toContain(`| \`${name}\` |`);
    }
  });
});
