import { type BatchToSend, sendBatch, type SentAttempt } from './batch-in-order';
import type { Lookup } from '../ssrf';

/**
 * Where the worker's batches are sent from: the sending thread (thread-handle.ts, the server's), or this
 * thread (a test's lookup function cannot cross to another thread).
 */
export type BatchTransport = {
  /**
   * Sends a batch in order (batch-in-order.ts); rejects when the thread sending it failed (nothing in it is
   * known sent). `stop` aborted: no further attempt of this batch starts (its sender lost the lease).
   */
  send: (batch: BatchToSend, options: { onSlow: () => void; stop: AbortSignal }) => Promise<SentAttempt[]>;
  /** Starts no further attempt; the ones in flight finish (a shutdown). */
  finish: () => void;
  /** Cuts the attempts in flight short (a shutdown past its grace); batches sent later send nothing. */
  abort: () => void;
  /** Lets go of what it holds (the thread). */
  close: () => Promise<void>;
};

export function inThisThread(lookup?: Lookup): BatchTransport {
  const shutdown = new AbortController();
  const finishing = new AbortController();
  return {
    send: (batch, { onSlow, stop }) => sendBatch(batch, { signal: shutdown.signal, finishing: AbortSignal.any([finishing.signal, stop]), lookup, onSlow }),
    finish: () => finishing.abort(),
    abort: () => shutdown.abort(),
    close: async () => {},
  };
}
