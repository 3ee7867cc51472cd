/**
 * Splits a `postgres://user:pass@host:port/db?options` URL into node-postgres fields.
 * The Prisma pg adapter must get host/port/user/database separately: with a connection string the
 * shadow database of `migrate dev` silently becomes the main one (docs/decisions/README.md (Platform)).
 * @throws TypeError when the URL cannot be parsed.
 */
export interface PgConnectionConfig {
  host: string;
  port: number;
  user: string;
  password?: string;
  database: string;
}

export function pgConfigFromUrl(url: string): PgConnectionConfig {
  const u = new URL(url);
  if (u.protocol !== "postgres:" && u.protocol !== "postgresql:") {
    throw new TypeError(`not a postgres URL: ${u.protocol}`);
  }
  const config: PgConnectionConfig = {
    host: decodeURIComponent(u.hostname || "127.0.0.1"),
    port: u.port ? Number(u.port) : 5432,
    user: decodeURIComponent(u.username || "postgres"),
    database: decodeURIComponent(u.pathname.replace(/^\//, "") || "postgres"),
  };
  if (u.password) config.password = decodeURIComponent(u.password);
  return config;
}

/** Returns the same URL pointing at another database name on the same server. */
export function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}
