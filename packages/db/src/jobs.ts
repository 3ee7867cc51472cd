/**
 * Manifest job completion (DESIGN §8): a job in `labeling` becomes `completed` when none of its tasks is
 * open any more (every task settled or canceled). Called in the settlement transaction of a job's task,
 * and by the reconciliation as a safety net. Returns true when this call completed the job.
 *
 * The job row is locked first: of two transactions closing a job's last two tasks at once (a settlement
 * and a cancel, say), the second waits, then checks with a fresh snapshot that sees the first's commit, so
 * the job always completes. The job row is the last lock any caller takes (task → labelers → ledger → job).
 */
import type { Prisma } from "./generated/client";

export async function completeJobIfDone(tx: Pick<Prisma.TransactionClient, "$executeRaw">, jobId: string): Promise<boolean> {
  await tx.$executeRaw`SELECT 1 FROM jobs WHERE id = ${jobId} FOR UPDATE`;
  const updated = await tx.$executeRaw`
    UPDATE jobs SET status = 'completed', completed_at = now(), updated_at = now()
    WHERE id = ${jobId} AND status = 'labeling'
      AND NOT EXISTS (SELECT 1 FROM tasks WHERE job_id = ${jobId} AND status IN ('staged', 'pending', 'labeling', 'settling'))`;
  return updated === 1;
}
