/**
 * Outbound URL policy (DESIGN §9) for every URL the service calls itself (webhooks, https manifests):
 * http(s) only, no credentials, and, unless `allowPrivate`, no loopback, private, link-local (cloud
 * metadata), unique-local, CGNAT, multicast, reserved or unspecified address, literal or resolved.
 * Address ranges are classified by ipaddr.js. Redirects are never followed by our clients.
 */
import { lookup } from "node:dns/promises";
import ipaddr from "ipaddr.js";

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
