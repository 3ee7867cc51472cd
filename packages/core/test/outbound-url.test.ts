/**
 * The outbound address policy (contract §outbound-calls, src/outbound-url.ts) on the connections themselves:
 * a real local receiver on 127.0.0.1 that outbound clients must never reach when private URLs are not
 * allowed, whether the URL names it by an IPv4 literal, an IPv6 form embedding it, or a name resolving to
 * one. Node calls no `lookup` for an IP literal, so the dispatcher and the agents check literals themselves.
 * The address classification is checked on its own too (IPv4 inside IPv6: issue 28, docs/reliability.md).
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { request } from "undici";
import { checkUrlForm, isPublicAddress, OutboundUrlError, outboundAgents, outboundDispatcher } from "../src/outbound-url";

/** Addresses that must never pass: IPv4 special ranges and every IPv6 form of them, and IPv6 special ranges. */
const REFUSED = [
  "127.0.0.1",
  "0.0.0.0",
  "10.0.0.1",
  "169.254.169.254",
  "100.64.0.1",
  "192.0.2.1",
  "198.18.0.1",
  "240.0.0.1",
  "255.255.255.255",
  // IPv4-compatible ::a.b.c.d (deprecated): how URL parsing writes [::127.0.0.1] and [::169.254.169.254]
  "::7f00:1",
  "::127.0.0.1",
  "::a9fe:a9fe",
  "::169.254.169.254",
  "::a00:1",
  // public IPv4 inside the deprecated form: refused too
  "::5db8:d822",
  // IPv4-mapped
  "::ffff:127.0.0.1",
  "::ffff:7f00:1",
  "0:0:0:0:0:ffff:a9fe:a9fe",
  "::ffff:10.0.0.1",
  // SIIT (RFC 6145)
  "::ffff:0:7f00:1",
  // NAT64 well-known prefix embedding refused IPv4, and the local-use prefix
  "64:ff9b::7f00:1",
  "64:ff9b::169.254.169.254",
  "64:ff9b::a00:1",
  "64:ff9b:1::7f00:1",
  // 6to4 (of loopback, metadata and a public address) and Teredo
  "2002:7f00:1::1",
  "2002:a9fe:a9fe::1",
  "2002:5db8:d822::1",
  "2001:0:4136:e378:8000:63bf:80ff:fffe",
  "2001::1",
  // other IPv6 special ranges, and space IANA has not allocated as global unicast
  "::",
  "::1",
  "fe80::1",
  "fc00::1",
  "fd00::1",
  "fec0::1",
  "ff02::1",
  "100::1",
  "2001:db8::1",
  "2001:10::1",
  "3fff::1",
  "5f00::1",
  "4000::1",
];

/** Plainly public addresses, in each form that reaches one. */
const PUBLIC = [
  "93.184.216.34",
  "8.8.8.8",
  "2606:4700:4700::1111",
  "2a00:1450:4001:80b::200e",
  "::ffff:93.184.216.34",
  "64:ff9b::5db8:d822",
];

describe("isPublicAddress", () => {
  it.each(REFUSED)("refuses %s", (address) => {
    expect(isPublicAddress(address)).toBe(false);
  });
  it.each(PUBLIC)("accepts %s", (address) => {
    expect(isPublicAddress(address)).toBe(true);
  });
  it("refuses what is not an IP literal", () => {
    expect(isPublicAddress("example.com")).toBe(false);
    expect(isPublicAddress("")).toBe(false);
  });
});

describe("checkUrlForm", () => {
  it("refuses every IPv6 literal embedding a refused IPv4 address, as URL parsing normalizes it", () => {
    for (const url of [
      "http://[::127.0.0.1]/",
      "http://[::7f00:1]/",
      "http://[::169.254.169.254]/latest/meta-data/",
      "https://[::ffff:169.254.169.254]/",
      "https://[64:ff9b::127.0.0.1]/",
      "https://[2002:7f00:1::1]/",
      "https://[2001:0:4136:e378:8000:63bf:80ff:fffe]/",
    ]) {
      expect(() => checkUrlForm(url, false)).toThrow(OutboundUrlError);
      expect(checkUrlForm(url, true).href).toBe(new URL(url).href);
    }
  });
});

describe("connections", () => {
  let server: http.Server;
  let port: number;
  let hits = 0;
  beforeAll(async () => {
    server = http.createServer((_req, res) => {
      hits++;
      res.end("ok");
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  });

  /** The error (or "reached") of a GET through the undici dispatcher. */
  async function viaDispatcher(url: string, allowPrivate: boolean, resolve?: (h: string) => Promise<string[]>): Promise<string> {
    const dispatcher = outboundDispatcher({ allowPrivate, resolve, connectTimeoutMs: 2000 });
    try {
      const res = await request(url, { dispatcher });
      await res.body.text();
      return "reached";
    } catch (err) {
      return `${(err as { code?: string }).code}: ${(err as Error).message}`;
    } finally {
      await dispatcher.close();
    }
  }

  /** The error (or "reached") of a GET through the node:http agent of `outboundAgents`. */
  function viaAgent(url: string, allowPrivate: boolean): Promise<string> {
    const agents = outboundAgents({ allowPrivate });
    return new Promise<string>((resolve) => {
      const req = http.get(url, { agent: agents.http }, (res) => {
        res.resume();
        res.on("end", () => resolve("reached"));
      });
      req.on("error", (err) => resolve(`${(err as { code?: string }).code}: ${err.message}`));
    }).finally(() => agents.http.destroy());
  }

  it("the dispatcher refuses IP literals of the receiver, in IPv4 and IPv4-mapped IPv6 form, before connecting", async () => {
    for (const host of ["127.0.0.1", "[::ffff:127.0.0.1]", "[::ffff:7f00:1]"]) {
      const before = hits;
      expect(await viaDispatcher(`http://${host}:${port}/`, false)).toMatch(
        /^EPRIVATEADDRESS: refused to connect to .*not a public address/,
      );
      expect(hits).toBe(before);
    }
  });

  it("the dispatcher refuses a name resolving to an IPv6 form of a private address", async () => {
    for (const address of ["::ffff:127.0.0.1", "::7f00:1", "64:ff9b::7f00:1", "2002:7f00:1::1"]) {
      const before = hits;
      const resolve = async () => [address];
      expect(await viaDispatcher(`http://hooks.example.test:${port}/`, false, resolve)).toMatch(/^EPRIVATEADDRESS: .*private or loopback/);
      expect(hits).toBe(before);
    }
  });

  it("the node:http agents refuse the same literals", async () => {
    for (const host of ["127.0.0.1", "[::ffff:127.0.0.1]"]) {
      const before = hits;
      expect(await viaAgent(`http://${host}:${port}/`, false)).toMatch(/^EPRIVATEADDRESS: /);
      expect(hits).toBe(before);
    }
  });

  it("control: with private URLs allowed, the same URLs reach the receiver", async () => {
    const before = hits;
    expect(await viaDispatcher(`http://127.0.0.1:${port}/`, true)).toBe("reached");
    expect(await viaDispatcher(`http://[::ffff:127.0.0.1]:${port}/`, true)).toBe("reached");
    expect(await viaDispatcher(`http://hooks.example.test:${port}/`, true, async () => ["::ffff:127.0.0.1"])).toBe("reached");
    expect(await viaAgent(`http://[::ffff:127.0.0.1]:${port}/`, true)).toBe("reached");
    expect(hits).toBe(before + 4);
  });
});
