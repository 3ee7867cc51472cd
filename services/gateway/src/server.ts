/**
 * The gateway's HTTP server. Every refusal is the app's, with the spec's error body and an X-Request-Id
 * (docs/contract.md, DESIGN §2): Node's own Host check (a bare 400) is off and the app makes it instead (`createApp`), and a
 * request that Node's HTTP parser refuses is answered by `clientErrorHandler`.
 */
import http from "node:http";
import type { Logger } from "@labelgate/core";
import type express from "express";
import { clientErrorHandler } from "./errors";

/**
 * Serves `app` on `host`:`port` (0 = an ephemeral port). Resolves with the listening server.
 * @throws the listen error (e.g. EADDRINUSE).
 */
export function listenGateway(app: express.Express, port: number, host: string, logger: Logger): Promise<http.Server> {
  const server = http.createServer({ requireHostHeader: false }, app);
  server.on("clientError", clientErrorHandler(logger));
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve(server);
    });
  });
}
