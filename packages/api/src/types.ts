/**
 * The wire types of the API, inferred from the schemas (never written by hand). Each is declared next to
 * its schema: request bodies in requests.ts as the schemas' input types (what a client may send: defaults
 * optional), queries and responses as their output types (requests.ts, responses.ts). This module gathers
 * them under the names @labelgate/sdk re-exports, and adds the few derived from them. Field names are
 * snake_case as they travel.
 */
import type { z } from "zod";
import type * as res from "./responses";
import type { Delivery, InvoiceList, LabelerQualityList, PendingResult, SettledResult, Usage } from "./responses";

export type { DeliveryStatus, JobStatus, Resolution, TaskCounts, TaskSort, TaskStatus, Tier } from "./enums";
export type { ErrorDetail } from "./errors";
export type { WebhookEventType } from "./events";
export type {
  AdminCustomersQuery,
  AuditStatus,
  AuditsQuery,
  BatchesQuery,
  BatchRequest,
  DashboardTasksQuery,
  DeliveriesQuery,
  GcsCredentials,
  JobCreateRequest,
  PageQuery,
  RegisterCustomerRequest,
  ReviewRequest,
  ReviewVerdict,
  S3Credentials,
  SettingsPatchRequest,
  TaskRequest,
  WebhookCreateRequest,
  WebhookUpdateRequest,
} from "./requests";
export type {
  Audit,
  AuditPage,
  Batch,
  BatchAccepted,
  BatchPage,
  Claim,
  CustomerProfile,
  DashboardOverview,
  DashboardQuality,
  DashboardUsage,
  Delivery,
  ExportLine,
  FollowUpsRetried,
  Health,
  Instructions,
  InvoiceList,
  Job,
  JobAccepted,
  LabelerCreated,
  LabelerQualityList,
  OpenApiDocument,
  ParkedFollowUps,
  PendingResult,
  Ranking,
  RecordedLabel,
  RedeliveryQueued,
  RegisteredCustomer,
  ResultRevision,
  Review,
  ReviewOutcome,
  Settings,
  SettledResult,
  Task,
  TaskAccepted,
  UpgradedCustomer,
  Usage,
  Webhook,
  WebhookCreated,
} from "./responses";
export type {
  AnswerBody,
  AnyLabelSpec,
  BoundingBoxSpec,
  BoxAnswer,
  FreeTextAnswer,
  FreeTextSpec,
  LabelSpec,
  MultiLabelAnswer,
  MultiLabelSpec,
  PairwiseAnswerBody as PairwiseAnswer,
  PairwiseSpec,
  ReservedTaskType,
  SingleChoiceAnswer,
  SpanAnswer,
  TaskTypeName,
  TextSpanSpec,
} from "./task-types";

/** Every error response: `{error, details?, request_id?}` plus route-specific fields (e.g. `status`). */
export type ErrorBody = z.output<typeof res.ErrorBody> & { [extra: string]: unknown };
/** A page of a list route. */
export type Page<T> = Omit<z.output<typeof res.TaskPage>, "items"> & { items: T[] };
/** `GET /v1/tasks/{id}/result`: 202 while labeling, 200 once settled. */
export type TaskResult = PendingResult | SettledResult;
/** One entry of a delivery's `attempt_log`. */
export type DeliveryAttempt = Delivery["attempt_log"][number];
/** One priced line of `GET /v1/billing/usage`. */
export type LineItem = Usage["line_items"][number];
/** One invoice of `GET /v1/billing/invoices`. */
export type Invoice = InvoiceList["items"][number];
/** One row of `GET /v1/dashboard/labelers`: a labeler in one label space of the customer. */
export type LabelerQuality = LabelerQualityList["items"][number];
