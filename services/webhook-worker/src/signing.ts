/**
 * The signature of a delivery (contract §events): `X-SVC-Signature: sha256=<hex>`, the lowercase hexadecimal
 * HMAC-SHA256 of the raw JSON body keyed with the webhook's secret. Receivers check it with
 * @labelgate/webhook-verify. Also the cache of opened secrets: an AES-GCM open per attempt costs more than
 * the HMAC.
 */
import { createHmac } from "node:crypto";
import type { SecretBox } from "@labelgate/core";

/** `sha256=<lowercase hex>` of the raw body keyed with the webhook secret. */
export function signatureHeader(rawBody: string, secret: string): string {
  return `sha256=${createHmac("sha256", secret).update(rawBody, "utf8").digest("hex")}`;
}

const openedSecrets = new WeakMap<SecretBox, Map<string, string>>();

/**
 * The webhook's secret, opened once per sealed value (at most 1,000 kept per box): an AES-GCM open per
 * attempt costs more than the HMAC. A rotated secret is a new sealed value, so it is never served stale.
 */
export function openSecret(box: SecretBox, sealed: string, webhookId: string): string {
  let cache = openedSecrets.get(box);
  if (!cache) {
    cache = new Map();
    openedSecrets.set(box, cache);
  }
  const key = `${webhookId} ${sealed}`;
  let secret = cache.get(key);
  if (secret === undefined) {
    secret = box.open(sealed, webhookId);
    if (cache.size >= 1000) cache.clear();
    cache.set(key, secret);
  }
  return secret;
}
