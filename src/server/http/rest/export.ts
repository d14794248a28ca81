import { once } from 'node:events';
import type { ServerResponse } from 'node:http';

import { createSchema } from 'zod-openapi';

import { holdStream } from '@/server/auth/held-streams';
import { claimExport, plantsCsv } from '@/server/plants/export';
import { problemFromError } from '@/server/problems';
import { AppError, type ErrorKind } from '@/shared/errors';
import { plantFilters } from '@/shared/plants';
import { exportPlantsInput, PLANT_SORT_KEYS } from '@/shared/plant-table';

import { type Authenticate, requireToken } from '../guards/auth';
import { type FrontRequest, notUtf8Refusal, noteCharged, notingCharges, parameterNotUtf8 } from '../request';
import { problemReply, type Reply, Refusal, refuse, writeReply } from '../reply';
import { cutOffWhenStalled } from '../stalled-stream';

export const EXPORT_PATH = '/api/plants/export';

/** What the export answers besides its file, from the catalogue (the document lists them per status, as for every operation). */
export const EXPORT_ERRORS: readonly ErrorKind[] = ['invalidQueryParameter', 'ownerFilterForAdmins', 'missingToken', 'invalidToken', 'tooManyRequests', 'internal'];

/**
 * `GET /api/plants/export`: the plants a list with the same filters would return, all of them, as a CSV file
 * (text/csv), in the order `sort` and `dir` ask for. Streamed in batches with the socket's backpressure, so
 * its memory does not grow with the store; charged to the token's bucket like a list of as many rows. Everything
 * before the first byte (route, token, parameters, a place to run) fails as the other operations do, with
 * the contract's JSON error; a failure after it can only cut the file short, so the connection is reset
 * rather than ended, and a client cannot mistake a partial file for a whole one.
 *
 * A separate path rather than content negotiation on the list: the list pages (`limit`, `Link`), the export
 * does not. Kept apart from the REST chain, which only knows JSON procedures.
 *
 * What it holds is bounded (plants/export.ts): a place among the open exports (one per token), a turn at the
 * database only while a batch is read, and the connection only while its client keeps reading (`stallMs`). It
 * is cut off, like a failure after the first byte, once its token no longer allows it (revoked, expired,
 * deleted, or speaking for someone else: auth/held-streams.ts), on whichever instance that was decided.
 */
export function createExportRoute(options: { authenticate: Authenticate; stallMs: number }) {
  return async function serveExport(request: FrontRequest, response: ServerResponse): Promise<Reply | null> {
    request.trace.door = 'rest';
    const allow = { Allow: 'GET, HEAD, OPTIONS' };
    if (request.method === 'OPTIONS') return { status: 204, headers: allow, body: null };
    if (request.method !== 'GET' && request.method !== 'HEAD') throw refuse('methodNotAllowed', `${request.method} is not allowed on ${EXPORT_PATH}; use GET`, allow);
    const auth = await options.authenticate(request);
    requireToken(auth);
    if (auth.status !== 'signedIn') return null;
    noteCharged(request, 1);

    const params = request.url.searchParams;
    const notUtf8 = parameterNotUtf8(request.url, ['q', 'tag', 'owner', 'sort', 'dir']);
    if (notUtf8) throw notUtf8Refusal(notUtf8);
    for (const name of ['q', 'tag', 'owner', 'sort', 'dir']) {
      if (params.getAll(name).length > 1) throw refuse('invalidQueryParameter', `${name} is given more than once`);
    }
    const sortKey = params.get('sort');
    if (sortKey !== null && !(PLANT_SORT_KEYS as readonly string[]).includes(sortKey)) throw refuse('invalidQueryParameter', `sort must be one of ${PLANT_SORT_KEYS.join(', ')}`);
    const dir = params.get('dir') ?? 'asc';
    if (dir !== 'asc' && dir !== 'desc') throw refuse('invalidQueryParameter', 'dir must be asc or desc');
    const parsed = exportPlantsInput.safeParse({
      ...Object.fromEntries(['q', 'tag', 'owner'].flatMap((name) => (params.has(name) ? [[name, params.get(name)]] : []))),
      ...(sortKey === null ? {} : { sort: { key: sortKey, dir } }),
    });
    if (!parsed.success) throw refuse('invalidQueryParameter', parsed.error.issues[0]?.message ?? 'a query parameter is not valid');
    const { q, tag, owner, sort } = parsed.data;
    if (owner !== undefined && auth.actor.role !== 'admin') {
      throw new Refusal({ kind: 'ownerFilterForAdmins', message: 'owner is a filter for admins: as a member you see only your own plants' });
    }

    const day = new Date().toISOString().slice(0, 10);
    const headers = {
      'Content-Type': 'text/csv; charset=utf-8; header=present',
      'Content-Disposition': `attachment; filename="plants-${day}.csv"`,
      'Cache-Control': 'no-store',
    };
    if (request.method === 'HEAD') return { status: 200, headers, body: null };

    let release: () => void;
    try {
      release = claimExport(String(auth.tokenId));
    } catch (error) {
      if (error instanceof AppError) return problemReply({ kind: error.kind, message: error.message }, { 'Retry-After': '5' });
      throw error;
    }
    const aborted = new AbortController();
    const onClose = () => aborted.abort(new Error('the client went away'));
    response.once('close', onClose);
    const unhold = holdStream({
      tokenId: auth.tokenId,
      actor: auth.actor,
      end: () => {
        aborted.abort(new Error("the token's access ended"));
        // Before the first byte the abort answers it; after it, the file is cut short.
        if (response.headersSent) response.destroy();
      },
    });
    const rows = plantsCsv(auth.actor, notingCharges(request, (units) => options.authenticate.chargeMore(auth, units)), { q, tag, owner, sort }, aborted.signal);
    try {
      // The first chunk (the header line) comes after the checks a query can fail, so a failure there is
      // still a proper answer.
      const first = await rows.next();
      response.writeHead(200, headers);
      cutOffWhenStalled(response, options.stallMs);
      if (!first.done) response.write(first.value);
      for await (const chunk of rows) {
        if (aborted.signal.aborted) break;
        if (!response.write(chunk)) await Promise.race([once(response, 'drain'), once(response, 'close')]);
      }
      response.end();
    } catch (error) {
      if (!response.headersSent) {
        const problem = problemFromError(error, undefined);
        if (problem.kind === 'internal') throw error;
        writeReply(response, problemReply(problem));
      } else {
        response.destroy(error instanceof Error ? error : undefined);
      }
    } finally {
      response.off('close', onClose);
      unhold();
      release();
    }
    return null;
  };
}

/** A filter as the list's query parameter of the same name is written: from the same zod schema. */
function filterParameter(name: keyof typeof plantFilters) {
  const inner = plantFilters[name].unwrap();
  return { name, in: 'query', required: false, description: inner.meta()?.description, schema: createSchema(inner, { io: 'input' }).schema };
}

/** The operation as the OpenAPI document lists it (merged in by http/rest/openapi.ts). */
export const exportOperationDocument = {
  get: {
    operationId: 'exportPlants',
    tags: ['plants'],
    summary: 'Every plant you have access to, as a CSV file',
    description:
      'The plants `GET /plants` would list with the same filters, all of them, in one CSV file (RFC 4180: a UTF-8 byte order mark, a header line, CRLF line ends; ids exact; text that a spreadsheet would run as a formula starts with an apostrophe). Admins get the owner and creation time too. Streamed; charged to the token at 1,000 rows per batch, and one export per token runs at a time.',
    security: [{ bearerAuth: [] }],
    parameters: [
      filterParameter('q'),
      filterParameter('tag'),
      filterParameter('owner'),
      { name: 'sort', in: 'query', required: false, description: 'The order; ties go by id. Default: id.', schema: { type: 'string', enum: [...PLANT_SORT_KEYS] } },
      { name: 'dir', in: 'query', required: false, description: 'asc (default) or desc.', schema: { type: 'string', enum: ['asc', 'desc'] } },
    ],
    responses: {
      '200': {
        description: 'The CSV file: `id,name,tag` (members) or `id,name,tag,owner,created` (admins)',
        headers: {
          'Content-Disposition': {
            description: '`attachment; filename="plants-YYYY-MM-DD.csv"`',
            schema: { type: 'string', maxLength: 64, pattern: '^attachment; filename="plants-\\d{4}-\\d{2}-\\d{2}\\.csv"$' },
          },
        },
        content: { 'text/csv': { schema: { type: 'string' } } },
      },
    },
  },
};
