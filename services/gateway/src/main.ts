/** Entry point of a gateway replica (distributed mode: DATABASE_URL and REDIS_URL set). */
import { createRuntime } from "@labelgate/runtime";
import { gatewayRole } from "./role";

createRuntime(process.env, [gatewayRole], { handleSignals: true }).catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
