/**
 * The gateway's HTTP server. Every refusal is the app's, with the spec's error body and an X-Request-Id
 * (contract §wire): Node's own Host check (a bare 400) is off and the app makes it instead (`createApp`), and a
 * request that Node's HTTP parser refuses is answered by `clientErrorHandler`.
 */
import http from "node:http";
import type { Logger } from "@labelgate/core";
import type express from "express";
import { clientErrorHandler } from "./errors";

/** The idle time clients are told they may keep a connection (`Keep-Alive: timeout=5`, Node's default), ms. */
export const KEEP_ALIVE_HINT_MS = 5000;

/**
 * Serves `app` on `host`:`port` (0 = an ephemeral port). Resolves with the listening server.
 *
 * Kept-alive connections (decision 0200): clients are told `Keep-Alive: timeout=5` and retire an idle
 * connection a little before that (undici: 1-2 s before); the server closes one only after
 * `keepAliveTimeoutMs` (HTTP_KEEP_ALIVE_TIMEOUT_MS, default 65 s) idle. With Node's defaults both were 5 s
 * (6 s with Node's own 1 s allowance): a client whose event loop stalled past its retirement timer (a
 * loaded machine) sent its next request on a connection the server had just closed, and met a reset
 * (issue 40 item 11, test/keepalive.test.ts). Node 20 and 22 have no setting for the advertised value
 * apart from the idle time (Node 24's `keepAliveTimeoutBuffer` is one), so each response's advertised
 * value is set on Node's `_keepAliveTimeout` field, the one its header is written from.
 * @throws the listen error (e.g. EADDRINUSE).
 */
export function listenGateway(
  app: express.Express,
  port: number,
  host: string,
  logger: Logger,
  keepAliveTimeoutMs = 65_000,
): Promise<http.Server> {
  const server = http.createServer({ requireHostHeader: false, keepAliveTimeout: keepAliveTimeoutMs }, (req, res) => {
    (res as http.ServerResponse & { _keepAliveTimeout: number })._keepAliveTimeout = KEEP_ALIVE_HINT_MS;
    app(req, res);
  });
  server.on("clientError", clientErrorHandler(logger));
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve(server);
    });
  });
}
