/**
 * Scale: one member owning 10k … 10M plants. Per size: list limit=20 (first page, and the page after the
 * plant at 90 %), create and delete, each one request at a time (the cost of one request: p50/p99 over N)
 * and at N connections (req/s, p99), app and floor; the database's size on disk. Then the name search and
 * the admin page's counts (app only, one at a time): `plants.page` (rows, total and position in one call)
 * for searches that match one plant in 12, one in 144, one plant and none, one and two characters (many
 * matches, a few and none), a plant's digits, the tag and owner filters, and the REST list's search.
 */
import type { Context } from '../lib/context';
import { DELETE_BASE, nameOf, RARE_CHARACTER, RARE_NAMES } from '../lib/data';
import { createBody, freshListPaths, type OneRequest, sequentialLatency, type Workload } from '../lib/load';
import { fetchAgain, type Server, watchLoopStalls } from '../lib/proc';
import { fixed, int, mb, table } from '../lib/report';
import { createToken } from '../lib/servers';

type Operation = { label: string; workload: Workload; query?: string; expected: number };

export async function scalePhase(ctx: Context): Promise<void> {
  const { options, data } = ctx;
  const servers = [ctx.app, ...(ctx.floor ? [ctx.floor] : [])];
  // Back to the seeded plants only: what the A/B phase created is removed.
  await data.deleteUnseeded();
  console.log(
    `\n## Scale (${options.engine}): list first and deep page, create, delete; ${options.sequentialRequests} requests one at a time and ${options.scaleSeconds} s at ${options.connections} connections each`,
  );
  const rows: (string | number)[][] = [];
  const sizes: { plants: number; seedSeconds: number; stalledSeconds: number; bytes: number; what: string }[] = [];
  const runs: Record<string, unknown>[] = [];
  ctx.results.scale = { engine: options.engine, seconds: options.scaleSeconds, sequentialRequests: options.sequentialRequests, sizes, runs };
  let sequentialPool = DELETE_BASE + 2n ** 59n;
  const adminToken = createToken(ctx.checkout, ctx.databaseUrl, 'bench-admin', 'admin');
  const searchRows: (string | number)[][] = [];
  const searchRuns: Record<string, unknown>[] = [];

  for (const plants of options.scales) {
    const seedStart = performance.now();
    const stalls = watchLoopStalls();
    let lastPrint = seedStart;
    let added: number;
    let stalledSeconds = 0;
    try {
      added = await data.seedUpTo(ctx.memberId, plants, (done, of) => {
        if (performance.now() - lastPrint > 5_000 || done === of) {
          lastPrint = performance.now();
          console.log(`  seeding: ${int(done)} of ${int(of)} rows (${fixed((performance.now() - seedStart) / 1000, 1)} s)`);
        }
      });
    } finally {
      stalledSeconds = stalls.stop();
    }
    const seedSeconds = (performance.now() - seedStart) / 1000;
    const size = await data.size();
    sizes.push({ plants, seedSeconds: Math.round(seedSeconds * 10) / 10, stalledSeconds: Math.round(stalledSeconds * 10) / 10, bytes: size.bytes, what: size.what });
    console.log(
      `${int(plants)} plants (${int(added)} added in ${fixed(seedSeconds, 1)} s, the bench's event loop stalled ${fixed(stalledSeconds, 1)} s at most); database ${mb(size.bytes)} MB (${size.what})`,
    );
    // A stall past the servers' keep-alive timeout leaves the bench's pooled sockets closed under it; past a
    // minute their servers' ends are gone and the sockets reset (EPIPE on the next request). The seeding turns
    // the loop between batches (bench/lib/data.ts); a stall this long means it no longer does.
    if (stalledSeconds > MAX_SEED_STALL_SECONDS) {
      ctx.failures.push(`scale ${plants}: seeding stalled the bench's event loop for ${fixed(stalledSeconds, 1)} s (more than ${MAX_SEED_STALL_SECONDS} s): seed in smaller batches`);
    }

    const deepQuery = `limit=20&after=${data.seededId(Math.floor(plants * 0.9))}`;
    const operations: Operation[] = [
      // Each list a query no recent one made (bench/lib/load.ts, listFresh): the query's cost at this size, not an
      // answer the app kept for its ETag.
      { label: 'list first', workload: 'listFresh', query: 'limit=20', expected: 200 },
      { label: 'list deep', workload: 'listFresh', query: deepQuery, expected: 200 },
      { label: 'create', workload: 'create', expected: 200 },
      { label: 'delete', workload: 'delete', expected: 204 },
    ];
    // Both servers answer the same pages (the floor is the contract's reference), as asked and as timed (fresh).
    const fresh = [freshListPaths('limit=20'), freshListPaths(deepQuery)];
    for (const path of [`${REST_LIST}limit=20`, `${REST_LIST}${deepQuery}`, ...fresh.flatMap((paths) => [paths.at(0), paths.at(99_999)])]) {
      const pages = await Promise.all(
        servers.map(async (server) => {
          const response = await fetchAgain(`${server.baseUrl}${path}`, { headers: { authorization: `Bearer ${ctx.token}` } });
          return { status: response.status, body: await response.text(), link: response.headers.get('link') };
        }),
      );
      const [first] = pages;
      if (!first || first.status !== 200 || (JSON.parse(first.body) as unknown[]).length !== 20 || !first.link || pages.some((page) => page.body !== first.body)) {
        throw new Error(`scale ${plants}, ${path}: the servers disagree or the page is not a full one with a next link`);
      }
    }
    for (const operation of operations) {
      for (const server of servers) {
        // A fresh kept-alive socket before the one-at-a-time requests (a create or delete is not sent twice).
        await (await fetchAgain(`${server.baseUrl}/api/health`)).arrayBuffer();
        const one = await oneAtATime(ctx, server, operation, () => sequentialPool);
        sequentialPool += 2n ** 32n;
        if (one.unexpected > 0) ctx.failures.push(`scale ${plants} ${operation.label}: ${server.name} answered ${one.unexpected} of the one-at-a-time requests with other than ${operation.expected}`);
        const record = await ctx.run(server, operation.workload, options.scaleSeconds, 0, operation.query);
        ctx.check(record, `scale ${plants} ${operation.label}`);
        ctx.line(record, `${int(plants)} ${operation.label}`);
        runs.push({ plants, operation: operation.label, sequential: one, ...record });
        rows.push([int(plants), operation.label, server.name, fixed(one.p50), fixed(one.p99), int(record.reqPerSec), fixed(record.latencyMs.p50), fixed(record.latencyMs.p99)]);
      }
    }
    // What create and the one-at-a-time deletes left behind goes, so the next size starts from seeded plants only.
    await data.deleteUnseeded();

    // A handful of plants whose names hold a character no seeded name has (RARE_NAMES): a one-character search
    // that matches a few plants, not all or none. Inserted for the searches and removed after them.
    await data.insertNamed(ctx.memberId, RARE_POOL, RARE_NAMES);
    for (const search of searches(plants)) {
      const token = search.admin ? adminToken : ctx.token;
      const answer = await (await fetchAgain(ctx.app.baseUrl + search.path, { headers: { authorization: `Bearer ${token}` } })).text();
      const shown = search.path.startsWith('/api/trpc/') ? countShown(answer) : `${(JSON.parse(answer) as unknown[]).length} rows`;
      // A REST search as a fresh query each time (a lowered `after`: the same matches), so it runs rather than
      // answers what the app kept for its ETag; the admin page's searches (tRPC) are never kept.
      const next = search.path.startsWith(REST_LIST) ? freshListPaths(search.path.slice(REST_LIST.length)) : () => search.path;
      const one = await sequentialLatency(ctx.app.baseUrl, token, SEARCH_REQUESTS, () => ({ method: 'GET', path: next() }), 200);
      if (one.unexpected > 0) ctx.failures.push(`scale ${plants} ${search.label}: ${one.unexpected} of ${SEARCH_REQUESTS} answers were not 200`);
      console.log(`${int(plants)} ${search.label.padEnd(44)} p50 ${fixed(one.p50).padStart(8)} ms  p99 ${fixed(one.p99).padStart(8)} ms  (${shown})`);
      searchRuns.push({ plants, label: search.label, path: search.path, shown, ...one });
      searchRows.push([int(plants), search.label, shown, fixed(one.p50), fixed(one.p99)]);
    }
    await data.deleteRange(RARE_POOL, RARE_POOL + BigInt(RARE_NAMES.length));
  }
  (ctx.results.scale as Record<string, unknown>).searches = searchRuns;

  const appRows = runs.filter((r) => r.server === 'app' && String(r.operation).startsWith('list')) as { sequential: { p50: number }; reqPerSec: number }[];
  const spread = (values: number[]) => Math.max(...values) / Math.min(...values);
  const flatness = {
    listSequentialP50Spread: Math.round(spread(appRows.map((r) => r.sequential.p50)) * 100) / 100,
    listReqPerSecSpread: Math.round(spread(appRows.map((r) => r.reqPerSec)) * 100) / 100,
  };
  ctx.results.scale = { ...(ctx.results.scale as object), flatness };
  ctx.report.push(
    `### Scale (${options.engine}): one member owning all plants; deep page = after the plant at 90 %`,
    '',
    table(
      ['plants', 'seeded in s', "bench's loop stalled s (longest)", `database MB (${sizes[0]?.what ?? ''})`],
      sizes.map((size) => [int(size.plants), fixed(size.seedSeconds, 1), fixed(size.stalledSeconds, 1), mb(size.bytes)]),
      ['r', 'r', 'r', 'r'],
    ),
    '',
    table(
      ['plants', 'operation', 'server', '1-at-a-time p50 ms', '1-at-a-time p99 ms', `req/s @${options.connections}`, 'p50 ms', 'p99 ms'],
      rows,
      ['r', 'l', 'l', 'r', 'r', 'r', 'r', 'r'],
    ),
    '',
    `One at a time: ${options.sequentialRequests} requests in a row (fetch, keep-alive), p50/p99. At ${options.connections} connections: ${options.scaleSeconds} s, one run (not rounds: read`,
    `these for their shape across sizes, the A/B table for ratios). Created ids and delete pools sit above the seeded ids.`,
    `App lists across all sizes and pages: 1-at-a-time p50 varies ×${fixed(flatness.listSequentialP50Spread)}, req/s ×${fixed(flatness.listReqPerSecSpread)} (max/min; keyset paging is flat when these stay near 1).`,
    '',
    `### Scale (${options.engine}): name search and the admin page's counts, app, ${SEARCH_REQUESTS} requests one at a time`,
    '',
    table(['plants', 'request', 'answer', 'p50 ms', 'p99 ms'], searchRows, ['r', 'l', 'l', 'r', 'r']),
    '',
    'plants.page answers the rows, the total and the position in one call; counts stop at 10,000 ("10,000+"). Names are',
    '"<word> <word> <n>" from twelve plant words: the first search matches 1 plant in 12, the second 1 in 144. The',
    'member owns every plant; the owner filter is an admin\'s view of that member.',
    '',
  );
}

/**
 * The longest stall of the bench's loop a seeding may cause: well under the minute after which a server's
 * end of a closed connection is gone (Linux's tcp_fin_timeout), above a slow batch on a busy machine.
 */
const MAX_SEED_STALL_SECONDS = 30;

/** Requests per search and count, one at a time: the walks of the worst of them take seconds at 10 M. */
const SEARCH_REQUESTS = 30;
const REST_LIST = '/api/plants?';

type Search = { label: string; path: string; admin?: boolean };

/** The ids of the RARE_NAMES plants: below the one-at-a-time delete pools (DELETE_BASE + 2^59 + …). */
const RARE_POOL = DELETE_BASE + 2n ** 58n;

const pageOf = (input: Record<string, unknown>) => `/api/trpc/plants.page?input=${encodeURIComponent(JSON.stringify({ json: { size: 25, ...input } }))}`;

/** What the bench asks at each size (names: bench/lib/data.ts). */
function searches(plants: number): Search[] {
  const rare = nameOf(Math.floor(plants / 2)).toUpperCase();
  // The digits of the plant at 50 %: one plant at 10^k plants ("5000000" at 10 M: no other number below 10 M holds them).
  const digits = String(Math.floor(plants / 2));
  return [
    { label: 'page: search "orchid" (1 in 12)', path: pageOf({ q: 'orchid' }) },
    { label: 'page: search "orchid ivy" (1 in 144)', path: pageOf({ q: 'orchid ivy' }) },
    { label: `page: search "${rare}" (one plant)`, path: pageOf({ q: rare }) },
    { label: 'page: search "STRASSE" (Straße, 1 in 12)', path: pageOf({ q: 'STRASSE' }) },
    { label: 'page: search "zzz" (none)', path: pageOf({ q: 'zzz' }) },
    { label: 'page: search "o" (one character)', path: pageOf({ q: 'o' }) },
    { label: 'page: search "zq" (two characters, none)', path: pageOf({ q: 'zq' }) },
    { label: 'page: search "ж" (one character, none)', path: pageOf({ q: 'ж' }) },
    { label: `page: search "${RARE_CHARACTER}" (one character, ${RARE_NAMES.length} plants)`, path: pageOf({ q: RARE_CHARACTER }) },
    { label: `page: search "${digits}" (digits, one plant)`, path: pageOf({ q: digits }) },
    { label: 'page: search "vy" (two characters, 1 in 6)', path: pageOf({ q: 'vy' }) },
    { label: 'page: search "orchid", sorted by name', path: pageOf({ q: 'orchid', sort: { key: 'name', dir: 'asc' } }) },
    { label: 'page: no filter', path: pageOf({}) },
    { label: 'page: tag "tropical" (1 in 4)', path: pageOf({ tag: 'tropical' }) },
    { label: 'page: owner "bench" (admin)', path: pageOf({ owner: 'bench' }), admin: true },
    { label: 'page: last page, tag "tropical"', path: pageOf({ tag: 'tropical', cursor: { kind: 'last' } }) },
    { label: 'REST list: q=orchid ivy, limit=20', path: `/api/plants?limit=20&q=${encodeURIComponent('orchid ivy')}` },
    { label: `REST list: q=${rare}, limit=20`, path: `/api/plants?limit=20&q=${encodeURIComponent(rare)}` },
    { label: 'REST list: q=zq, limit=20', path: '/api/plants?limit=20&q=zq' },
    { label: `REST list: q=${RARE_CHARACTER}, limit=20`, path: `/api/plants?limit=20&q=${RARE_CHARACTER}` },
    { label: `REST list: q=${digits}, limit=20`, path: `/api/plants?limit=20&q=${digits}` },
  ];
}

/**
 * "25 rows of 10,000+, after 0": what a plants.page answer shows; "…, walk stopped" when the page's walk of a
 * name order stopped at its budget before the page was full (the admin page then asks on from there).
 */
function countShown(body: string): string {
  type Shown = { rows: unknown[]; total: number; totalExact: boolean; offset: number; offsetExact: boolean; walkStopped?: unknown };
  const { json } = (JSON.parse(body) as { result: { data: { json: Shown } } }).result.data;
  const stopped = json.walkStopped ? ', walk stopped' : '';
  return `${json.rows.length} rows of ${int(json.total)}${json.totalExact ? '' : '+'}, after ${int(json.offset)}${json.offsetExact ? '' : '+'}${stopped}`;
}

/** The one-at-a-time half of a scale measurement; creates use fresh ids, deletes a pool inserted just before. */
async function oneAtATime(ctx: Context, server: Server, operation: Operation, poolBase: () => bigint) {
  const n = ctx.options.sequentialRequests;
  let next: (i: number) => OneRequest;
  if (operation.workload === 'create') {
    next = () => {
      const id = ctx.nextCreateId();
      return { method: 'POST', path: '/api/plants', body: createBody(id) };
    };
  } else if (operation.workload === 'delete') {
    const from = poolBase();
    await ctx.data.insertRange(ctx.memberId, from, n);
    next = (i) => ({ method: 'DELETE', path: `/api/plants/${from + BigInt(i)}` });
  } else {
    const paths = freshListPaths(operation.query ?? 'limit=20');
    next = () => ({ method: 'GET', path: paths() });
  }
  return sequentialLatency(server.baseUrl, ctx.token, n, next, operation.expected);
}
