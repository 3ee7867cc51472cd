/**
 * @labelgate/metrics: Prometheus metrics (prom-client, one registry per process), the gateway's HTTP
 * instrumentation, job timing of queue handlers, and the ops server (/metrics, /healthz, /readyz) that every
 * labelgate process serves on its own port (METRICS_PORT).
 */
export * from "./http";
export * from "./metrics";
export * from "./ops-server";
