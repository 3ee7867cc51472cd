/**
 * Where the apps keep the signed-in key: sessionStorage only (gone when the tab closes, never shared with
 * other tabs, never localStorage, never a URL or a cookie). contract §web-apps: keys never go into URLs or logs.
 */

/** The sessionStorage entry of each app's key. */
export const KEY_ENTRY = { labeler: "labelgate.labelerKey", customer: "labelgate.customerKey" } as const;
export type KeyKind = keyof typeof KEY_ENTRY;

/** The stored key of `kind`, or null. */
export function storedKey(kind: KeyKind): string | null {
  return sessionStorage.getItem(KEY_ENTRY[kind]);
}

export function storeKey(kind: KeyKind, key: string): void {
  sessionStorage.setItem(KEY_ENTRY[kind], key);
}

export function forgetKey(kind: KeyKind): void {
  sessionStorage.removeItem(KEY_ENTRY[kind]);
}

/**
 * Whether `key` has the shape of a key of `kind` (`lk_…` for labelers, `sk_sandbox_…`/`sk_live_…` for
 * customers, then letters and digits). Only the shape: how long the rest is, is the gateway's to judge, so a
 * well-formed key it never issued (`sk_sandbox_wrong`) is asked about and gets "the gateway does not know this
 * key", not a shape error.
 */
export function looksLikeKey(kind: KeyKind, key: string): boolean {
  return kind === "labeler" ? /^lk_[A-Za-z0-9]+$/.test(key) : /^sk_(sandbox|live)_[A-Za-z0-9]+$/.test(key);
}
