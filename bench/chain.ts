/**
 * `pnpm bench:settlement` (node --import tsx bench/chain.ts): on-chain settlement (LEDGER=evm) on a local
 * anvil started here, against the machine's Postgres (a database of its own) and Redis (a prefix of its own).
 * The gateway runs as a process only to create a customer and a template task; the decided tasks are then
 * cloned from it with SQL (status `settling`, as a deciding label leaves them), and the settlement runs
 * in-process on the store (the consensus worker's code: `settleTask`) with the anchorer of the consensus
 * worker (`Anchorer`), so the figures are the settlement's and the anchor's, not HTTP's.
 *
 * Figures (one JSON line on stdout; progress on stderr):
 *  - throughput: the same number of decided tasks settled with LEDGER=local (settle) and with LEDGER=evm
 *    (record, then anchored and settled by the anchorer), 16 at once, in the same run: tasks/s to the
 *    record (evm: the consensus worker's rate) and to the last task settled (evm: includes the last batch's
 *    ANCHOR_INTERVAL_MS wait and confirmation);
 *  - gas: gas per anchor and per settled task at full batches (ANCHOR_MAX_LEAVES = 1024);
 *  - lag: settling → settled (record appended → anchor confirmed, the database's clock) p50/p99/max at
 *    `--rate` settlements/s offered (default 300) for `--seconds` (default 20), ANCHOR_INTERVAL_MS 2000;
 *  - verify: verifySettlementLocal per proof (leaf rebuilt, proof folded; the RPC call excluded), on results
 *    built from the stored rows of a full batch.
 * Options: --tasks N (throughput and gas, default 6144), --rate N, --seconds N.
 */
import { randomBytes } from "node:crypto";
import os from "node:os";
import { performance } from "node:perf_hooks";
import { parseArgs } from "node:util";
import { type Anvil, fundOnAnvil, startAnvil, verifySettlementLocal } from "@labelgate/chain/node";
import { Anchorer, settleTask } from "@labelgate/consensus-worker";
import { createLogger } from "@labelgate/core";
import { QueueClient } from "@labelgate/queue";
import { createStore, ensureDatabase, evmSettlementOf, migrateDatabase, type Store } from "@labelgate/store";
import { benchTarget, productionCustomer, type Started, startServices, tearDown } from "./bench-lib";
import { latencySummary, log, positiveInt, round, sleep } from "./measure";

const { values } = parseArgs({
  options: {
    tasks: { type: "string", default: "6144" },
    rate: { type: "string", default: "300" },
    seconds: { type: "string", default: "20" },
  },
});
const TASKS = positiveInt(values.tasks, "--tasks");
const RATE = positiveInt(values.rate, "--rate");
const SECONDS = positiveInt(values.seconds, "--seconds");
const CONCURRENCY = 16;
const logger = createLogger("bench-chain", process.env.BENCH_LOG_LEVEL === "info" ? "info" : "warn");

/** Clones the template task into `count` decided (`settling`) tasks; returns their ids. */
async function decidedTasks(store: Store, templateId: string, tag: string, count: number): Promise<string[]> {
  const { rows } = await store.db.pool.query<{ id: string }>(
    `INSERT INTO tasks (id, customer_id, task_type, data_url, question, options, consensus_threshold, max_labels, label_space_id,
       status, labels_collected, label_counts, claim_cap, quota_reserved, consensus_label, confidence, resolution, posterior,
       last_label_at)
     SELECT 'tsk_' || $2 || lpad(i::text, 8, '0'), t.customer_id, t.task_type, t.data_url, t.question, t.options, 3, 5, t.label_space_id,
       'settling', 3, '{"cat":3,"dog":0,"bird":0}'::jsonb, 0, 3, 'cat', 0.9846, 'consensus',
       '{"cat":0.9846,"dog":0.0102,"bird":0.0052}'::jsonb, now()
     FROM tasks t CROSS JOIN generate_series(1, $3::int) AS i WHERE t.id = $1
     RETURNING id`,
    [templateId, tag, count],
  );
  return rows.map((r) => r.id);
}

/** Runs `fn` over `ids`, `CONCURRENCY` at once. */
async function pool<T>(ids: string[], fn: (id: string) => Promise<T>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < ids.length) await fn(ids[next++] as string);
    }),
  );
}

/** Polls until none of `ids` is settling (deadline `ms`). */
async function allSettled(store: Store, ids: string[], ms: number): Promise<number> {
  const deadline = Date.now() + ms;
  for (;;) {
    const { rows } = await store.db.pool.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM tasks WHERE id = ANY($1) AND status = 'settling'",
      [ids],
    );
    if (rows[0]?.n === 0) return performance.now();
    if (Date.now() > deadline) throw new Error(`${rows[0]?.n} tasks still settling after ${ms} ms`);
    await sleep(20);
  }
}

async function main(): Promise<void> {
  const target = benchTarget("chain");
  const children: Started["child"][] = [];
  let anvil: Anvil | undefined;
  let store: Store | undefined;
  let queue: QueueClient | undefined;
  try {
    await ensureDatabase(target.databaseUrl);
    await migrateDatabase(target.databaseUrl);
    const services = await startServices(target, ["gateway"]);
    const gateway = services.get("gateway") as Started;
    children.push(gateway.child);
    const gatewayUrl = `http://127.0.0.1:${gateway.port}`;
    const customer = await productionCustomer(gatewayUrl, target.adminToken, "chainbench");
    const created = await fetch(`${gatewayUrl}/v1/tasks`, {
      method: "POST",
      headers: { authorization: `Bearer ${customer.key}`, "content-type": "application/json" },
      body: JSON.stringify({
        type: "image_classification",
        data_url: "https://images.example/1.jpg",
        label_spec: { question: "What animal is this?", options: ["cat", "dog", "bird"] },
      }),
    });
    const templateId = ((await created.json()) as { task_id: string }).task_id;

    anvil = await startAnvil();
    const key = `0x${randomBytes(32).toString("hex")}`;
    await fundOnAnvil(anvil.rpcUrl, key);
    store = createStore({ url: target.databaseUrl, poolMax: 20 });
    queue = new QueueClient({ kind: "redis", url: target.redisUrl, prefix: target.prefix }, 2000);
    const deps = { store, queue, logger };
    const anchorerOf = (intervalMs: number) =>
      new Anchorer({
        ...deps,
        rpcUrl: (anvil as Anvil).rpcUrl,
        privateKey: key,
        confirmations: 1,
        intervalMs,
        maxLeaves: 1024,
        reorgDepth: 12,
        webhookRetryMax: 5,
      });

    // --- throughput, local then evm, same number of tasks --------------------------------------------
    const localIds = await decidedTasks(store, templateId, `l${randomBytes(3).toString("hex")}`, TASKS);
    let t0 = performance.now();
    await pool(localIds, (id) => settleTask({ ...deps, ledger: "local" }, id));
    const localSeconds = (performance.now() - t0) / 1000;
    log(`local: ${TASKS} settled in ${round(localSeconds, 2)} s`);

    // the local records are anchored first (the anchorer anchors every record after the last anchored)
    let anchorer = anchorerOf(2000);
    anchorer.start();
    await allSettled(store, localIds, 60_000);
    const { rows: backlogRows } = await store.db.pool.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM ledger_entries WHERE anchor_id IS NULL",
    );
    await (async () => {
      const deadline = Date.now() + 60_000;
      while (((await store?.anchors.backlog())?.count ?? 0) > 0 || (await store?.anchors.inFlight())) {
        if (Date.now() > deadline) throw new Error("the local records were not anchored within 60 s");
        await sleep(50);
      }
    })();
    log(`anchored the ${backlogRows[0]?.n} local records`);

    const evmIds = await decidedTasks(store, templateId, `e${randomBytes(3).toString("hex")}`, TASKS);
    const firstEvmSeq = (await store.db.pool.query<{ s: string }>("SELECT COALESCE(max(seq), 0)::text AS s FROM ledger_entries")).rows[0]
      ?.s as string;
    t0 = performance.now();
    await pool(evmIds, (id) => settleTask({ ...deps, ledger: "evm" }, id));
    const recordSeconds = (performance.now() - t0) / 1000;
    const settledAt = await allSettled(store, evmIds, 120_000);
    const evmSeconds = (settledAt - t0) / 1000;
    log(`evm: ${TASKS} recorded in ${round(recordSeconds, 2)} s, all settled after ${round(evmSeconds, 2)} s`);

    // --- gas at full batches (the evm run's anchors of 1,024 leaves) ----------------------------------
    const { rows: full } = await store.db.pool.query<{ gas: string; leaves: number }>(
      "SELECT gas_used::text AS gas, tree_size AS leaves FROM anchors WHERE first_seq > $1 AND state = 'confirmed' ORDER BY first_seq",
      [firstEvmSeq],
    );
    const fullBatches = full.filter((a) => a.leaves === 1024);
    const gasPerAnchor = fullBatches.map((a) => Number(a.gas));
    const gasPerTask = gasPerAnchor.map((g) => g / 1024);

    // --- verify per proof, on results built from the stored rows of a full batch ---------------------
    const { rows: proofRows } = await store.db.pool.query<{ task_id: string }>(
      `SELECT l.task_id FROM ledger_entries l JOIN anchors a ON a.id = l.anchor_id
       WHERE a.tree_size = 1024 AND a.state = 'confirmed' ORDER BY a.id DESC, l.leaf_index LIMIT 1024`,
    );
    const results: (Record<string, unknown> & { task_id?: unknown })[] = [];
    for (const { task_id } of proofRows) {
      const task = await store.db.prisma.task.findUniqueOrThrow({ where: { id: task_id } });
      const entry = await store.tasks.ledgerRecord(task);
      const anchored = await store.anchors.anchoredRecord(task_id);
      if (!anchored) throw new Error(`task ${task_id} has no confirmed anchor`);
      const payload = entry.payload as Record<string, unknown>;
      results.push({
        ...payload,
        status: "settled",
        settlement: evmSettlementOf(anchored, entry),
      });
    }
    const tv = performance.now();
    for (const r of results) if (!verifySettlementLocal(r).ok) throw new Error(`the stored proof of ${r.task_id} does not verify`);
    const verifyMs = results.length > 0 ? (performance.now() - tv) / results.length : Number.NaN;

    // --- lag at RATE settlements/s, ANCHOR_INTERVAL_MS 2000 --------------------------------------------
    await anchorer.stop();
    anchorer = anchorerOf(2000);
    anchorer.start();
    const lagIds = await decidedTasks(store, templateId, `r${randomBytes(3).toString("hex")}`, RATE * SECONDS);
    const start = performance.now();
    const inFlight: Promise<unknown>[] = [];
    for (let i = 0; i < lagIds.length; i++) {
      const due = start + (i * 1000) / RATE;
      const wait = due - performance.now();
      if (wait > 1) await sleep(wait);
      inFlight.push(settleTask({ ...deps, ledger: "evm" }, lagIds[i] as string));
    }
    await Promise.all(inFlight);
    const offeredSeconds = (performance.now() - start) / 1000;
    await allSettled(store, lagIds, 60_000);
    const { rows: lagRows } = await store.db.pool.query<{ ms: number }>(
      `SELECT EXTRACT(EPOCH FROM (a.confirmed_at - l.created_at)) * 1000 AS ms
       FROM ledger_entries l JOIN anchors a ON a.id = l.anchor_id WHERE l.task_id = ANY($1)`,
      [lagIds],
    );
    const lag = latencySummary(lagRows.map((r) => Number(r.ms)));
    const { rows: lagAnchors } = await store.db.pool.query<{ n: number; leaves: number }>(
      `SELECT count(DISTINCT a.id)::int AS n, round(avg(a.tree_size))::int AS leaves FROM anchors a
       WHERE a.id IN (SELECT anchor_id FROM ledger_entries WHERE task_id = ANY($1))`,
      [lagIds],
    );
    await anchorer.stop();

    const summary = {
      machine: `${os.cpus()[0]?.model ?? "unknown"}, ${os.cpus().length} cores, Node ${process.version}, load ${os
        .loadavg()
        .map((l) => round(l, 2))
        .join(" / ")}`,
      date: new Date().toISOString(),
      tasks: TASKS,
      throughput: {
        local_tasks_per_s: round(TASKS / localSeconds),
        evm_recorded_per_s: round(TASKS / recordSeconds),
        evm_settled_per_s: round(TASKS / evmSeconds),
        ratio_recorded: round(localSeconds / recordSeconds, 2),
        ratio_settled: round(localSeconds / evmSeconds, 2),
      },
      gas: {
        full_batches: fullBatches.length,
        gas_per_anchor: gasPerAnchor.length > 0 ? Math.round(gasPerAnchor.reduce((a, b) => a + b, 0) / gasPerAnchor.length) : null,
        gas_per_task: gasPerTask.length > 0 ? round(gasPerTask.reduce((a, b) => a + b, 0) / gasPerTask.length, 1) : null,
      },
      lag: {
        offered_per_s: RATE,
        achieved_per_s: round(lagIds.length / offeredSeconds),
        anchor_interval_ms: 2000,
        anchors: lagAnchors[0]?.n,
        leaves_per_anchor: lagAnchors[0]?.leaves,
        ms: lag,
      },
      verify_ms_per_proof: round(verifyMs, 3),
    };
    process.stdout.write(`${JSON.stringify(summary)}\n`);
  } finally {
    await queue?.close();
    await store?.close();
    await anvil?.stop();
    await tearDown(target, children);
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
