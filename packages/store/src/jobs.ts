/**
 * Manifest job completion (DESIGN §8): a job in `labeling` becomes `completed` when none of its tasks is
 * open any more (every task settled or canceled). Called in the settlement transaction of a job's task,
 * and by the reconciliation as a safety net. Returns true when this call completed the job.
 *
 * The job row is locked first: of two transactions closing a job's last two tasks at once (a settlement
 * and a cancel, say), the second waits, then checks with a fresh snapshot that sees the first's commit, so
 * the job always completes. The job row is the last lock any caller takes (task → labelers → ledger → job).
 */
import { Prisma } from "./generated/client";

/**
 * The two statements of `completeJobIfDone`, for a caller that sends them with others (the settlement's
 * last round trip): lock the job row, then (a later statement: a fresh snapshot) complete it, returning
 * its id when this completed it.
 */
export function completeJobSql(jobId: string): [Prisma.Sql, Prisma.Sql] {
  return [
    Prisma.sql`SELECT 1 FROM jobs WHERE id = ${jobId} FOR UPDATE`,
    Prisma.sql`
    UPDATE jobs SET status = 'completed', completed_at = now(), updated_at = now()
    WHERE id = ${jobId} AND status = 'labeling'
      AND NOT EXISTS (SELECT 1 FROM tasks WHERE job_id = ${jobId} AND status IN ('staged', 'pending', 'labeling', 'settling'))
    RETURNING id`,
  ];
}

export async function completeJobIfDone(tx: Pick<Prisma.TransactionClient, "$executeRaw">, jobId: string): Promise<boolean> {
  const [lock, complete] = completeJobSql(jobId);
  await tx.$executeRaw(lock);
  return (await tx.$executeRaw(complete)) === 1;
}
