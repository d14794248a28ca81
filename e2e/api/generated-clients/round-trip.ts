/**
 * The round trip every generated client makes (generated-clients.test.ts): each adapter drives its own
 * client, compiled under `tsc --strict` against the types generated from the served document, through
 * these calls. Plain checks that throw, so the file runs in the client's folder with no test runner.
 */

/** Compile-time: `true` only when T and U are the same type (not merely assignable either way). */
export type Exactly<T, U> = [T] extends [U] ? ([U] extends [T] ? true : false) : false;

export type ErrorBody = { error: number; message: string };
export type PlantOut = { id: unknown; name: string; tag?: string };
export type Answer = { plant: PlantOut } | { status: number; error: ErrorBody };

/** One generated client, as the round trip sees it. */
export type RoundTripClient = {
  create: (plant: { id: bigint; name: string; tag?: string }) => Promise<Answer>;
  /** A page, and the next page's query from the `Link` header (undefined on the last page). */
  list: (query: { limit: number; after?: bigint }) => Promise<{ plants: PlantOut[]; next: URLSearchParams | undefined }>;
  /** A JSON merge patch. */
  patch: (id: bigint, patch: { name?: string; tag?: string | null }) => Promise<Answer>;
  remove: (id: bigint) => Promise<{ deleted: true } | { status: number; error: ErrorBody }>;
};

export const INT64_MIN = -(2n ** 63n);
export const INT64_MAX = 2n ** 63n - 1n;
export const IDS = [9007199254740993n, INT64_MIN, INT64_MAX] as const;

function check(condition: boolean, what: string): asserts condition {
  if (!condition) throw new Error(what);
}

const show = (value: unknown) => `${typeof value} ${String(value)}`;

/** The very id: a bigint, or a number only where a double holds it exactly. */
function checkId(actual: unknown, expected: bigint, where: string): void {
  const exact = typeof actual === 'bigint' ? actual === expected : typeof actual === 'number' && Number.isSafeInteger(actual) && BigInt(actual) === expected;
  check(exact, `${where}: the id came back as ${show(actual)}, not ${expected}`);
}

function plantOf(answer: Answer, where: string): PlantOut {
  check('plant' in answer, `${where}: ${JSON.stringify(answer, (_, value) => (typeof value === 'bigint' ? `${value}n` : value))}`);
  return answer.plant;
}

function checkError(answer: Answer | Awaited<ReturnType<RoundTripClient['remove']>>, status: number, error: number, where: string): void {
  check('error' in answer, `${where}: expected ${status} with error ${error}, got a success`);
  check(answer.status === status && answer.error.error === error, `${where}: expected ${status}/${error}, got ${answer.status}/${answer.error.error}`);
  check(typeof answer.error.message === 'string' && answer.error.message.length > 0, `${where}: no message`);
}

/** Create, list by following `Link`, patch, delete; the API's errors read as {error, message}. */
export async function roundTrip(client: RoundTripClient): Promise<void> {
  for (const id of IDS) {
    const created = plantOf(await client.create({ id, name: `plant ${id}`, tag: 'exact' }), `create ${id}`);
    checkId(created.id, id, `create ${id}`);
    check(created.name === `plant ${id}` && created.tag === 'exact', `create ${id}: ${created.name} / ${created.tag}`);
  }
  checkError(await client.create({ id: IDS[0], name: 'again' }), 400, 40006, 'a second create of the same id');

  const listed: unknown[] = [];
  let query: { limit: number; after?: bigint } | undefined = { limit: 1 };
  while (query) {
    const page = await client.list(query);
    check(page.plants.length <= 1, `a page of limit 1 holds ${page.plants.length}`);
    listed.push(...page.plants.map((plant) => plant.id));
    const after = page.next?.get('after');
    query = page.next && after ? { limit: Number(page.next.get('limit')), after: BigInt(after) } : undefined;
    check(listed.length <= IDS.length, 'the Link header never ends');
  }
  const ascending = [...IDS].sort((a, b) => (a < b ? -1 : 1));
  check(listed.length === ascending.length, `listed ${listed.length} plants, not ${ascending.length}`);
  listed.forEach((id, index) => checkId(id, ascending[index]!, `list, page ${index + 1}`));

  for (const id of IDS) {
    const renamed = plantOf(await client.patch(id, { name: `renamed ${id}`, tag: null }), `patch ${id}`);
    checkId(renamed.id, id, `patch ${id}`);
    check(renamed.name === `renamed ${id}` && renamed.tag === undefined, `patch ${id}: ${renamed.name} / ${renamed.tag}`);
  }
  checkError(await client.patch(IDS[0], {}), 400, 40020, 'an empty patch');

  for (const id of IDS) {
    const removed = await client.remove(id);
    check('deleted' in removed, `delete ${id}: ${JSON.stringify(removed)}`);
    checkError(await client.remove(id), 404, 40401, `a second delete of ${id}`);
  }
  const after = await client.list({ limit: 10 });
  check(after.plants.length === 0 && after.next === undefined, `${after.plants.length} plants left`);
}
