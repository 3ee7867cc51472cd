-- GET /v1/batches: a customer's batches newest first (keyset order of the page query)
CREATE INDEX "batches_customer_id_created_at_id_idx" ON "batches"("customer_id", "created_at" DESC, "id" DESC);
