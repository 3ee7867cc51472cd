/** @labelgate/gateway: the HTTP API. */
export { BODY_LIMIT, createApp, type GatewayDeps } from "./app";
export { gatewayConfigFromEnv } from "./config";
export { ApiError, ERRORS } from "./errors";
export { type ClaimResult, claimTask, type RecordedLabel, recordLabel } from "./labeling";
export { createRateLimitRedis } from "./ratelimit";
export { listenGateway } from "./server";
