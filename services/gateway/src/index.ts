/** @labelgate/gateway: the HTTP API. */

export { ApiError, ERRORS } from "@labelgate/api";
export { BODY_LIMIT, createApp, type GatewayDeps } from "./app";
export { gatewayConfigFromEnv } from "./config";
export { type ClaimResult, claimTask, type RecordedLabel, recordLabel } from "./labeling";
export { createRateLimitRedis } from "./ratelimit";
export { listenGateway } from "./server";
