/**
 * Outbound URL policy (contract §outbound-calls) for every URL the service calls itself (webhooks, https manifests):
 * http(s) only, no credentials, and, unless `allowPrivate`, only plainly public addresses, literal or resolved,
 * checked before a request and again on the address each connection uses. Address ranges are classified by
 * ipaddr.js (`isPublicAddress` says which classes pass). Redirects are never followed by our clients.
 */
import { lookup } from "node:dns/promises";
import { type ClientRequestArgs, Agent as HttpAgent, type AgentOptions as HttpAgentOptions } from "node:http";
import { Agent as HttpsAgent, type AgentOptions as HttpsAgentOptions, type RequestOptions as HttpsRequestOptions } from "node:https";
import type { Duplex } from "node:stream";
import ipaddr from "ipaddr.js";
import { Agent, buildConnector } from "undici";

export class OutboundUrlError extends Error {
  override name = "OutboundUrlError";
}

/** The NAT64 well-known prefix 64:ff9b::/96 (RFC 6052 §2.1): its last 32 bits are the IPv4 address reached. */
const NAT64_WELL_KNOWN = ipaddr.parseCIDR("64:ff9b::/96");
/** ::/96, IPv4-compatible addresses (deprecated, RFC 4291 §2.5.5.1), which ipaddr.js files under `unicast` */
const IPV4_COMPATIBLE = ipaddr.parseCIDR("::/96");
/** 2000::/3, the only IPv6 space IANA allocates as global unicast */
const GLOBAL_UNICAST = ipaddr.parseCIDR("2000::/3");

/**
 * True when an IP literal is a plainly public address (ipaddr.js range `unicast`), judged on the address a
 * packet really reaches:
 * - IPv4: range `unicast` (not loopback, private, link-local/metadata, CGNAT, multicast, reserved, ...);
 * - IPv4-mapped `::ffff:a.b.c.d` and NAT64 `64:ff9b::a.b.c.d` (RFC 6052 well-known prefix, what DNS64 answers
 *   for every IPv4-only host): the embedded IPv4 address, by the rule above;
 * - any other IPv6 address: range `unicast` and inside 2000::/3. So IPv4-compatible `::a.b.c.d` (`::7f00:1`
 *   is how URL parsing writes `[::127.0.0.1]`), 6to4 2002::/16, Teredo 2001::/32, the NAT64 local-use
 *   64:ff9b:1::/48, SIIT `::ffff:0:a.b.c.d` and every other special range are refused, whatever they embed.
 * Not a valid IP literal: false.
 */
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  const parsed = ipaddr.parse(address);
  if (parsed.kind() === "ipv4") return parsed.range() === "unicast";
  const v6 = parsed as ipaddr.IPv6;
  if (v6.isIPv4MappedAddress()) return v6.toIPv4Address().range() === "unicast";
  if (v6.match(NAT64_WELL_KNOWN)) {
    const parts = v6.parts;
    const [hi, lo] = [parts[6] as number, parts[7] as number];
    return new ipaddr.IPv4([hi >> 8, hi & 0xff, lo >> 8, lo & 0xff]).range() === "unicast";
  }
  if (v6.match(IPV4_COMPATIBLE)) return false;
  return v6.range() === "unicast" && v6.match(GLOBAL_UNICAST);
}

/** A URL's host without the brackets of an IPv6 literal. */
function bareHost(hostname: string): string {
  return hostname.replace(/^\[|\]$/g, "");
}

/** The refusal of a connection to a non-public address (code `EPRIVATEADDRESS`). */
function privateAddressError(host: string, resolved: boolean): OutboundUrlError {
  const what = resolved ? "it resolves to a private or loopback address" : "it is not a public address";
  return Object.assign(new OutboundUrlError(`refused to connect to ${host}: ${what}`), { code: "EPRIVATEADDRESS" });
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
  const host = bareHost(url.hostname);
  if (host === "localhost" || host.endsWith(".localhost")) throw new OutboundUrlError("must not point at a private or loopback address");
  if (ipaddr.isValid(host) && !isPublicAddress(host)) throw new OutboundUrlError("must not point at a private or loopback address");
  return url;
}

/** A resolver of host names to addresses (injectable in tests): `lookup(host, {all: true})` by default. */
export type Resolver = (host: string) => Promise<string[]>;

const systemResolver: Resolver = async (h) => (await lookup(h, { all: true, verbatim: true })).map((a) => a.address);

/**
 * Full check: form, then every address the host resolves to must be public (DNS can change, so this
 * runs at registration and again before every delivery).
 * @throws OutboundUrlError
 */
export async function checkOutboundUrl(raw: string, options: { allowPrivate: boolean; resolve?: Resolver }): Promise<URL> {
  const url = checkUrlForm(raw, options.allowPrivate);
  if (options.allowPrivate) return url;
  const host = bareHost(url.hostname);
  if (ipaddr.isValid(host)) return url;
  const resolve = options.resolve ?? systemResolver;
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

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | { address: string; family: number }[], family?: number) => void;

/**
 * A `lookup` for `net.connect`/`tls.connect` (and so for undici's and Node's agents) that refuses to
 * connect to a non-public address unless `allowPrivate`: the check of contract §outbound-calls made on the
 * address the socket really connects to. A check made before the request (`checkOutboundUrl`) resolves the
 * host once and the client resolves it again when it connects, so a host that answers a public address
 * first and a private one second (DNS rebinding) would reach internal addresses without this.
 * Node calls no `lookup` for an IP literal: `literalGuard` covers those (both agents below use it).
 * The refusal is an `OutboundUrlError` (code `EPRIVATEADDRESS`) raised as the connection's error.
 */
export function guardedLookup(options: { allowPrivate: boolean; resolve?: Resolver }) {
  const resolve = options.resolve ?? systemResolver;
  return (hostname: string, lookupOptions: { all?: boolean; family?: number | string } | number, callback: LookupCallback): void => {
    const all = typeof lookupOptions === "object" && lookupOptions.all === true;
    const host = bareHost(hostname);
    const found = ipaddr.isValid(host) ? Promise.resolve([host]) : resolve(host);
    found.then(
      (addresses) => {
        if (addresses.length === 0) {
          callback(Object.assign(new Error(`host ${host} does not resolve`), { code: "ENOTFOUND" }), all ? [] : "");
          return;
        }
        if (!options.allowPrivate && !addresses.every(isPublicAddress)) {
          callback(privateAddressError(host, true), all ? [] : "");
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
 * The check of a connection's host when it is an IP literal (`net.connect` skips `lookup` for those, so
 * `guardedLookup` never sees them): the refusal, or undefined when the connection may go ahead (a name, a
 * public literal, or `allowPrivate`).
 */
function literalGuard(allowPrivate: boolean): Refusal {
  return (hostname) => {
    const host = bareHost(hostname);
    return !allowPrivate && ipaddr.isValid(host) && !isPublicAddress(host) ? privateAddressError(host, false) : undefined;
  };
}

/**
 * The connection pool of outbound calls: one undici Agent for all receivers (a slow receiver only holds its
 * own sockets), whose every connection is checked: an IP literal before connecting, a name through
 * `guardedLookup`.
 * @param connections sockets per origin
 */
export function outboundDispatcher(options: {
  allowPrivate: boolean;
  resolve?: Resolver;
  connectTimeoutMs: number;
  connections?: number;
}): Agent {
  const connect = buildConnector({
    timeout: options.connectTimeoutMs,
    lookup: guardedLookup({ allowPrivate: options.allowPrivate, resolve: options.resolve }),
  });
  const refusal = literalGuard(options.allowPrivate);
  return new Agent({
    connections: options.connections ?? 64,
    keepAliveTimeout: 10_000,
    connect: (opts, callback) => {
      const err = refusal(opts.hostname);
      if (err) callback(err, null);
      else connect(opts, callback);
    },
  });
}

type Refusal = (hostname: string) => OutboundUrlError | undefined;
type SocketCallback = (err: Error | null, stream: Duplex) => void;

/** `createConnection` of a guarded agent: a refused literal host fails the socket (no connection is made). */
function refuseOrCreate(
  refusal: Refusal,
  host: string | null | undefined,
  callback: SocketCallback | undefined,
  create: () => Duplex | null | undefined,
) {
  const err = refusal(host ?? "");
  if (!err) return create();
  process.nextTick(() => callback?.(err, undefined as unknown as Duplex));
  return undefined;
}

class GuardedHttpAgent extends HttpAgent {
  constructor(
    options: HttpAgentOptions,
    private readonly refusal: Refusal,
  ) {
    super(options);
  }
  override createConnection(options: ClientRequestArgs, callback?: SocketCallback): Duplex | null | undefined {
    return refuseOrCreate(this.refusal, options.host, callback, () => super.createConnection(options, callback));
  }
}

class GuardedHttpsAgent extends HttpsAgent {
  constructor(
    options: HttpsAgentOptions,
    private readonly refusal: Refusal,
  ) {
    super(options);
  }
  override createConnection(options: HttpsRequestOptions, callback?: SocketCallback): Duplex | null | undefined {
    return refuseOrCreate(this.refusal, options.host, callback, () => super.createConnection(options, callback));
  }
}

/**
 * Node `http`/`https` agents (keep-alive) for clients that take them (the AWS SDK's S3 handler), with the
 * same check on every connection as `outboundDispatcher`: an IP literal before connecting, a name through
 * `guardedLookup`.
 */
export function outboundAgents(options: { allowPrivate: boolean; resolve?: Resolver }): { http: HttpAgent; https: HttpsAgent } {
  const lookup = guardedLookup(options);
  const refusal = literalGuard(options.allowPrivate);
  return {
    http: new GuardedHttpAgent({ keepAlive: true, lookup }, refusal),
    https: new GuardedHttpsAgent({ keepAlive: true, lookup }, refusal),
  };
}
