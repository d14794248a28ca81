import type { IncomingMessage } from 'node:http';

import { requestFingerprint } from '@/server/idempotency/fingerprint';
import { idempotencyKey } from '@/server/idempotency/key';
import { claimKey, completeKey, releaseKey } from '@/server/idempotency/store';
import { IDEMPOTENCY_ANSWER_MAX_BYTES } from '@/shared/limits';

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

/** A reply, and whether the operation behind it started (a refusal by the input's check did not). */
export type Answered = { reply: Reply; operationStarted: boolean };

/**
 * Only what a retry must see again is kept, as Stripe does: the answer of an operation that started. A
 * request refused before its operation ran (the body failed validation) keeps nothing and is safe to retry,
 * and neither does a server failure, so the retry runs again; nor an answer too large to keep, which no
 * operation that takes a key writes.
 */
function worthKeeping({ reply, operationStarted }: Answered): boolean {
  return operationStarted && reply.status < 500 && reply.body !== null && Buffer.byteLength(reply.body) <= IDEMPOTENCY_ANSWER_MAX_BYTES;
}

/**
 * Carries a request out once per key and user. The first request with a key runs `answer`; if its
 * operation started, the reply (status and body) is kept for 24 hours; a retry with the same body gets that
 * reply again with `Idempotent-Replayed: true`; the same key with another body is a 422, and while the first
 * is still being carried out a 409.
 */
export async function answerOnce(
  request: { userId: number; key: string; operation: string; body: unknown },
  answer: () => Promise<Answered>,
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
  let answered: Answered;
  try {
    answered = await answer();
  } catch (error) {
    await releaseKey(ref);
    throw error;
  }
  const { reply } = answered;
  if (worthKeeping(answered)) await completeKey(ref, { status: reply.status, body: reply.body!.toString() });
  else await releaseKey(ref);
  return reply;
}
