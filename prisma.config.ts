/**
 * Prisma CLI configuration. Prisma 6.19 runs fully offline with its WASM schema engine (`engine: "js"`)
 * and the pg driver adapter; see docs/decisions/README.md (Platform) for why. The adapter is wrapped so that
 * catalog columns of built-in types it cannot deserialize (`name`, `"char"`, ...) are read as text,
 * the workaround for prisma/orm#27403. This wrapper is only used by the CLI (migrations), never at runtime.
 */

import { pgConfigFromUrl } from "@labelgate/store/url";
import { PrismaPg } from "@prisma/adapter-pg";
import { defineConfig } from "prisma/config";

// Built-in type ids that @prisma/adapter-pg 6.19 maps itself; any other id below 16384 is reported as text.
const SUPPORTED_BUILTIN_OIDS = new Set([
  16, 17, 20, 21, 23, 25, 26, 114, 142, 650, 700, 701, 790, 869, 1042, 1043, 1082, 1083, 1114, 1184, 1266, 1560, 1562, 1700, 2950, 3802,
  143, 199, 651, 791, 1000, 1001, 1002, 1005, 1007, 1009, 1014, 1015, 1016, 1021, 1022, 1028, 1041, 1115, 1182, 1183, 1185, 1231, 1561,
  1563, 2951, 3807,
]);

type Field = { dataTypeID: number };
type Queryable = { performIO: (q: unknown) => Promise<{ fields: Field[] }> };

function patchQueryable(proto: Queryable): void {
  const marker = proto as Queryable & { __labelgatePatched?: boolean };
  if (marker.__labelgatePatched) return;
  const original = proto.performIO;
  proto.performIO = async function performIO(this: unknown, q: unknown) {
    const result = await original.call(this, q);
    for (const field of result.fields) {
      if (field.dataTypeID < 16384 && !SUPPORTED_BUILTIN_OIDS.has(field.dataTypeID)) field.dataTypeID = 25;
    }
    return result;
  };
  marker.__labelgatePatched = true;
}

const url = process.env.DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/labelgate";
// `prisma generate` reads the schema datasource but never connects: give it a value on a fresh clone.
process.env.DATABASE_URL ??= url;

export default defineConfig({
  experimental: { adapter: true },
  engine: "js",
  schema: "prisma/schema.prisma",
  migrations: { path: "prisma/migrations" },
  async adapter() {
    // allowExitOnIdle: idle pool clients would otherwise keep the CLI alive ~10 s after it finished.
    const factory = new PrismaPg({ ...pgConfigFromUrl(url), allowExitOnIdle: true });
    const connect = factory.connect.bind(factory);
    factory.connect = async () => {
      const adapter = await connect();
      // PrismaPgAdapter extends PgQueryable, whose prototype holds performIO (shared with transactions).
      patchQueryable(Object.getPrototypeOf(Object.getPrototypeOf(adapter)) as Queryable);
      return adapter;
    };
    return factory;
  },
});
