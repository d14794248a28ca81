import type { ServerResponse } from 'node:http';

import { BODY_LIMIT_BYTES } from '@/shared/limits';

import type { FrontRequest } from '../request';
import { refuse } from '../reply';

/** A body that sends nothing for this long is given up (408), so slow clients cannot hold the server. */
export const BODY_IDLE_TIMEOUT_MS = 10_000;
/** A body that trickles (a byte every few seconds) is given up once this has passed since its first byte was awaited. */
export const BODY_TOTAL_TIMEOUT_MS = 30_000;

/** How long the rest of an abandoned body is read and thrown away before the connection is cut. */
const LINGER_MS = 2_000;

/**
 * The rest of an abandoned body (past 64 KiB, or stalled) may still be on its way, so the connection closes
 * after the answer. Closing a socket with unread data makes the kernel send a reset, which can erase the
 * answer before the client reads it (RFC 9112, 9.6); so the server half-closes, discards what still arrives
 * for a moment, and only then cuts the connection.
 */
function closeAfterAnswer(request: FrontRequest, response: ServerResponse): void {
  const { raw } = request;
  raw.removeAllListeners('data');
  raw.pause();
  response.setHeader('Connection', 'close');
  const socket = raw.socket;
  socket.destroySoon = function lingerThenDestroy() {
    this.end();
    raw.removeAllListeners('data');
    raw.resume();
    setTimeout(() => this.destroy(), LINGER_MS).unref();
  };
}

export type BodyLimits = { limit: number; idleMs: number; totalMs: number };
const DEFAULT_LIMITS: BodyLimits = { limit: BODY_LIMIT_BYTES, idleMs: BODY_IDLE_TIMEOUT_MS, totalMs: BODY_TOTAL_TIMEOUT_MS };

const tooLarge = (limit: number) => refuse('bodyTooLarge', `the body must be at most ${limit} bytes`);

/**
 * Reads a request body, at most `limit` bytes of it: a huge body costs the server 64 KiB, not its size.
 * A declared Content-Length over the limit is refused before a byte is read. Stalls and trickles are
 * cut off with 408. Throws a Refusal; the caller's door renders it.
 */
export function readBody(request: FrontRequest, response: ServerResponse, limits: BodyLimits = DEFAULT_LIMITS): Promise<Buffer> {
  const { raw } = request;
  const declared = Number(raw.headers['content-length'] ?? 0);
  if (declared > limits.limit) {
    closeAfterAnswer(request, response);
    return Promise.reject(tooLarge(limits.limit));
  }
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
      closeAfterAnswer(request, response);
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
