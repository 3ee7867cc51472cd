/**
 * The zod request body and query schemas of the route catalog by name (REQUEST_SCHEMAS, QUERY_SCHEMAS).
 * operations.ts names them (as types only) and routes.ts joins them to the operations; a file of their own keeps
 * the two free of an import cycle.
 */
import type { z } from "zod";
import {
  auditsQuery,
  batchBody,
  batchesQuery,
  claimBody,
  customerPatchBody,
  customersQuery,
  deliveriesQuery,
  exportQuery,
  followUpsQuery,
  followUpsRetryBody,
  invoicesQuery,
  jobBody,
  jobsQuery,
  labelBody,
  labelerBody,
  noQuery,
  registrationBody,
  reviewBody,
  settingsPatchBody,
  taskBody,
  tasksQuery,
  upgradeBody,
  usageQuery,
  webhookBody,
  webhookPatchBody,
} from "./requests";

/** Request body schemas by component name (validated with `parse` in the handlers). */
export const REQUEST_SCHEMAS = {
  RegistrationInput: registrationBody,
  TaskInput: taskBody,
  BatchInput: batchBody,
  WebhookInput: webhookBody,
  WebhookPatchInput: webhookPatchBody,
  JobInput: jobBody,
  ClaimInput: claimBody,
  LabelInput: labelBody,
  LabelerInput: labelerBody,
  CustomerPatchInput: customerPatchBody,
  FollowUpsRetryInput: followUpsRetryBody,
  SettingsPatchInput: settingsPatchBody,
  UpgradeInput: upgradeBody,
  ReviewInput: reviewBody,
} as const satisfies Record<string, z.ZodType>;

/** Query schemas by name (validated with `parse` in the handlers). */
export const QUERY_SCHEMAS = {
  auditsQuery,
  batchesQuery,
  customersQuery,
  deliveriesQuery,
  exportQuery,
  followUpsQuery,
  invoicesQuery,
  jobsQuery,
  noQuery,
  tasksQuery,
  usageQuery,
} as const satisfies Record<string, z.ZodObject>;
