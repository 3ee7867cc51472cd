/**
 * The manifest worker's role on the runtime: its handlers on the `manifest-ingest`, `manifest-export` and
 * `item-fetch` queues, reading https manifests and custom S3 endpoints through connections whose lookup refuses private
 * addresses at connect time (storage.ts). A job returned to the queue at shutdown resumes from
 * jobs.lines_ingested.
 */
import { defineWorkerRole } from "@labelgate/runtime";
import { storageOptions } from "@labelgate/storage";
import { manifestHandlers } from "./handlers";

export const manifestRole = defineWorkerRole("manifest-worker", (ctx, env) => {
  const storage = storageOptions({
    allowPrivateUrls: env.ALLOW_PRIVATE_URLS,
    gcsApiEndpoint: env.GCS_API_ENDPOINT,
    resolve: ctx.options.resolve,
  });
  return {
    handlers: manifestHandlers({
      store: ctx.store,
      relay: ctx.relay,
      secretBox: ctx.secretBox(),
      logger: ctx.logger,
      storage,
      chunkSize: ctx.options.manifestChunkSize,
    }),
    workers: {
      concurrency: {
        manifestIngest: env.MANIFEST_CONCURRENCY,
        manifestExport: env.MANIFEST_CONCURRENCY,
        itemFetch: env.ITEM_FETCH_CONCURRENCY,
      },
    },
    close: () => storage.dispatcher.close(),
  };
});
