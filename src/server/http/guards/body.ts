import type { ServerResponse } from 'node:http';

import { BODY_IDLE_TIMEOUT_MS, BODY_LIMIT_BYTES, BODY_TOTAL_TIMEOUT_MS } from '@/shared/limits';

import type { FrontRequest } from '../request';
import { refuse } from '../reply';

export type BodyLimits = { limit: number; idleMs: number; totalMs: number };
const DEFAULT_LIMITS: BodyLimits = { limit: BODY_LIMIT_BYTES, idleMs: BODY_IDLE_TIMEOUT_MS, totalMs: BODY_TOTAL_TIMEOUT_MS };

const tooLarge = (limit: number) => refuse('bodyTooLarge', `the body must be at most ${limit} bytes`);

/**
 * A body in a content coding (`Content-Encoding: gzip`, …) would be read as if it were plain JSON: refused
 * with 415 as RFC 9110 (15.5.16) says, and `Accept-Encoding: identity` tells what is taken.
 */
function refuseContentCoding(request: FrontRequest): void {
  const coding = request.raw.headers['content-encoding']?.trim().toLowerCase();
  if (coding && coding !== 'identity') {
    throw refuse('unsupportedMediaType', `the body must not be encoded; Content-Encoding: ${coding.slice(0, 40)} is not supported`, { 'Accept-Encoding': 'identity' });
  }
}

/** Whether the client waits for `100 Continue` before it sends the body (RFC 9110, 10.1.1). */
const awaitsContinue = (request: FrontRequest) => request.raw.httpVersion === '1.1' && /\b100-continue\b/i.test(String(request.raw.headers.expect ?? ''));

/**
 * Reads a request body, at most `limit` bytes of it: a huge body costs the server BODY_LIMIT_BYTES, not its size.
 * A declared Content-Length over the limit, or a content coding, is refused before a byte is read; a
 * client that sent `Expect: 100-continue` is invited to send only now, once everything before the body
 * (route, token, rate limits, media type) has said yes. Stalls and trickles are cut off with 408. Throws a
 * Refusal; the caller's door renders it. A refusal leaves the rest of the body unread, and the server
 * closes the connection after the answer (connection.ts).
 */
export function readBody(request: FrontRequest, response: ServerResponse, limits: BodyLimits = DEFAULT_LIMITS): Promise<Buffer> {
  const { raw } = request;
  refuseContentCoding(request);
  const declared = Number(raw.headers['content-length'] ?? 0);
  if (declared > limits.limit) return Promise.reject(tooLarge(limits.limit));
  if (awaitsContinue(request) && !response.headersSent) response.writeContinue();
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const idle = setTimeout(() => give(refuse('bodyTimeout', `no part of the body arrived for ${limits.idleMs / 1000} seconds`)), limits.idleMs);
    const total = setTimeout(
      () => give(refuse('bodyTimeout', `the body did not arrive within ${limits.totalMs / 1000} seconds`)),
      limits.totalMs,
    );
    const finish = () => {
      clearTimeout(idle);
      clearTimeout(total);
      raw.off('data', onData).off('end', onEnd).off('error', onError).off('aborted', onError);
    };
    const give = (refusal: Error) => {
      finish();
      // Nothing more is read: the answer goes out, then the connection closes (connection.ts).
      raw.pause();
      reject(refusal);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.byteLength;
      if (size > limits.limit) return give(tooLarge(limits.limit));
      chunks.push(chunk);
      idle.refresh();
    };
    const onEnd = () => {
      finish();
      resolve(Buffer.concat(chunks, size));
    };
    // The client went away: nobody is left to answer; the caller's write goes nowhere.
    const onError = () => {
      finish();
      reject(refuse('bodyTimeout', 'the client closed the connection before the body arrived'));
    };
    raw.on('data', onData).once('end', onEnd).once('error', onError).once('aborted', onError);
  });
}

/** The body as text, which both doors require to be UTF-8. */
export function decodeUtf8(body: Buffer): string {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(body);
  } catch {
    throw refuse('invalidJson', 'the body is not valid UTF-8');
  }
}
