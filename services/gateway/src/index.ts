/** @labelgate/gateway: the HTTP API. `gatewayRole` is its module for the runtime (@labelgate/runtime). */
export { ApiError, ERRORS } from "@labelgate/api";
export { BODY_LIMIT, createApp, type GatewayConfig, type GatewayDeps } from "./app";
export { gatewayConfigFromEnv } from "./config";
export { createRateLimitRedis } from "./ratelimit";
export { gatewayRole } from "./role";
export { listenGateway } from "./server";
