const count = new Intl.NumberFormat();

/**
 * A count of plants as the server gave it: exact, or at least this many ("10,000+"). The server's counts stop
 * at a cap (src/server/plants/counts.ts, Count) except where the database keeps the total (kept-counts.ts): a name search's.
 */
export function countText(value: number, exact = true): string {
  return `${count.format(value)}${exact ? '' : '+'}`;
}
