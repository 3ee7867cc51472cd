/**
 * `@labelgate/sdk/browser`: the SDK for browsers (fetch and web streams only, no Node module): the
 * client of every route as `LabelgateClient` (the export as a web `ReadableStream`: `jobs.exportBody`),
 * the typed errors and the wire types. The Node entry (`@labelgate/sdk`) adds the export helpers of
 * node.ts and the webhook verifier (node:crypto).
 */
export {
  AdminApi,
  AuditsApi,
  BatchesApi,
  BillingApi,
  type ClientOptions,
  type Credentials,
  CustomersApi,
  DashboardApi,
  JobsApi,
  LabelgateClientBase,
  LabelgateClientBase as LabelgateClient,
  LabelingApi,
  SettingsApi,
  TasksApi,
  type WaitOptions,
  WebhooksApi,
} from "./client";
export * from "./shared-exports";
