import type { IncomingMessage } from 'node:http';

import { requestFingerprint } from '@/server/idempotency/fingerprint';
import { idempotencyKey } from '@/server/idempotency/key';
import { claimKey, completeKey, releaseKey } from '@/server/idempotency/store';

import { repeatedHeader } from '../request';
import { jsonReply, type Reply, refuse } from '../reply';

export const IDEMPOTENCY_KEY_HEADER = 'idempotency-key';
const ONE_HEADER = new Set([IDEMPOTENCY_KEY_HEADER]);

/**
 * `Idempotency-Key` (IETF draft "The Idempotency-Key HTTP Header Field") on the operations that declare
 * the header: undefined when the request has none; a 400 when it is malformed or sent twice (Node would
 * join two into one value that looks valid). The key is the value as sent, quotes included.
 */
export function readIdempotencyKey(raw: IncomingMessage): string | undefined {
  const value = raw.headers[IDEMPOTENCY_KEY_HEADER];
  if (value === undefined) return undefined;
  if (repeatedHeader(raw.rawHeaders, ONE_HEADER)) throw refuse('idempotencyKeyInvalid', 'the Idempotency-Key header must be sent once');
  if (typeof value !== 'string' || !idempotencyKey.safeParse(value).success) {
    throw refuse('idempotencyKeyInvalid', 'the Idempotency-Key header must be 1 to 255 printable ASCII characters');
  }
  return value;
}

/**
 * Carries a request out once per key and user. The first request with a key runs `answer` and its reply
 * (status and body) is kept for 24 hours; a retry with the same body gets that reply again with
 * `Idempotent-Replayed: true`; the same key with another body is a 422, and while the first is still being
 * carried out a 409. A server failure keeps nothing, so the retry runs again.
 */
export async function answerOnce(
  request: { userId: number; key: string; operation: string; body: unknown },
  answer: () => Promise<Reply>,
): Promise<Reply> {
  const ref = { userId: request.userId, key: request.key };
  const claim = await claimKey(ref, requestFingerprint(request.operation, request.body));
  if (claim.kind === 'replay') return jsonReply(claim.answer.status, claim.answer.body, { 'Idempotent-Replayed': 'true' });
  if (claim.kind === 'mismatch') {
    throw refuse('idempotencyKeyReused', 'this Idempotency-Key was already used with a different body; use a new key for a new request');
  }
  if (claim.kind === 'inFlight') {
    throw refuse('idempotencyKeyInFlight', 'a request with this Idempotency-Key is still being carried out; retry in a moment', { 'Retry-After': '1' });
  }
  let reply: Reply;
  try {
    reply = await answer();
  } catch (error) {
    await releaseKey(ref);
    throw error;
  }
  if (reply.status >= 500 || reply.body === null) await releaseKey(ref);
  else await completeKey(ref, { status: reply.status, body: reply.body.toString() });
  return reply;
}
