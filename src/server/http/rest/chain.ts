import type { ServerResponse } from 'node:http';

import type { AnyTRPCRouter } from '@trpc/server';

import { operationStarted, problemFromError } from '@/server/problems';
import { createProcedureCaller } from '@/server/trpc/call';
import { type Context, contextFor } from '@/server/trpc/init';
import { bodyUnits } from '@/shared/limits';

import { type Authenticate, requireToken } from '../guards/auth';
import { readBody } from '../guards/body';
import type { WaitForTurn } from '../guards/work-queue';
import { type FrontRequest, notUtf8Refusal, noteCharged, parameterNotUtf8 } from '../request';
import { jsonReply, problemReply, type Reply, refuse } from '../reply';

import { entityTag, noneMatch } from './conditional';
import { keptAnswers } from './kept-answers';
import { checkContentType } from './content-type';
import { type CorsOrigins, preflightHeaders } from './cors';
import { stringifyExactJson } from './exact-json';
import { type Answered, answerOnce, IDEMPOTENCY_KEY_HEADER, readIdempotencyKey } from './idempotency';
import { placeProblem } from './door-errors';
import { restInput } from './input';
import { parseAbsentBody, parseJsonObject } from './json-body';
import { nextPageLink } from './paging-link';
import { buildRouteTable } from './routing';

export const API_BASE_PATH = '/api';
const JSON_TYPES = ['application/json'];
const PATCH_TYPES = ['application/merge-patch+json', 'application/json'];
const CSV_TYPES = ['text/csv'];

/** A `text/csv` body as its operation's one body field: UTF-8 text, as every body is. */
function textBody(bytes: Buffer, field: string): Record<string, string> {
  try {
    return { [field]: new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes) };
  } catch {
    throw refuse('invalidCsv', 'the body is not UTF-8 text: save the file as UTF-8 ("CSV UTF-8" in a spreadsheet)');
  }
}

/**
 * The REST door: routes from the procedures' OpenAPI metadata (the document trpc-to-openapi writes from the
 * same metadata), each calling its procedure directly. It knows the contract's wire rules and nothing about
 * plants, in the order a request meets them: the route (404), the method (405 with `Allow`; OPTIONS answers
 * it), the token (401, or 429 from the shared guard) before any body is read, the content type (415), the
 * body (413, 408; none where the operation declares none), its turn among the requests being worked on, the
 * JSON (400), a 304 where the procedure is `conditional` and the client has the answer, the procedure (once
 * per Idempotency-Key where the operation declares one), and the answer (exact int64, 204 for no result,
 * `ETag` where conditional, `Link` for the next page, `{error, message}` for every failure).
 */
/**
 * A conditional answer may be kept, but only by the client (`private`: it depends on the token) and only
 * after asking again (`no-cache`), which is what makes `If-None-Match` worth sending (docs/contract.md).
 */
const CONDITIONAL_CACHE_CONTROL = 'private, no-cache';

/** A conditional answer: its 200 with the body, or the 304 (null) with the headers the 200 carries. */
function conditionalReply(json: string | null, etag: string, link: string): Reply {
  return jsonReply(json === null ? 304 : 200, json, { ETag: etag, 'Cache-Control': CONDITIONAL_CACHE_CONTROL, ...(link ? { Link: link } : {}) });
}

/** The version a conditional procedure read for its answer, asked for with `versionWanted` (trpc/init.ts). */
function handedBackVersion(hints: Context['responseHints']): string {
  // Not a version read now: one read after the answer's rows could name a change the answer lacks (a stale 304 later).
  if (hints.version === undefined) throw new Error('a conditional procedure answered without the version it read (responseHints.version)');
  return hints.version;
}

export function createRestChain(options: { router: AnyTRPCRouter; authenticate: Authenticate; waitForTurn: WaitForTurn; publicUrl: string | undefined; cors: CorsOrigins }) {
  const { router, authenticate, waitForTurn, publicUrl, cors } = options;
  const match = buildRouteTable(router, API_BASE_PATH);
  const callProcedure = createProcedureCaller(router);
  const answers = keptAnswers();

  return async function answerRest(request: FrontRequest, response: ServerResponse): Promise<Reply> {
    request.trace.door = 'rest';
    const { url } = request;
    const found = match(request.method, url.pathname);
    if (found.kind === 'wrongMethod') {
      const allow = { Allow: found.allowed };
      if (request.method !== 'OPTIONS') throw refuse('methodNotAllowed', `${request.method} is not allowed on ${url.pathname}; use ${found.allowed}`, allow);
      return jsonReply(204, null, { ...allow, ...preflightHeaders(request.raw, cors, found.allowed) });
    }
    const { route, pathValues } = found;

    // Authentication comes before the body is read, so an anonymous client cannot make the server read it.
    const auth = await authenticate(request);
    if (route.protect) requireToken(auth);
    if (auth.status === 'signedIn') noteCharged(request, 1);
    // What the procedure charges beyond the door's unit: an answer kept for its ETag is charged the same again.
    let charged = 0;
    const context = contextFor(auth, request.id, async (units) => {
      const refused = await authenticate.chargeMore(auth, units);
      if (!refused) {
        charged += units;
        noteCharged(request, units);
      }
      return refused;
    });
    // A query that takes the operation's input (GET, DELETE) is read exactly, or refused naming the parameter.
    const notUtf8 = route.method === 'GET' || route.method === 'DELETE' ? parameterNotUtf8(url, route.queryParameters) : undefined;
    if (notUtf8) throw notUtf8Refusal(notUtf8);
    // Where the operation declares Idempotency-Key: a malformed key is refused before the body is read.
    const idempotencyKey = route.requestHeaders.includes(IDEMPOTENCY_KEY_HEADER) ? readIdempotencyKey(request.raw) : undefined;

    // A conditional GET's ETag names the caller's version of the data: known at once where the process keeps it
    // (SQLite; PostgreSQL while it hears every commit: plants/versions.ts), else a read to run (below).
    const versionOf = route.conditional;
    const conditional = versionOf !== undefined && auth.status === 'signedIn' && route.method === 'GET';
    const version = conditional ? versionOf(auth.actor) : undefined;
    const ifNoneMatch = conditional && request.raw.headers['if-none-match'] !== undefined;
    // A version known at once gives the ETag now, and an answer this process gave under it is given again before
    // a turn in the work queue: a 304 where the client has it, else its kept 200 (kept-answers.ts), charged what
    // the procedure charged for it. Neither calls a procedure or sends a query, so they cost what the door's own
    // refusals cost; a version that needs a query waits for its turn below, like every call. Whether the ETag's
    // answer was given before is noted: its body is kept only when it is asked for a second time.
    let askedBefore = false;
    const answerKept = async (etag: string): Promise<Reply | undefined> => {
      const kept = answers.get(url.pathname, etag);
      if (kept === undefined) return undefined;
      askedBefore = true;
      if (noneMatch(request.raw, etag)) return conditionalReply(null, etag, kept.link);
      if (kept.body === undefined || etag !== knownEtag) return undefined;
      const refused = await authenticate.chargeMore(auth, kept.units);
      if (refused) throw refuse('tooManyRequests', refused.message, refused.headers);
      noteCharged(request, kept.units);
      return conditionalReply(kept.body, etag, kept.link);
    };
    const knownInput = typeof version === 'string' ? restInput(route, url.searchParams, undefined, pathValues) : undefined;
    const knownEtag = typeof version === 'string' ? entityTag(route, version, knownInput) : undefined;
    const keptNow = knownEtag === undefined ? undefined : await answerKept(knownEtag);
    if (keptNow !== undefined) return keptNow;

    let bytes: Buffer | undefined;
    if (route.method === 'POST' || route.method === 'PUT' || route.method === 'PATCH') {
      // A write that declares no body (rotate a secret, send a test event) is called as declared: with none,
      // so its media type is checked only when something came.
      if (route.takesBody) checkContentType(request.raw.headers['content-type'], route.textBody ? CSV_TYPES : route.method === 'PATCH' ? PATCH_TYPES : JSON_TYPES);
      bytes = await readBody(request, response);
      await authenticate.chargeForBody(auth, bytes.byteLength);
      noteCharged(request, bodyUnits(bytes.byteLength));
    }
    // Parsing and the procedure are the work; reading the body was waiting (see work-queue.ts).
    await waitForTurn(1, response);
    const body =
      bytes &&
      (route.textBody ? textBody(bytes, route.textBody) : route.takesBody ? parseJsonObject(bytes) : parseAbsentBody(request, bytes, `${route.method} ${API_BASE_PATH}${route.template}`));
    // A path value cannot come in the body too (`{"id": …}` in a PATCH): the body would be silently overruled.
    const clash = body && route.pathParameters.find((name) => Object.hasOwn(body, name));
    if (clash) throw refuse('unknownField', `unknown field "${clash}": the ${clash} comes from the path and cannot be set in the body`);
    // A GET has no body: its input is the one the ETag was made from.
    const input = knownEtag === undefined ? restInput(route, url.searchParams, body, pathValues) : knownInput;
    // A conditional GET: the caller's version of the data is known or read first (before the procedure, so a
    // change between the two can only make the ETag older than the answer), and an answer the client already
    // has is a 304 without the procedure. It paid the one unit every request pays at the door; the rows it did
    // not read are not charged (docs/api.md, "Conditional lists"). A version that needs a query is read here
    // only for If-None-Match, which it may answer; for a plain 200 the procedure reads it with its rows (a
    // member's list: in the same statement, so no query of its own; plants/service.ts, listPlants).
    const etagFirst = knownEtag ?? (typeof version === 'function' && ifNoneMatch ? entityTag(route, await version(), input) : undefined);
    // A 304 carries the headers its 200 would (docs/contract.md, "1.2.0: conditional lists"), the next page's
    // Link included: remembered from the 200 this process answered with that ETag, or else made by running the
    // procedure after all (another instance served the 200, or it was forgotten). Looked up again after the
    // turn: another request may have answered the same ETag while this one waited.
    const known = etagFirst === undefined ? undefined : await answerKept(etagFirst);
    if (known !== undefined) return known;
    if (conditional && etagFirst === undefined) context.responseHints.versionWanted = true;
    const refusal = (error: unknown): Reply => {
      const problem = placeProblem(problemFromError(error, input), route);
      if (problem.kind === 'internal') throw error;
      return problemReply(problem, context.responseHints.headers);
    };
    /** A file the procedure makes as it is sent: read up to its first chunk here, so a failure before it is still a refusal. */
    const fileReply = async (file: AsyncIterable<string>, mediaType: string): Promise<Reply> => {
      const rest = file[Symbol.asyncIterator]();
      const head = () => ({ 'Content-Type': mediaType, 'Cache-Control': 'no-store', ...context.responseHints.headers });
      if (request.method === 'HEAD') {
        await rest.return?.();
        return { status: 200, headers: head(), body: null };
      }
      try {
        const first = await rest.next();
        return { status: 200, headers: head(), body: null, stream: { first, rest } };
      } catch (error) {
        return refusal(error);
      }
    };
    // A file's client may leave while it is made: that ends the procedure's stream.
    const clientLeft = route.file === undefined ? undefined : new AbortController();
    if (clientLeft) response.once('close', () => clientLeft.abort(new Error('the client went away')));
    const answer = async (): Promise<Answered> => {
      let result: unknown;
      try {
        result = await callProcedure(route.procedure, input, context, clientLeft?.signal);
      } catch (error) {
        return { reply: refusal(error), operationStarted: operationStarted(error) };
      }
      if (route.file !== undefined) return { reply: await fileReply(result as AsyncIterable<string>, route.file), operationStarted: true };
      if (result === undefined) return { reply: jsonReply(204, null), operationStarted: true };
      const { nextPageQuery } = context.responseHints;
      const json = stringifyExactJson(result);
      const link = nextPageQuery ? nextPageLink(url.pathname, nextPageQuery, publicUrl) : '';
      if (!conditional) return { reply: jsonReply(200, json, link ? { Link: link } : {}), operationStarted: true };
      const etag = etagFirst ?? entityTag(route, handedBackVersion(context.responseHints), input);
      // The body is kept only when no commit fell between the version the ETag names and the rows: the version,
      // read again now, is the one read before (versions only grow, so equal means unchanged). And only for an
      // answer asked for before: most queries are asked once (a page walked, a search typed), and keeping every
      // body costs each of them more than a kept one saves (docs/decisions/0013-kept-list-answers.md).
      const keep = askedBefore && knownEtag !== undefined && versionOf!(auth.actor) === version;
      answers.set(url.pathname, etag, { link, units: charged, ...(keep ? { body: json } : {}) });
      if (noneMatch(request.raw, etag)) return { reply: conditionalReply(null, etag, link), operationStarted: true };
      return { reply: conditionalReply(json, etag, link), operationStarted: true };
    };
    if (idempotencyKey === undefined || auth.status !== 'signedIn') return (await answer()).reply;
    return answerOnce({ userId: auth.actor.userId, key: idempotencyKey, operation: `${route.method} ${route.template}`, body }, answer);
  };
}
