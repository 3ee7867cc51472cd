/**
 * Outbound URL policy (../shared/DESIGN.md §9) for every URL the service calls itself (webhooks, https manifests):
 * http(s) only, no credentials, and, unless `allowPrivate`, no loopback, private, link-local (cloud
 * metadata), unique-local, CGNAT, multicast, reserved or unspecified address, literal or resolved.
 * Address ranges are classified by ipaddr.js. Redirects are never followed by our clients.
 */
import { lookup } from "node:dns/promises";
import ipaddr from "ipaddr.js";
import { Agent } from "undici";

export class OutboundUrlError extends Error {
  override name = "OutboundUrlError";
}

/** True when an IP literal is a public unicast address. */
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  let parsed = ipaddr.parse(address);
  if (parsed.kind() === "ipv6" && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) parsed = (parsed as ipaddr.IPv6).toIPv4Address();
  return parsed.range() === "unicast";
}

/**
 * Checks the URL's form (synchronous part): scheme, credentials, literal addresses and `localhost`.
 * @throws OutboundUrlError with a message fit for a 400 `details` entry.
 */
export function checkUrlForm(raw: string, allowPrivate: boolean): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new OutboundUrlError("not a valid URL");
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") throw new OutboundUrlError("must use http or https");
  if (url.username || url.password) throw new OutboundUrlError("must not contain credentials");
  if (allowPrivate) return url;
  const host = url.hostname.replace(/^\[|\]$/g, "");
  if (host === "localhost" || host.endsWith(".localhost")) throw new OutboundUrlError("must not point at a private or loopback address");
  if (ipaddr.isValid(host) && !isPublicAddress(host)) throw new OutboundUrlError("must not point at a private or loopback address");
  return url;
}

/**
 * Full check: form, then every address the host resolves to must be public (DNS can change, so this
 * runs at registration and again before every delivery).
 * @throws OutboundUrlError
 */
export async function checkOutboundUrl(
  raw: string,
  options: { allowPrivate: boolean; resolve?: (host: string) => Promise<string[]> },
): Promise<URL> {
  const url = checkUrlForm(raw, options.allowPrivate);
  if (options.allowPrivate) return url;
  const host = url.hostname.replace(/^\[|\]$/g, "");
  if (ipaddr.isValid(host)) return url;
  const resolve = options.resolve ?? (async (h: string) => (await lookup(h, { all: true, verbatim: true })).map((a) => a.address));
  let addresses: string[];
  try {
    addresses = await resolve(host);
  } catch {
    throw new OutboundUrlError(`host ${host} does not resolve`);
  }
  if (addresses.length === 0 || !addresses.every(isPublicAddress))
    throw new OutboundUrlError("must not point at a private or loopback address");
  return url;
}

/** A resolver of host names to addresses (injectable in tests): `lookup(host, {all: true})` by default. */
export type Resolver = (host: string) => Promise<string[]>;

const systemResolver: Resolver = async (h) => (await lookup(h, { all: true, verbatim: true })).map((a) => a.address);

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | { address: string; family: number }[], family?: number) => void;

/**
 * A `lookup` for `net.connect`/`tls.connect` (and so for undici's and Node's agents) that refuses to
 * connect to a non-public address unless `allowPrivate`: the check of ../shared/DESIGN.md §9 made on the
 * address the socket really connects to. A check made before the request (`checkOutboundUrl`) resolves the
 * host once and the client resolves it again when it connects, so a host that answers a public address
 * first and a private one second (DNS rebinding) would reach internal addresses without this.
 * The refusal is an `OutboundUrlError` (code `EPRIVATEADDRESS`) raised as the connection's error.
 */
export function guardedLookup(options: { allowPrivate: boolean; resolve?: Resolver }) {
  const resolve = options.resolve ?? systemResolver;
  return (hostname: string, lookupOptions: { all?: boolean; family?: number | string } | number, callback: LookupCallback): void => {
    const all = typeof lookupOptions === "object" && lookupOptions.all === true;
    const host = hostname.replace(/^\[|\]$/g, "");
    const found = ipaddr.isValid(host) ? Promise.resolve([host]) : resolve(host);
    found.then(
      (addresses) => {
        if (addresses.length === 0) {
          callback(Object.assign(new Error(`host ${host} does not resolve`), { code: "ENOTFOUND" }), all ? [] : "");
          return;
        }
        if (!options.allowPrivate && !addresses.every(isPublicAddress)) {
          const err = Object.assign(new OutboundUrlError(`refused to connect to ${host}: it resolves to a private or loopback address`), {
            code: "EPRIVATEADDRESS",
          });
          callback(err, all ? [] : "");
          return;
        }
        const entries = addresses.map((address) => ({ address, family: ipaddr.parse(address).kind() === "ipv6" ? 6 : 4 }));
        if (all) callback(null, entries);
        else callback(null, (entries[0] as { address: string }).address, (entries[0] as { family: number }).family);
      },
      (err: NodeJS.ErrnoException) => callback(err, all ? [] : ""),
    );
  };
}

/**
 * The connection pool of outbound calls: one undici Agent for all receivers (a slow receiver only holds its
 * own sockets), whose every connection resolves its host through `guardedLookup`.
 * @param connections sockets per origin
 */
export function outboundDispatcher(options: {
  allowPrivate: boolean;
  resolve?: Resolver;
  connectTimeoutMs: number;
  connections?: number;
}): Agent {
  return new Agent({
    connections: options.connections ?? 64,
    keepAliveTimeout: 10_000,
    connect: { timeout: options.connectTimeoutMs, lookup: guardedLookup({ allowPrivate: options.allowPrivate, resolve: options.resolve }) },
  });
}
