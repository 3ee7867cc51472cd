/**
 * How the gateway serves the built web apps (services/gateway/src/web.ts), over HTTP against the real app
 * (startSystem, no workers): the CSP and security headers, caching of hashed assets and of index.html, the
 * single-page fallback of deep links, the redirect to the trailing slash, the API's JSON 404 for missing
 * files and other methods, the 503 page when there is no build, and the chain's RPC origin in connect-src
 * with the console's config.json.
 */
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { webCspDirectives, webRouter } from "@labelgate/gateway/web";
import { WEB_DIST_DIR } from "@labelgate/web";
import express from "express";
import { type System, startSystem } from "../system";

let sys: System;

beforeAll(async () => {
  sys = await startSystem({ workers: false });
});

afterAll(() => sys?.close());

const EXPECTED_CSP =
  "default-src 'none';script-src 'self';style-src 'self';img-src 'self' https: http:;media-src 'self' https: http:;font-src 'self';connect-src 'self';" +
  "manifest-src 'self';base-uri 'none';form-action 'self';frame-ancestors 'none';object-src 'none'";

describe("the gateway serves the web apps", () => {
  it.each(["label", "console"])("/%s/: index.html with the CSP, no-cache, and its hashed assets cached for a year", async (app) => {
    const res = await fetch(`${sys.baseUrl}/${app}/`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/html/);
    expect(res.headers.get("content-security-policy")).toBe(EXPECTED_CSP);
    expect(res.headers.get("cache-control")).toBe("no-cache");
    expect(res.headers.get("referrer-policy")).toBe("no-referrer");
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
    expect(res.headers.get("x-frame-options")).toBe("SAMEORIGIN");
    expect(res.headers.get("x-request-id")).toBeTruthy();
    const html = await res.text();
    // every script is a file of this app: no inline script
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    const assets = [...html.matchAll(/(?:src|href)="(\/[a-z]+\/assets\/[^"]+)"/g)].map((m) => m[1] as string);
    expect(assets.length).toBeGreaterThanOrEqual(1);
    for (const asset of assets) {
      expect(asset.startsWith(`/${app}/assets/`)).toBe(true);
      const a = await fetch(sys.baseUrl + asset);
      expect(a.status).toBe(200);
      expect(a.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
      expect(a.headers.get("content-security-policy")).toBe(EXPECTED_CSP);
      await a.arrayBuffer();
    }
    expect(readdirSync(path.join(WEB_DIST_DIR, app, "assets")).length).toBeGreaterThanOrEqual(2);
  });

  it("answers deep links with the app's index.html, and missing files and other methods with the API's 404", async () => {
    const deep = await fetch(`${sys.baseUrl}/console/tasks/tsk_0000000000000000000000?page=2`);
    expect(deep.status).toBe(200);
    expect(await deep.text()).toContain('<div id="root">');
    const missing = await fetch(`${sys.baseUrl}/console/assets/nope-123.js`);
    expect(missing.status).toBe(404);
    expect(await missing.json()).toEqual({ error: "not found" });
    const dotted = await fetch(`${sys.baseUrl}/label/..%2f..%2fpackage.json`);
    expect(dotted.status).toBe(404);
    const post = await fetch(`${sys.baseUrl}/label/`, { method: "POST" });
    expect(post.status).toBe(404);
    const bare = await fetch(`${sys.baseUrl}/label`, { redirect: "manual" });
    expect(bare.status).toBe(301);
    expect(bare.headers.get("location")).toBe("/label/");
  });

  it("answers 503 with a page that says how to build when there is no build", async () => {
    const app = express();
    const empty = mkdtempSync(path.join(tmpdir(), "lg-no-web-"));
    app.use(webRouter({ distDir: empty }));
    const server: Server = await new Promise((resolve) => {
      const s = app.listen(0, "127.0.0.1", () => resolve(s));
    });
    try {
      const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/console/`);
      expect(res.status).toBe(503);
      expect(res.headers.get("retry-after")).toBe("30");
      expect(await res.text()).toContain("pnpm --filter @labelgate/web build");
    } finally {
      await new Promise<void>((r) => server.close(() => r()));
      rmSync(empty, { recursive: true, force: true });
    }
  });

  it("without EVM_RPC_URL: /console/config.json says there is no chain, connect-src is the gateway only", async () => {
    const res = await fetch(`${sys.baseUrl}/console/config.json`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-security-policy")).toBe(EXPECTED_CSP);
    expect(await res.json()).toEqual({ evm_rpc_url: null });
    expect((await fetch(`${sys.baseUrl}/label/config.json`)).status).toBe(404);
  });

  it("with EVM_RPC_URL: its origin joins connect-src of both apps and the console reads the URL", async () => {
    const rpc = "http://127.0.0.1:8545/rpc/path";
    const app = express();
    app.use(webRouter({ distDir: WEB_DIST_DIR, evmRpcUrl: rpc }));
    const server: Server = await new Promise((resolve) => {
      const s = app.listen(0, "127.0.0.1", () => resolve(s));
    });
    try {
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const withRpc = EXPECTED_CSP.replace("connect-src 'self'", "connect-src 'self' http://127.0.0.1:8545");
      for (const p of ["/console/", "/label/", "/console/config.json"]) {
        const res = await fetch(base + p);
        expect(res.headers.get("content-security-policy")).toBe(withRpc);
        await res.arrayBuffer();
      }
      expect(await (await fetch(`${base}/console/config.json`)).json()).toEqual({ evm_rpc_url: rpc });
    } finally {
      await new Promise<void>((r) => server.close(() => r()));
    }
  });

  it("adds the origins it is given to connect-src only", () => {
    expect(webCspDirectives(["http://127.0.0.1:8545"]).connectSrc).toEqual(["'self'", "http://127.0.0.1:8545"]);
    expect(webCspDirectives().scriptSrc).toEqual(["'self'"]);
  });
});
