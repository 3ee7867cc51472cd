/** `pnpm db:migrate`: applies migrations to DATABASE_URL (creating the database if needed). */
import { migrateDatabase } from "@labelgate/store";

const url = process.env.DATABASE_URL;
if (!url) {
  console.error("DATABASE_URL is required");
  process.exit(2);
}
migrateDatabase(url).then(
  () => console.log("migrations applied"),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
