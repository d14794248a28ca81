const count = new Intl.NumberFormat();

/**
 * A count of plants as the server gave it: exact, or at least this many ("10,000+"). The server's counts stop
 * at a cap (src/server/plants/query.ts, Count): at ten million plants an exact count would cost seconds.
 */
export function countText(value: number, exact = true): string {
  return `${count.format(value)}${exact ? '' : '+'}`;
}
