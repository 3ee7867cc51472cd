/**
 * Manifest job completion (DESIGN §8): a job in `labeling` becomes `completed` when none of its tasks is
 * open any more (every task settled or canceled). Called in the settlement transaction of a job's task,
 * and by the reconciliation as a safety net. Returns true when this call completed the job.
 */
import type { Prisma } from "./generated/client";

export async function completeJobIfDone(tx: Pick<Prisma.TransactionClient, "$executeRaw">, jobId: string): Promise<boolean> {
  const updated = await tx.$executeRaw`
    UPDATE jobs SET status = 'completed', completed_at = now(), updated_at = now()
    WHERE id = ${jobId} AND status = 'labeling'
      AND NOT EXISTS (SELECT 1 FROM tasks WHERE job_id = ${jobId} AND status IN ('staged', 'pending', 'labeling', 'settling'))`;
  return updated === 1;
}
