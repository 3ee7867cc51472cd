/**
 * Anchor batches of LEDGER=evm (contract §settlement) as rows: the anchorer of the consensus worker
 * (services/consensus-worker/src/anchorer.ts) drives them; everything it decides is stored here first.
 *
 * - A batch is a run of consecutive ledger records after the last anchored one (`close`): its row holds the
 *   range, tree size and Merkle root (RFC 9162 over keccak-256, @labelgate/chain); each record's row gets
 *   its anchor id, leaf index and inclusion proof, in the same transaction. A record belongs to one anchor
 *   (one column; ranges unique and consecutive), so it can never be anchored twice.
 * - States: `open` (stored, nothing signed) → `sent` (a transaction signed and stored BEFORE its broadcast:
 *   `signed`) → `confirmed` (`confirm`, which in the same transaction settles the batch's `settling` tasks
 *   and writes their `task.settled` events (`task.revised` for a later revision), once: the unique
 *   `events(task_id, type, revision)`).
 *   A confirmed anchor whose block was reorged out goes back to `sent` (`reopen`); confirming it again
 *   settles nothing twice.
 * - The anchorer's leadership is a session-level advisory lock held on a dedicated connection (`leaderLock`).
 */
import { type AnchorBatch, anchorBatch, canonicalJson, type Hex, toHex } from "@labelgate/chain";
import { newId } from "@labelgate/core";
import type { FollowUps } from "@labelgate/queue";
import type { PoolClient } from "pg";
import type { Db } from "./database";
import { type Anchor, Prisma } from "./generated/client";
import { type CompletedJobRow, completeJobSql } from "./jobs";
import { auditDrawSql, revisionEventPayload, settledFollowUps, type TaskRevisedPayload, type TaskSettledPayload } from "./settlement";
import { queryRows, withTransaction } from "./sql";

/** advisory lock key of the anchorer's leadership ("lganchor" as int64) */
const LEADER_LOCK_KEY = 0x6c67616e63686f72n;
/** transaction-scoped lock of batch closing (a stale leader and a new one never close two batches at once) */
const CLOSE_LOCK_KEY = 0x6c67636c6f736531n;

export type { Anchor } from "./generated/client";

/** Records waiting for an anchor: how many, and when the oldest was appended. */
export interface AnchorBacklog {
  count: number;
  oldestAt: Date | null;
}

/** What a confirmation settled. */
export interface AnchorConfirmation {
  /** tasks moved settling → settled now, with their new event and when their record was appended */
  settled: { taskId: string; eventId: string; recordedAt: Date }[];
  /** manifest jobs whose last task this settled */
  completedJobIds: string[];
  /** settled tasks whose ledger_txid moved to this transaction (the anchor was re-signed after a reorg) */
  retargeted: number;
  /**
   * deliveries of those tasks' `task.settled` events that had been delivered with the old ledger_txid: back
   * to `pending`, to be sent again with the new one (`webhookDelivery` jobs; the reconciliation requeues
   * any whose job is lost)
   */
  redeliveries: string[];
  /** what must follow the commit (settledFollowUps): the events to route, the deliveries to send again, the exports */
  followUps: FollowUps;
}

/** The anchor of a settled record, for its result's `settlement` (contract §settlement). */
export interface AnchoredRecord {
  txHash: Hex;
  chainId: number;
  blockNumber: number;
  contract: Hex;
  merkleRoot: Hex;
  treeSize: number;
  leafIndex: number;
  proof: Hex[];
}

/** The anchorer's leadership: a session advisory lock on a connection of its own. */
export interface LeaderLock {
  /** Takes the lock when free (or confirms it is still held). Never throws: a failed connection is `false`. */
  tryAcquire(): Promise<boolean>;
  /** whether this process held the lock at its last check */
  readonly held: boolean;
  /** Releases the lock and the connection. */
  release(): Promise<void>;
}

interface TaskToSettle {
  id: string;
  customer_id: string;
  job_id: string | null;
  consensus_label: string;
  confidence: number;
  settled_at: string;
  /** a reserved type's consensus (null: single choice) */
  consensus: TaskSettledPayload["consensus"] | null;
  /** the revision the record settles, and the one it replaces (null for revision 1) */
  revision: number;
  previous: TaskRevisedPayload["previous"] | null;
}

/**
 * The anchor rows of LEDGER=evm over the store's database (see the module comment). Errors: pg's and
 * Prisma's on database failures; `close` also throws when the records after the last anchor are not
 * consecutive or a record was taken by another anchor (both a broken invariant).
 */
export function anchorsStore(db: Db) {
  const { prisma, pool } = db;

  return {
    /** Records appended after the last anchored one. */
    async backlog(): Promise<AnchorBacklog> {
      const [row] = await queryRows<{ count: number; oldest: Date | null }>(
        pool,
        Prisma.sql`SELECT count(*)::int AS count, min(created_at) AS oldest FROM ledger_entries
          WHERE seq > (SELECT COALESCE(max(last_seq), 0) FROM anchors)`,
      );
      return { count: row?.count ?? 0, oldestAt: row?.oldest ?? null };
    },

    /**
     * Closes a batch: the (at most `maxLeaves`) records after the last anchored one, their tree built, the
     * anchor row (`open`) and every record's anchor id, leaf index and proof written in one transaction.
     * @returns the new anchor, or undefined when no record waits
     * @throws Error when the records are not consecutive (a broken ledger)
     */
    async close(options: {
      maxLeaves: number;
      chainId: number;
      contract: string;
      /** builds the batch's tree (default: @labelgate/chain `anchorBatch` on this thread; the anchorer runs it in a worker thread) */
      build?: (payloads: unknown[]) => Promise<AnchorBatch>;
    }): Promise<Anchor | undefined> {
      const id = await withTransaction(pool, async (run) => {
        const [, records] = await run<[object, { seq: string; payload: unknown }]>([
          Prisma.sql`SELECT pg_advisory_xact_lock(${CLOSE_LOCK_KEY})`,
          Prisma.sql`SELECT seq::text AS seq, payload FROM ledger_entries
            WHERE ledger_entries.seq > (SELECT COALESCE(max(last_seq), 0) FROM anchors) ORDER BY ledger_entries.seq LIMIT ${options.maxLeaves}`,
        ]);
        if (records.length === 0) return undefined;
        const first = BigInt((records[0] as { seq: string }).seq);
        records.forEach((r, i) => {
          if (BigInt(r.seq) !== first + BigInt(i)) throw new Error(`ledger records ${first}..${r.seq} are not consecutive`);
        });
        // the leaf is exactly the bytes the ledger hashed: the canonical JSON of the stored record
        const payloads = records.map((r) => r.payload);
        const { root, proofs } = options.build ? await options.build(payloads) : anchorBatch(payloads);
        if (proofs.length !== records.length)
          throw new Error(`anchor batch ${first}: ${proofs.length} proofs for ${records.length} records`);
        const last = first + BigInt(records.length - 1);
        const [inserted] = await run<[{ id: string; leaves: number }]>(
          [
            Prisma.sql`
            WITH a AS (
              INSERT INTO anchors (first_seq, last_seq, tree_size, merkle_root, chain_id, contract)
              VALUES (${first}, ${last}, ${records.length}, ${root}, ${options.chainId}, ${options.contract.toLowerCase()})
              RETURNING id
            ),
            leaves AS (
              UPDATE ledger_entries l SET anchor_id = (SELECT id FROM a), leaf_index = (l.seq - ${first})::int, proof = p.proof::jsonb
              FROM unnest(${records.map((r) => r.seq)}::bigint[], ${proofs}::text[]) AS p(seq, proof)
              WHERE l.seq = p.seq AND l.anchor_id IS NULL
              RETURNING l.seq
            )
            SELECT id::text AS id, (SELECT count(*) FROM leaves)::int AS leaves FROM a`,
          ],
          { commit: true },
        );
        const row = inserted[0] as { id: string; leaves: number } | undefined;
        if (!row || row.leaves !== records.length) throw new Error(`anchor batch ${first}..${last} lost a leaf to another anchor`);
        return BigInt(row.id);
      });
      return id === undefined ? undefined : ((await prisma.anchor.findUnique({ where: { id } })) ?? undefined);
    },

    /** The oldest anchor not confirmed (`open` or `sent`): the one the anchorer works on. */
    inFlight(): Promise<Anchor | null> {
      return prisma.anchor.findFirst({ where: { state: { in: ["open", "sent"] } }, orderBy: { firstSeq: "asc" } });
    },

    /** The anchors not confirmed (`open` or `sent`), oldest first, at most `limit`: the one in flight, then those closed ahead. */
    unconfirmed(limit: number): Promise<Anchor[]> {
      return prisma.anchor.findMany({ where: { state: { in: ["open", "sent"] } }, orderBy: { firstSeq: "asc" }, take: limit });
    },

    /** Anchors confirmed in block `fromBlock` or later (the reorg check's window). */
    confirmedSince(fromBlock: bigint): Promise<Anchor[]> {
      return prisma.anchor.findMany({
        where: { state: "confirmed", blockNumber: { gte: fromBlock } },
        orderBy: { firstSeq: "asc" },
      });
    },

    /**
     * Stores a signed transaction of the anchor BEFORE it is broadcast (state `sent`): after a crash the
     * anchorer finds it here and re-broadcasts it or signs anew. No-op on a confirmed anchor.
     */
    async signed(anchorId: bigint, tx: { txHash: Hex; rawTx: Hex; nonce: number }): Promise<void> {
      await prisma.$executeRaw`
        UPDATE anchors SET state = 'sent', tx_hash = ${tx.txHash}, raw_tx = ${tx.rawTx}, nonce = ${tx.nonce},
          tx_hashes = CASE WHEN ${tx.txHash} = ANY(tx_hashes) THEN tx_hashes ELSE array_append(tx_hashes, ${tx.txHash}::text) END,
          sent_at = COALESCE(sent_at, now()), updated_at = now()
        WHERE id = ${anchorId} AND state <> 'confirmed'`;
    },

    /** Counts one broadcast of the anchor's current transaction. */
    async broadcast(anchorId: bigint): Promise<void> {
      await prisma.$executeRaw`UPDATE anchors SET sends = sends + 1, updated_at = now() WHERE id = ${anchorId}`;
    },

    /**
     * A confirmed anchor whose block left the canonical chain goes back to `sent` (its transaction is
     * re-broadcast or re-signed). Its tasks stay settled. @returns whether it was confirmed
     */
    async reopen(anchorId: bigint): Promise<boolean> {
      const n = await prisma.$executeRaw`
        UPDATE anchors SET state = 'sent', block_number = NULL, block_hash = NULL, updated_at = now()
        WHERE id = ${anchorId} AND state = 'confirmed'`;
      return n > 0;
    },

    /**
     * Confirms the anchor (mined in `blockNumber`/`blockHash` with enough confirmations) and, in the same
     * transaction, settles its `settling` tasks (`ledger_txid` = the anchor transaction, `settled_at` = when
     * the record was appended, as in the leaf), writes their `task.settled` events and completes the manifest
     * jobs whose last task this was. Safe to run again: a settled task and an existing event are left alone.
     * Its follow-ups are `follow_up` rows of the same transaction (docs/decisions/0300): the events' and the
     * jobs' by the migration's triggers, each delivery sent again (requeued, with `redeliveryAttempts`
     * attempts, else the catalog's) by the statement that moves it.
     */
    async confirm(
      anchorId: bigint,
      tx: { txHash: Hex; blockNumber: bigint; blockHash: Hex; gasUsed: bigint },
      options: { redeliveryAttempts?: number } = {},
    ): Promise<AnchorConfirmation> {
      return withTransaction(pool, async (run) => {
        const [, tasks] = await run<[object, TaskToSettle]>([
          Prisma.sql`SELECT id FROM anchors WHERE id = ${anchorId} FOR UPDATE`,
          Prisma.sql`
          SELECT t.id, t.customer_id, t.job_id, t.consensus_label, t.confidence, t.consensus, l.payload->>'settled_at' AS settled_at,
            t.revision,
            (SELECT json_build_object('consensus_label', r.consensus_label, 'confidence', r.confidence)
             FROM task_revisions r WHERE r.task_id = t.id AND r.revision = t.revision - 1) AS previous
          FROM ledger_entries l JOIN tasks t ON t.id = l.task_id AND l.revision = t.revision
          WHERE l.anchor_id = ${anchorId} AND t.status = 'settling'
          ORDER BY t.id FOR UPDATE OF t`,
        ]);
        const eventIds = tasks.map(() => newId("event"));
        const events = tasks.map((t) => ({ ...revisionEventPayload(t, t.settled_at), ledger_txid: tx.txHash }));
        const payloads = events.map((e) => JSON.stringify(e));
        const ids = tasks.map((t) => t.id);
        const jobIds = [...new Set(tasks.flatMap((t) => (t.job_id ? [t.job_id] : [])))].sort();
        const rows = await run<object[]>(
          [
            Prisma.sql`
            UPDATE anchors SET state = 'confirmed', tx_hash = ${tx.txHash}, block_number = ${tx.blockNumber},
              block_hash = ${tx.blockHash}, gas_used = ${tx.gasUsed}, confirmed_at = COALESCE(confirmed_at, now()), updated_at = now()
            WHERE id = ${anchorId}`,
            Prisma.sql`
            UPDATE tasks t SET status = 'settled'::"TaskStatus", ledger_txid = ${tx.txHash}, settled_at = x.at, updated_at = now()
            FROM unnest(${ids}::text[], ${tasks.map((t) => t.settled_at)}::timestamptz[]) AS x(id, at)
            WHERE t.id = x.id AND t.status = 'settling'`,
            Prisma.sql`
            INSERT INTO events (id, type, task_id, customer_id, payload, revision)
            SELECT e.id, e.type, e.task_id, e.customer_id, e.payload::jsonb, e.revision
            FROM unnest(${eventIds}::text[], ${events.map((e) => e.event)}::text[], ${ids}::text[], ${tasks.map((t) => t.customer_id)}::text[],
              ${payloads}::text[], ${tasks.map((t) => t.revision)}::int[])
              AS e(id, type, task_id, customer_id, payload, revision)
            ON CONFLICT (task_id, type, revision) DO NOTHING
            RETURNING id, task_id`,
            // re-signed after a reorg: the batch's settled tasks point at the transaction that holds it now; their
            // events carry the new ledger_txid, and deliveries already made with the old one are sent again
            // (a delivered task's webhook_status is pending until they are)
            Prisma.sql`
            WITH moved AS (
              UPDATE tasks SET ledger_txid = ${tx.txHash}, updated_at = now(),
                webhook_status = CASE WHEN webhook_status = 'delivered' THEN 'pending'::"WebhookStatus" ELSE webhook_status END
              WHERE (id, revision) IN (SELECT task_id, revision FROM ledger_entries WHERE anchor_id = ${anchorId}) AND status = 'settled'
                AND ledger_txid <> ${tx.txHash}
                AND EXISTS (SELECT 1 FROM anchors a WHERE a.id = ${anchorId} AND tasks.ledger_txid = ANY(a.tx_hashes))
              RETURNING id
            ), evs AS (
              UPDATE events e SET payload = jsonb_set(e.payload, '{ledger_txid}', to_jsonb(${tx.txHash}::text))
              FROM moved JOIN tasks t ON t.id = moved.id
              WHERE e.task_id = moved.id AND e.type IN ('task.settled', 'task.revised') AND e.revision = t.revision
              RETURNING e.id
            ), again AS (
              UPDATE deliveries d SET status = 'pending', updated_at = now()
              FROM evs WHERE d.event_id = evs.id AND d.status = 'delivered'
              RETURNING d.id
            ), resend AS (
              INSERT INTO follow_up (queue, payload, requeue, attempts)
              SELECT 'webhookDelivery', jsonb_build_object('deliveryId', again.id), true, ${options.redeliveryAttempts ?? null}::int FROM again
            )
            SELECT (SELECT count(*) FROM moved)::int AS retargeted, ARRAY(SELECT id FROM again ORDER BY id) AS redeliveries`,
            ...jobIds.flatMap((id) => completeJobSql(id)),
            // a first settlement may enter its customer's audit queue (docs/decisions/0262)
            auditDrawSql(ids),
          ],
          { commit: true },
        );
        const inserted = new Map((rows[2] as { id: string; task_id: string }[]).map((e) => [e.task_id, e.id]));
        const jobRows = jobIds.map((_, i) => (rows[4 + 2 * i + 1] ?? []) as CompletedJobRow[]);
        const completedJobIds = jobIds.filter((_, i) => (jobRows[i] ?? []).length > 0);
        const jobEventIds = jobRows.flatMap((r) => (r[0]?.event_id ? [r[0].event_id] : []));
        const [moved] = (rows[3] ?? []) as { retargeted: number; redeliveries: string[] }[];
        const settled = tasks.flatMap((t) => {
          const eventId = inserted.get(t.id);
          return eventId ? [{ taskId: t.id, eventId, recordedAt: new Date(t.settled_at) }] : [];
        });
        const redeliveries = moved?.redeliveries ?? [];
        return {
          settled,
          completedJobIds,
          retargeted: moved?.retargeted ?? 0,
          redeliveries,
          followUps: settledFollowUps({ eventIds: [...settled.map((e) => e.eventId), ...jobEventIds], completedJobIds, redeliveries }),
        };
      });
    },

    /** The anchor contract stored for `chainId` (deployed by an earlier start). */
    async contractOf(chainId: number): Promise<string | undefined> {
      return (await prisma.anchorContract.findUnique({ where: { chainId } }))?.address;
    },

    /** Stores the contract deployed for `chainId`; the first stored wins. @returns the stored address */
    async saveContract(chainId: number, address: string, deployTx?: string): Promise<string> {
      await prisma.$executeRaw`
        INSERT INTO anchor_contracts (chain_id, address, deploy_tx) VALUES (${chainId}, ${address.toLowerCase()}, ${deployTx ?? null})
        ON CONFLICT (chain_id) DO NOTHING`;
      return (await this.contractOf(chainId)) ?? address;
    },

    /**
     * The confirmed anchor of the record of task `taskId`'s `revision` (default 1), with its leaf index and proof
     * (stored at close): undefined when the record is not in a confirmed anchor (LEDGER=local, or not anchored yet).
     */
    async anchoredRecord(taskId: string, revision = 1): Promise<AnchoredRecord | undefined> {
      const [row] = await queryRows<{
        tx_hash: string;
        chain_id: number;
        block_number: string;
        contract: string;
        merkle_root: string;
        tree_size: number;
        leaf_index: number;
        proof: string[];
      }>(
        pool,
        Prisma.sql`
        SELECT a.tx_hash, a.chain_id, a.block_number::text AS block_number, a.contract, a.merkle_root, a.tree_size, l.leaf_index, l.proof
        FROM ledger_entries l JOIN anchors a ON a.id = l.anchor_id
        WHERE l.task_id = ${taskId} AND l.revision = ${revision} AND a.state = 'confirmed'`,
      );
      if (!row) return undefined;
      return {
        txHash: row.tx_hash as Hex,
        chainId: row.chain_id,
        blockNumber: Number(row.block_number),
        contract: row.contract as Hex,
        merkleRoot: row.merkle_root as Hex,
        treeSize: row.tree_size,
        leafIndex: row.leaf_index,
        proof: row.proof as Hex[],
      };
    },

    /** The anchorer's leadership lock (see {@link LeaderLock}). */
    leaderLock(): LeaderLock {
      let client: PoolClient | undefined;
      let held = false;
      const drop = (err?: Error) => {
        held = false;
        const c = client;
        client = undefined;
        c?.release(err ?? true);
      };
      return {
        get held() {
          return held;
        },
        async tryAcquire() {
          try {
            if (!client) {
              const c = await pool.connect();
              c.on("error", (err) => {
                // the server ended the session: its session lock is gone with it
                if (client === c) drop(err);
              });
              client = c;
            }
            if (held) {
              await client.query("SELECT 1");
              return held;
            }
            const res = await client.query<{ ok: boolean }>("SELECT pg_try_advisory_lock($1) AS ok", [LEADER_LOCK_KEY.toString()]);
            held = res.rows[0]?.ok === true;
            return held;
          } catch (err) {
            drop(err instanceof Error ? err : new Error(String(err)));
            return false;
          }
        },
        async release() {
          const c = client;
          if (!c) return;
          try {
            if (held) await c.query("SELECT pg_advisory_unlock($1)", [LEADER_LOCK_KEY.toString()]);
            held = false;
            client = undefined;
            c.release();
          } catch (err) {
            drop(err instanceof Error ? err : new Error(String(err)));
          }
        },
      };
    },
  };
}

export type AnchorsStore = ReturnType<typeof anchorsStore>;

/** The leaf bytes of a stored ledger record (the canonical JSON the ledger hashed), as hex. */
export function leafHexOf(payload: unknown): Hex {
  return toHex(new TextEncoder().encode(canonicalJson(payload)));
}

/**
 * The result's `settlement` object of a record anchored on chain (contract §settlement), from the stored
 * rows: the anchor (`anchored`) and the ledger record (`entry`: its payload, sequence and previous hash).
 */
export function evmSettlementOf(anchored: AnchoredRecord, entry: { payload: unknown; seq: bigint | number; prevHash: string }) {
  return {
    ledger: "evm" as const,
    ledger_txid: anchored.txHash,
    chain_id: anchored.chainId,
    block_number: anchored.blockNumber,
    contract: anchored.contract,
    merkle_root: anchored.merkleRoot,
    leaf: leafHexOf(entry.payload),
    leaf_index: anchored.leafIndex,
    tree_size: anchored.treeSize,
    proof: anchored.proof,
    sequence: Number(entry.seq),
    prev_hash: entry.prevHash,
  };
}
