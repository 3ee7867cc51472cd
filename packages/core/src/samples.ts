/**
 * The sample items of the repository (data/samples, made by scripts/make-samples.ts; docs/decisions/0221):
 * drawn pictures and short texts a newcomer can label at once. The gateway serves them read-only at
 * `/samples/<name>`; the item fetch of a text task reads a loopback `/samples/` URL from this directory
 * instead of over the network (the outbound URL policy refuses loopback addresses, and such a URL can only
 * name the files the gateway of this very checkout serves).
 */
import { readdirSync } from "node:fs";
import path from "node:path";
import ipaddr from "ipaddr.js";

/** data/samples of this repository. */
export const SAMPLES_DIR = path.resolve(__dirname, "..", "..", "..", "data", "samples");

/** The path under which the gateway serves SAMPLES_DIR. */
export const SAMPLES_PATH = "/samples";

/** The sample files, as paths relative to SAMPLES_DIR with `/` separators (`cat.svg`, `texts/letter.txt`). */
export function sampleNames(dir: string = SAMPLES_DIR): string[] {
  try {
    return readdirSync(dir, { recursive: true, withFileTypes: true })
      .filter((e) => e.isFile())
      .map((e) => path.relative(dir, path.join(e.parentPath, e.name)).split(path.sep).join("/"))
      .sort();
  } catch {
    // a checkout without data/samples has no samples
    return [];
  }
}

/** Whether a URL's host is this machine: `localhost` (and `*.localhost`) or a loopback address. */
function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, "");
  if (host === "localhost" || host.endsWith(".localhost")) return true;
  if (!ipaddr.isValid(host)) return false;
  const parsed = ipaddr.process(host);
  return parsed.range() === "loopback";
}

/**
 * The file a sample URL names: an http(s) URL on a loopback host (any port) whose path is
 * `/samples/<name>` for one of {@link sampleNames} (matched exactly, so no other file can be named), with no
 * credentials, query or fragment. Undefined for any other URL, which is then fetched as usual.
 */
export function sampleFileOf(raw: string, dir: string = SAMPLES_DIR): string | undefined {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return undefined;
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return undefined;
  if (url.username || url.password || url.search || url.hash || !isLoopbackHost(url.hostname)) return undefined;
  const prefix = `${SAMPLES_PATH}/`;
  if (!url.pathname.startsWith(prefix)) return undefined;
  let name: string;
  try {
    name = decodeURIComponent(url.pathname.slice(prefix.length));
  } catch {
    return undefined;
  }
  return sampleNames(dir).includes(name) ? path.join(dir, ...name.split("/")) : undefined;
}
