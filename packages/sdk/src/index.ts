/**
 * @labelgate/sdk: the typed TypeScript client of the labelgate API (this entry is for Node; browsers
 * import `@labelgate/sdk/browser`).
 * - {@link LabelgateClient}: every route of the gateway, wire types in snake_case (types.ts), and the
 *   export of a job as a Node stream, lines or a file (node.ts).
 * - Typed errors: {@link LabelgateError} and one subclass per status (errors.ts).
 * - Retries on 429 and 503 honoring `Retry-After` (transport.ts).
 * - The webhook verifier of `@labelgate/webhook-verify`, re-exported.
 * - {@link verifySettlement}: checks a settled result against the chain (also `@labelgate/sdk/verify`,
 *   browser-safe without the rest of the SDK).
 */

export { verifySettlementLocal } from "@labelgate/chain";
export * from "@labelgate/webhook-verify";
// The values of each `export *` again by name: Node gives an ES module that imports this CommonJS package only the names it
// finds in the compiled file (cjs-module-lexer), and it finds none behind `export *`. Without these lines
// `import { RateLimitError } from "@labelgate/sdk"` fails in a .mts file (test/readme.test.ts checks them).
export {
  constructEvent,
  DEFAULT_TOLERANCE_SECONDS,
  EVENT_FIELDS,
  signPayload,
  verifyWebhookSignature,
  WEBHOOK_EVENT_TYPES,
  WebhookVerificationError,
} from "@labelgate/webhook-verify";
export * from "./client";
export {
  AdminApi,
  AuditsApi,
  BatchesApi,
  BillingApi,
  Context,
  CustomersApi,
  DashboardApi,
  JobsApi,
  LabelgateClientBase,
  LabelingApi,
  Namespace,
  SettingsApi,
  TasksApi,
  WebhooksApi,
} from "./client";
export {
  AuthenticationError,
  ConflictError,
  ConnectionError,
  errorForStatus,
  ForbiddenError,
  InternalServerError,
  LabelgateError,
  MethodNotAllowedError,
  NotFoundError,
  PayloadTooLargeError,
  RateLimitError,
  ResponseError,
  ServiceUnavailableError,
  UnprocessableError,
  UnsupportedMediaTypeError,
  ValidationError,
} from "./errors";
export { type ExportFileResult, LabelgateClient, NodeBatchesApi, NodeJobsApi } from "./node";
export * from "./shared-exports";
export {
  ANSWER_SHAPES,
  answerShapeOf,
  choicesFieldOf,
  choicesOf,
  codePointLength,
  isBoxConsensus,
  isFreeTextConsensus,
  isMultiLabelConsensus,
  isPairwiseConsensus,
  isReservedTaskType,
  isSpanConsensus,
  itemFieldsOf,
  MAX_ANSWER_BYTES,
  MAX_CHOICES,
  MAX_PARTS,
  MAX_TEXT_CODE_POINTS,
  RESERVED_TASK_TYPES,
  TASK_TYPE_NAMES,
  taskTypeNameOf,
} from "./task-types";
export { newIdempotencyKey, parseRetryAfter } from "./transport";
export type {
  EvmSettlement,
  LocalSettlement,
  Settlement,
  SettlementFailure,
  SettlementFailureReason,
  SettlementVerification,
  SettlementVerificationFailure,
  SettlementVerified,
  VerifySettlementOptions,
} from "./verify-settlement";

/**
 * {@link import("./verify-settlement").verifySettlement}, loaded on the first call: it needs viem, which
 * takes about half a second to load, and most users of the client never verify a settlement. Browsers
 * import `@labelgate/sdk/verify` instead (this index is Node-only).
 */
export function verifySettlement(
  ...args: Parameters<typeof import("./verify-settlement").verifySettlement>
): ReturnType<typeof import("./verify-settlement").verifySettlement> {
  const verify = require("./verify-settlement") as typeof import("./verify-settlement");
  return verify.verifySettlement(...args);
}
