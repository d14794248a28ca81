import { INT64_MAX, INT64_MIN } from '@/shared/plants';
import { DEFAULT_SORT, PAGE_SIZES, PLANT_SORT_KEYS, type PlantPageInput, type PlantSort, type PlantSortKey } from '@/shared/plant-table';

/**
 * The plants view's state lives in its address, so a reload, Back and a shared link land on the same view:
 *
 *   /plants?q=fern&tag=shade&owner=alice&sort=name&dir=desc&size=50&after=123     (or before=ID, or page=last)
 *
 * Anything unreadable in the address (`size=33`, a 300-character `q`) is dropped (the view falls back to its
 * default) rather than shown as an error: an address is not a form. The view then writes the address it
 * really shows (`plantsHref` of what was read), so what stays in the address is what is on the screen.
 */
export type PageSize = (typeof PAGE_SIZES)[number];
export const DEFAULT_PAGE_SIZE: PageSize = 25;

export type Cursor = NonNullable<PlantPageInput['cursor']>;

export type PlantsQuery = {
  q?: string;
  tag?: string;
  owner?: string;
  size: PageSize;
  sort: PlantSort;
  cursor?: Cursor;
};

function readId(text: string | null): bigint | undefined {
  if (text === null || !/^-?\d{1,19}$/.test(text)) return undefined;
  const id = BigInt(text);
  return id >= INT64_MIN && id <= INT64_MAX ? id : undefined;
}

function readText(text: string | null, max: number): string | undefined {
  return text !== null && text !== '' && [...text].length <= max ? text : undefined;
}

export function readPlantsQuery(params: URLSearchParams): PlantsQuery {
  const sizeNumber = Number(params.get('size'));
  const size = (PAGE_SIZES as readonly number[]).includes(sizeNumber) ? (sizeNumber as PageSize) : DEFAULT_PAGE_SIZE;
  const after = readId(params.get('after'));
  const before = readId(params.get('before'));
  const cursor: Cursor | undefined =
    params.get('page') === 'last'
      ? { kind: 'last' }
      : after !== undefined
        ? { kind: 'after', id: after }
        : before !== undefined
          ? { kind: 'before', id: before }
          : undefined;
  const key = params.get('sort');
  const sort: PlantSort = {
    key: (PLANT_SORT_KEYS as readonly string[]).includes(key ?? '') ? (key as PlantSortKey) : DEFAULT_SORT.key,
    dir: params.get('dir') === 'desc' ? 'desc' : 'asc',
  };
  return {
    sort,
    q: readText(params.get('q'), 200),
    tag: readText(params.get('tag'), 100),
    owner: readText(params.get('owner'), 64),
    size,
    cursor,
  };
}

export function plantsHref(query: PlantsQuery): string {
  const params = new URLSearchParams();
  if (query.q) params.set('q', query.q);
  if (query.tag) params.set('tag', query.tag);
  if (query.owner) params.set('owner', query.owner);
  if (query.sort.key !== DEFAULT_SORT.key) params.set('sort', query.sort.key);
  if (query.sort.dir !== 'asc') params.set('dir', query.sort.dir);
  if (query.size !== DEFAULT_PAGE_SIZE) params.set('size', String(query.size));
  if (query.cursor?.kind === 'last') params.set('page', 'last');
  else if (query.cursor) params.set(query.cursor.kind, query.cursor.id.toString());
  const search = params.toString();
  return search ? `/plants?${search}` : '/plants';
}

export function sameCursor(a: Cursor | undefined, b: Cursor | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  if (a.kind !== b.kind) return false;
  return a.kind === 'last' || a.id === (b as { id: bigint }).id;
}

export function hasFilters(query: PlantsQuery): boolean {
  return Boolean(query.q || query.tag || query.owner);
}
