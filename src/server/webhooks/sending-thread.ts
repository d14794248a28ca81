import { Worker } from 'node:worker_threads';

import type { Logger } from '@/server/log';

import type { BatchTransport } from './batch-transport';
import type { SentAttempt } from './send-batch';
import type { FromThread, ToThread } from './thread-messages';

/**
 * The sending thread as the worker sees it (send-thread.ts is the thread itself). Started at the first
 * batch, so a server with no endpoint has no thread (and not its memory). If it dies (an error nothing
 * caught, or it was terminated), the batches it held reject (the worker backs off on those endpoints and
 * sends them again: at least once) and the next batch starts a new thread.
 */
export type SendingThread = BatchTransport & {
  /** The running thread, if any: tests terminate it to see delivery survive. */
  running: () => Worker | undefined;
};

/**
 * From the bundle (`npm start`): the thread's own bundle, which the build writes beside this chunk
 * (src/tooling/build.ts). From the sources (tests, `npm run dev`): the TypeScript entry through tsx's
 * API (Node 20 does not apply `--import` hooks to a thread's entry).
 */
function newThread(): Worker {
  if (!import.meta.url.endsWith('.ts')) return new Worker(new URL('./webhook-sender-thread.mjs', import.meta.url), { name: 'webhook sender' });
  const entry = new URL('./send-thread.ts', import.meta.url).href;
  // Resolved from the working directory, the project's (where tests and `npm run dev` run).
  return new Worker(`import('tsx/esm/api').then(({ tsImport }) => tsImport(${JSON.stringify(entry)}, ${JSON.stringify(entry)}))`, { eval: true, name: 'webhook sender' });
}

type Waiting = { resolve: (sent: SentAttempt[]) => void; reject: (error: Error) => void; onSlow: () => void };

export function sendingThread(log: Logger): SendingThread {
  /** The thread, and the batches it holds: a thread that dies takes only its own batches with it. */
  let thread: { worker: Worker; waiting: Map<number, Waiting> } | undefined;
  let aborted = false;
  let nextId = 1;

  function start(): { worker: Worker; waiting: Map<number, Waiting> } {
    const started = newThread();
    const waiting = new Map<number, Waiting>();
    const own = { worker: started, waiting };
    // The server's own handles keep the process alive; an idle thread must not (nor hold a test run open).
    started.unref();
    started.on('message', (message: FromThread) => {
      const batch = waiting.get(message.id);
      if (!batch) return;
      if (message.kind === 'slow') return batch.onSlow();
      waiting.delete(message.id);
      if (message.kind === 'sent') batch.resolve(message.sent);
      else batch.reject(new Error(`the sending thread failed on a batch: ${message.error}`));
    });
    started.on('error', (error) => log.error({ err: error }, 'webhook sending thread failed'));
    started.on('exit', (code) => {
      if (thread === own) thread = undefined;
      const lost = [...waiting.values()];
      waiting.clear();
      const error = new Error(`the webhook sending thread stopped (exit code ${code}) with batches in flight`);
      for (const batch of lost) batch.reject(error);
    });
    return own;
  }

  return {
    send(batch, { onSlow, stop }) {
      if (aborted || stop.aborted) return Promise.resolve([]);
      thread ??= start();
      const id = nextId++;
      const { worker, waiting } = thread;
      const cancel = () => worker.postMessage({ kind: 'cancel', id } satisfies ToThread);
      stop.addEventListener('abort', cancel, { once: true });
      const sent = new Promise<SentAttempt[]>((resolve, reject) => waiting.set(id, { resolve, reject, onSlow }));
      worker.postMessage({ kind: 'send', id, batch } satisfies ToThread);
      return sent.finally(() => stop.removeEventListener('abort', cancel));
    },
    finish() {
      thread?.worker.postMessage({ kind: 'finish' } satisfies ToThread);
    },
    abort() {
      aborted = true;
      thread?.worker.postMessage({ kind: 'abort' } satisfies ToThread);
    },
    async close() {
      const closing = thread;
      thread = undefined;
      await closing?.worker.terminate();
    },
    running: () => thread?.worker,
  };
}
