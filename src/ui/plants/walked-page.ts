import { lastPageRows, type PlantPage, type PlantSortKey, type WalkStop } from '@/shared/plant-table';

/**
 * A name search of many matches is walked a budget of rows per request, in any order, id (the default)
 * included (the server says where each stopped: `walkStopped`, shared/plant-table.ts). The page asks on by itself
 * from where the last answer stopped until it is full, the order ends, or it has asked AUTO_CONTINUATIONS
 * times (docs/admin-page.md, "At scale"): then the person may search further. This joins those answers into
 * the one page the view shows.
 */

/**
 * Requests the page sends by itself for one page (each walks up to 50,000 rows on SQLite, 30,000 on PostgreSQL:
 * a million names, or 600,000), before it asks the person.
 */
export const AUTO_CONTINUATIONS = 20;

/**
 * The request that goes on from where an answer's walk stopped: after that row going forwards, before it going
 * backwards, at the place the server held (`key`), which stays true once the row is renamed or deleted. In id
 * order the id is the place, and the cursor carries no key (the input refuses one).
 */
export const continuationOf = (stop: WalkStop, sortKey: PlantSortKey) => ({
  kind: stop.direction === 'forwards' ? ('after' as const) : ('before' as const),
  id: stop.id,
  ...(sortKey === 'id' ? {} : { key: stop.key }),
});

/**
 * The requests one page has sent on from its first answer: `of` the page's address, `basis` where that first
 * answer's walk stopped (stopKey), the answers joined so far, how many it may send before it asks, whether the
 * person stopped it, and whether the order ended (with, when nothing was found, the page served instead).
 */
export type Chain = { of: string; basis: string | null; more: PlantPage[]; allowed: number; halted: boolean; ended?: boolean; instead?: PlantPage };

/** Where a walk stopped, as one comparable text (a key that is a time, by its milliseconds). */
export const stopKey = (stop: WalkStop | null | undefined): string | null =>
  stop ? `${stop.direction} ${stop.id} ${stop.key instanceof Date ? stop.key.getTime() : String(stop.key)}` : null;

/**
 * The chain for the page at `address` whose first answer is `first`. A new address starts afresh. The same
 * address answered again (React Query refetches on window focus and after every edit, add, bulk change or undo)
 * keeps what was joined and a person's Stop while its walk stopped at the same place; stopped elsewhere, the
 * joined answers no longer follow it and are dropped, the Stop is kept.
 */
export function chainFor(chain: Chain, address: string, first: PlantPage | undefined): Chain {
  const fresh = (halted: boolean): Chain => ({ of: address, basis: stopKey(first?.walkStopped), more: [], allowed: AUTO_CONTINUATIONS, halted });
  if (chain.of !== address) return fresh(false);
  if (first !== undefined && stopKey(first.walkStopped) !== chain.basis) return fresh(chain.halted);
  return chain;
}

/**
 * How many rows the page is full at: `size`, but an exact last page holds what is left over after whole pages
 * (lastPageRows, as the server reads it), so a walk back from the end stops asking once it has those.
 */
export function fullAt(first: PlantPage, size: number): number {
  return first.cursor?.kind === 'last' && first.totalExact ? lastPageRows(first.total, size) : size;
}

/** Each row once, the first time it comes (a row renamed between two requests may come again in a later one). */
function once<Row extends { id: bigint }>(rows: Row[]): Row[] {
  const seen = new Set<bigint>();
  return rows.filter((row) => !seen.has(row.id) && Boolean(seen.add(row.id)));
}

/**
 * The page that `first` and the answers that went on from it make together: at most `size` rows in the
 * order's direction (forwards each answer's rows follow the last; backwards, a previous or last page, they come
 * before), placed by the answer its first row came from, and still stopped only when it is not yet full.
 */
export function joinWalked(first: PlantPage, more: PlantPage[], size: number): PlantPage {
  if (more.length === 0) return first;
  const answers = [first, ...more];
  const latest = answers[answers.length - 1]!;
  const total = first.totalExact ? first.total : Math.max(...answers.map((answer) => answer.total));
  if (first.walkStopped?.direction !== 'backwards') {
    const all = once(answers.flatMap((answer) => answer.rows));
    const cut = all.length > size;
    const hasNext = cut || latest.hasNext;
    const rows = all.slice(0, size);
    return {
      ...first,
      rows,
      hasNext,
      total: first.totalExact ? total : Math.max(total, first.offset + rows.length + (hasNext ? 1 : 0)),
      walkStopped: cut ? null : latest.walkStopped,
    };
  }
  // Backwards: the latest answer's rows come first; the page keeps the `size` nearest the page it was turned from.
  const all = once([...answers].reverse().flatMap((answer) => answer.rows));
  const cut = all.length > size;
  const rows = all.slice(Math.max(0, all.length - size));
  const leading = [...answers].reverse().find((answer) => answer.rows.length > 0) ?? latest;
  const offset = leading.offset + (cut ? all.length - size : 0);
  return {
    ...first,
    rows,
    offset,
    offsetExact: leading.offsetExact,
    total: first.totalExact ? total : Math.max(total, offset + rows.length + (first.hasNext ? 1 : 0)),
    walkStopped: cut ? null : latest.walkStopped,
  };
}

const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });

/** How far a walk got, as a person reads the order: "names up to “aloe m…”", "plants created up to 27 Nov 2026, 05:00", "ids up to 50000". */
export function reachedText(key: PlantSortKey, stop: WalkStop): string {
  const way = stop.direction === 'forwards' ? 'up to' : 'back to';
  if (key === 'id') return `ids ${way} ${stop.id.toString()}`;
  if (stop.reached === null) return `untagged plants ${way} id ${stop.id.toString()}`;
  if (key === 'created') return `plants created ${way} ${dateTime.format(new Date(stop.reached))}`;
  const what = key === 'name' ? 'names' : key === 'tag' ? 'tags' : 'owners';
  return `${what} ${way} “${stop.reached}”`;
}
