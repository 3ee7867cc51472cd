/**
 * One HTTP attempt of a delivery (contract §events): POST the signed body; success is any 2xx within
 * the timeout (connect, headers and body); redirects are not followed (a 3xx is a failure). The URL's form is
 * checked before sending and every address the connection uses by the dispatcher (core's `outboundDispatcher`),
 * so a callback host that starts resolving to a private address is refused at connect time (DNS rebinding,
 * contract §outbound-calls).
 */
import { checkUrlForm } from "@labelgate/core";
import { type Dispatcher, request } from "undici";

/** Where and how attempts are sent. */
export interface HttpTarget {
  /** the connection pool: core's `outboundDispatcher` (its lookup refuses private addresses) */
  dispatcher: Dispatcher;
  /** ALLOW_PRIVATE_URLS */
  allowPrivateUrls: boolean;
  /** total time allowed for one attempt (connect, headers and body), ms */
  timeoutMs: number;
}

export interface AttemptOutcome {
  success: boolean;
  statusCode: number | null;
  error: string | null;
  latencyMs: number;
  startedAt: Date;
  finishedAt: Date;
}

export async function postEvent(http: HttpTarget, url: string, body: string, headers: Record<string, string>): Promise<AttemptOutcome> {
  const startedAt = new Date();
  const t0 = performance.now();
  let statusCode: number | null = null;
  let error: string | null = null;
  try {
    // the form here; the addresses when the dispatcher connects (core's `outboundDispatcher`: DNS rebinding)
    checkUrlForm(url, http.allowPrivateUrls);
    const res = await request(url, {
      method: "POST",
      body,
      headers,
      dispatcher: http.dispatcher,
      signal: AbortSignal.timeout(http.timeoutMs),
      headersTimeout: http.timeoutMs,
      bodyTimeout: http.timeoutMs,
    });
    statusCode = res.statusCode;
    await res.body.dump({ limit: 64 * 1024 });
    if (statusCode < 200 || statusCode > 299) error = `receiver answered ${statusCode}`;
  } catch (err) {
    const e = err as { name?: string; code?: string; message?: string };
    error =
      e.name === "TimeoutError" || e.name === "AbortError" || e.code === "UND_ERR_HEADERS_TIMEOUT" || e.code === "UND_ERR_BODY_TIMEOUT"
        ? `timed out after ${http.timeoutMs} ms`
        : `${e.code ? `${e.code}: ` : ""}${e.message ?? String(err)}`;
  }
  const finishedAt = new Date();
  return { success: error === null, statusCode, error, latencyMs: Math.round(performance.now() - t0), startedAt, finishedAt };
}
