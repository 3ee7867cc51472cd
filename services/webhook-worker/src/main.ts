/** Entry point of a webhook-worker replica (distributed mode: DATABASE_URL and REDIS_URL set). */
import { createRuntime } from "@labelgate/runtime";
import { webhookRole } from "./role";

createRuntime(process.env, [webhookRole], { handleSignals: true }).catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
