/** @labelgate/gateway: the HTTP API. */
export { BODY_LIMIT, createApp, type GatewayDeps } from "./app";
export { ApiError, ERRORS } from "./errors";
