/**
 * The sending thread's entry (a worker_threads thread; thread-handle.ts starts it). It sends the batches
 * the main thread hands it, each on this thread's own event loop, so an endpoint's next request goes out
 * as soon as the last is answered instead of waiting for a turn of the main loop, which under a flood of
 * creates answers a create on every busy connection first. The database stays on the main thread: it
 * reads the batches and writes down what comes back. Many endpoints' batches run here at once.
 */
import { parentPort } from 'node:worker_threads';

import { sendBatch } from './batch-in-order';
import type { ToThread } from './thread-messages';

const port = parentPort!;
const shutdown = new AbortController();
const finishing = new AbortController();
/** Batches being sent, each with its own stop (its sender lost the endpoint's lease). */
const cancels = new Map<number, AbortController>();

port.on('message', (message: ToThread) => {
  if (message.kind === 'finish') return finishing.abort();
  if (message.kind === 'abort') return shutdown.abort();
  if (message.kind === 'cancel') return cancels.get(message.id)?.abort();
  const { id, batch } = message;
  const cancel = new AbortController();
  cancels.set(id, cancel);
  sendBatch(batch, { signal: shutdown.signal, finishing: AbortSignal.any([finishing.signal, cancel.signal]), onSlow: () => port.postMessage({ kind: 'slow', id }) })
    .then(
      (sent) => port.postMessage({ kind: 'sent', id, sent }),
      (error: unknown) => port.postMessage({ kind: 'failed', id, error: error instanceof Error ? error.message : String(error) }),
    )
    .finally(() => cancels.delete(id));
});
