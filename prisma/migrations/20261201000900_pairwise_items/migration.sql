-- pairwise_comparison tasks (contract §task-types): item b of the comparison, a URL or a text
ALTER TABLE "tasks" ADD COLUMN "data_url_b" TEXT, ADD COLUMN "data_text_b" TEXT;
