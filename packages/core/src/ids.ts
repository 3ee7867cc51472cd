import { randomFillSync } from "node:crypto";

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/** CSPRNG bytes drawn 4 KB at a time (as Node's own randomUUID caches its entropy): one call per ~150 ids. */
const POOL_SIZE = 4096;
const pool = Buffer.alloc(POOL_SIZE);
let poolOffset = POOL_SIZE;

function nextRandomByte(): number {
  if (poolOffset === POOL_SIZE) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  return pool[poolOffset++] as number;
}

/**
 * `length` characters of base62 from the OS CSPRNG, without modulo bias (rejection sampling:
 * bytes >= 248 are discarded, 248 = 4 * 62). Bytes come from a pool refilled 4 KB at a time
 * (a `randomBytes` call per id was 10% of a manifest worker's CPU).
 */
export function randomBase62(length: number): string {
  let out = "";
  while (out.length < length) {
    const byte = nextRandomByte();
    if (byte < 248) out += BASE62[byte % 62];
  }
  return out;
}

/** Id prefixes of every resource (contract §resources, §labelers, §accounts, §events). */
export const ID_PREFIX = {
  customer: "cust_",
  apiKey: "key_",
  task: "tsk_",
  batch: "bat_",
  labeler: "lbl_",
  claim: "clm_",
  label: "lab_",
  event: "evt_",
  webhook: "whk_",
  job: "job_",
  invoice: "inv_",
  delivery: "dlv_",
  attempt: "att_",
  review: "rvw_",
} as const;

export type IdKind = keyof typeof ID_PREFIX;

/** A new resource id: prefix + 22 base62 characters (~131 bits). */
export function newId(kind: IdKind): string {
  return ID_PREFIX[kind] + randomBase62(22);
}
