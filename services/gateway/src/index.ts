/** @labelgate/gateway: the HTTP API. */
export { BODY_LIMIT, createApp, type GatewayDeps } from "./app";
export { gatewayConfigFromEnv } from "./config";
export { ApiError, ERRORS } from "./errors";
export { createRateLimitRedis } from "./ratelimit";
