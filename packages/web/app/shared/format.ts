/** Formatting of API values for display (numbers, shares, money in integer cents, ISO timestamps). */

const integer = new Intl.NumberFormat("en-US");

export function formatCount(n: number): string {
  return integer.format(n);
}

/** A share in 0..1 as a percentage, `—` for null. */
export function formatShare(x: number | null | undefined, digits = 1): string {
  return x === null || x === undefined ? "—" : `${(x * 100).toFixed(digits)}%`;
}

/** Integer cents as money in `currency` (ISO 4217, any case). */
export function formatCents(cents: number, currency: string): string {
  return new Intl.NumberFormat("en-US", { style: "currency", currency: currency.toUpperCase() }).format(cents / 100);
}

/** An ISO 8601 timestamp as local date and time, `—` for null. */
export function formatTime(iso: string | null | undefined): string {
  if (!iso) return "—";
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleString("en-GB", { dateStyle: "medium", timeStyle: "medium" });
}

/** Seconds as `1 h 2 min`, `3 min 4 s` or `5.6 s`, `—` for null. */
export function formatSeconds(s: number | null | undefined): string {
  if (s === null || s === undefined) return "—";
  if (s < 60) return `${s.toFixed(1)} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min ${Math.round(s % 60)} s`;
  return `${Math.floor(s / 3600)} h ${Math.round((s % 3600) / 60)} min`;
}

/** A URL that may be opened as a link: http(s) only (never `javascript:` or `data:`). */
export function safeHttpUrl(url: string): string | null {
  try {
    const u = new URL(url);
    return u.protocol === "http:" || u.protocol === "https:" ? u.href : null;
  } catch {
    return null;
  }
}
