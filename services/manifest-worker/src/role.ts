/**
 * The manifest worker's role on the runtime: its handlers on the `manifest-ingest` and `manifest-export`
 * queues, reading https manifests and custom S3 endpoints through connections whose lookup refuses private
 * addresses at connect time (storage.ts).
 */
import { queueKeysOf } from "@labelgate/queue";
import { defineRole } from "@labelgate/runtime";
import { manifestHandlers } from "./handlers";
import { storageOptions } from "./storage";

export const manifestRole = defineRole({
  role: "manifest-worker",
  queues: queueKeysOf("manifest-worker"),
  async start(ctx, env) {
    const storage = storageOptions({
      allowPrivateUrls: env.ALLOW_PRIVATE_URLS,
      gcsApiEndpoint: env.GCS_API_ENDPOINT,
      resolve: ctx.options.resolve,
    });
    const handlers = manifestHandlers({
      store: ctx.store,
      queue: ctx.queue,
      secretBox: ctx.secretBox(),
      logger: ctx.logger,
      storage,
      chunkSize: ctx.options.manifestChunkSize,
    });
    const workers = ctx.startWorkers(handlers, {
      concurrency: { manifestIngest: env.MANIFEST_CONCURRENCY, manifestExport: env.MANIFEST_CONCURRENCY },
    });
    return {
      // a job returned to the queue resumes from jobs.lines_ingested
      drain: (budgetMs: number) => workers.closeWithin(budgetMs),
      close: async () => {
        await storage.dispatcher.close();
      },
    };
  },
});
