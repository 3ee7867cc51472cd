/** Entry point of a consensus-worker replica (distributed mode: DATABASE_URL and REDIS_URL set). */
import { createRuntime } from "@labelgate/runtime";
import { consensusRole } from "./role";

createRuntime(process.env, [consensusRole], { handleSignals: true }).catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
