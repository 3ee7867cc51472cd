/** Entry point of a manifest-worker replica (distributed mode: DATABASE_URL and REDIS_URL set). */
import { createRuntime } from "@labelgate/runtime";
import { manifestRole } from "./role";

createRuntime(process.env, [manifestRole], { handleSignals: true }).catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
