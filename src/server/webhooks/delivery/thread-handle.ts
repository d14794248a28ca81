import { Worker } from 'node:worker_threads';

import type { Logger } from '@/server/log';

import type { BatchTransport } from './batch-transport';
import type { SentAttempt } from './batch-in-order';
import type { FromThread, ToThread } from './thread-messages';

/**
 * The sending thread as the worker sees it (thread-entry.ts is the thread itself). Started at the first
 * batch, so a server with no endpoint has no thread (and not its memory), and stopped once it has held no
 * batch for THREAD_IDLE_STOP_MS (the last endpoint deleted, or nothing due for a while); the next batch
 * starts a new one. If it dies (an error nothing caught, or it was terminated), the batches it held reject
 * (the worker backs off on those endpoints and sends them again: at least once) and the next batch starts a
 * new thread.
 */
export type SendingThread = BatchTransport & {
  /** The running thread, if any: tests terminate it to see delivery survive, and wait for its idle stop. */
  running: () => Worker | undefined;
};

/**
 * How long the thread may hold no batch before it is stopped, giving back its memory (decision 0011). A
 * start costs ~30 ms of CPU (a V8 isolate, its bundle loaded: 29–36 ms at load 7), so a minute keeps that
 * near 0.05 % of a core for an endpoint whose events trickle in just slower than that, while any steady
 * flow, and the worker's retries at their first steps (WEBHOOKS_RETRY_BASE_MS, 30 s), find it running.
 */
export const THREAD_IDLE_STOP_MS = 60_000;

/**
 * From the bundle (`npm start`): the thread's own bundle, which the build writes beside this chunk
 * (src/tooling/build.ts). From the sources (tests, `npm run dev`): the TypeScript entry through tsx's
 * API (Node 20 does not apply `--import` hooks to a thread's entry).
 */
function newThread(): Worker {
  if (!import.meta.url.endsWith('.ts')) return new Worker(new URL('./webhook-sender-thread.mjs', import.meta.url), { name: 'webhook sender' });
  const entry = new URL('./thread-entry.ts', import.meta.url).href;
  // Resolved from the working directory, the project's (where tests and `npm run dev` run).
  return new Worker(`import('tsx/esm/api').then(({ tsImport }) => tsImport(${JSON.stringify(entry)}, ${JSON.stringify(entry)}))`, { eval: true, name: 'webhook sender' });
}

type Waiting = { resolve: (sent: SentAttempt[]) => void; reject: (error: Error) => void; onSlow: () => void };

type Running = { worker: Worker; waiting: Map<number, Waiting>; idle?: NodeJS.Timeout };

export function sendingThread(log: Logger, options: { idleStopMs?: number } = {}): SendingThread {
  const idleStopMs = options.idleStopMs ?? THREAD_IDLE_STOP_MS;
  /** The thread, and the batches it holds: a thread that dies takes only its own batches with it. */
  let thread: Running | undefined;
  let finished = false;
  let aborted = false;
  let nextId = 1;

  /**
   * Stops the thread if it still holds no batch. Everything that hands a batch over or takes one back runs
   * on this thread, so the check and the stop are one step: a batch handed over before it went into this
   * thread (and cleared the timer); one handed over after it finds no thread and starts a new one. The
   * stopped thread holds nothing to lose, and an endpoint's next batch is only handed over once its last
   * one came back, so order holds across the stop.
   */
  function stopIfIdle(own: Running): void {
    if (thread !== own || own.waiting.size > 0) return;
    thread = undefined;
    log.info({ idleMs: idleStopMs }, 'webhook sending thread stopped: no batch to send for a while');
    void own.worker.terminate();
  }

  function start(): Running {
    const started = newThread();
    const own: Running = { worker: started, waiting: new Map<number, Waiting>() };
    const { waiting } = own;
    // The server's own handles keep the process alive; an idle thread must not (nor hold a test run open).
    started.unref();
    started.on('message', (message: FromThread) => {
      const batch = waiting.get(message.id);
      if (!batch) return;
      if (message.kind === 'slow') return batch.onSlow();
      waiting.delete(message.id);
      if (waiting.size === 0) {
        own.idle = setTimeout(() => stopIfIdle(own), idleStopMs);
        own.idle.unref();
      }
      if (message.kind === 'sent') batch.resolve(message.sent);
      else batch.reject(new Error(`the sending thread failed on a batch: ${message.error}`));
    });
    started.on('error', (error) => log.error({ err: error }, 'webhook sending thread failed'));
    started.on('exit', (code) => {
      clearTimeout(own.idle);
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
      // After finish() no attempt starts (as the thread itself would answer: nothing sent), also on a thread
      // started after an idle stop, which never heard the finish.
      if (finished || aborted || stop.aborted) return Promise.resolve([]);
      thread ??= start();
      clearTimeout(thread.idle);
      const id = nextId++;
      const { worker, waiting } = thread;
      const cancel = () => worker.postMessage({ kind: 'cancel', id } satisfies ToThread);
      stop.addEventListener('abort', cancel, { once: true });
      const sent = new Promise<SentAttempt[]>((resolve, reject) => waiting.set(id, { resolve, reject, onSlow }));
      worker.postMessage({ kind: 'send', id, batch } satisfies ToThread);
      return sent.finally(() => stop.removeEventListener('abort', cancel));
    },
    finish() {
      finished = true;
      thread?.worker.postMessage({ kind: 'finish' } satisfies ToThread);
    },
    abort() {
      aborted = true;
      thread?.worker.postMessage({ kind: 'abort' } satisfies ToThread);
    },
    async close() {
      const closing = thread;
      thread = undefined;
      clearTimeout(closing?.idle);
      await closing?.worker.terminate();
    },
    running: () => thread?.worker,
  };
}
