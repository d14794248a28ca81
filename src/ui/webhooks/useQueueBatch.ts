'use client';

import { useState } from 'react';

import { trpc } from '@/ui/trpc';

import { useNotices } from '../notices';
import { problemOf, waitingOutRateLimit } from '../problems';

/** What the queue's bulk actions do: every waiting delivery due now, every failed one again, or the waiting ones given up. */
export type QueueAction = 'retryWaiting' | 'retryFailed' | 'discard';

const count = new Intl.NumberFormat();
const plural = (n: number) => `${count.format(n)} ${n === 1 ? 'delivery' : 'deliveries'}`;
const DONE: Record<QueueAction, (n: number) => string> = {
  retryWaiting: (n) => `${plural(n)} waiting for this endpoint ${n === 1 ? 'is' : 'are'} due now: ${n === 1 ? 'it goes' : 'they go'} out oldest first.`,
  retryFailed: (n) => `${plural(n)} given up ${n === 1 ? 'is' : 'are'} waiting again, due now, oldest first.`,
  discard: (n) => `Discarded ${plural(n)}: marked failed, not sent. They can be retried from the log for 7 days.`,
};

/**
 * Runs a queue action over the whole queue, a batch of 500 a call (the server's DELIVERY_BATCH_MAX), oldest
 * first, waiting and going on when the token's rate limit asks for a moment (429), and says what it did.
 */
export function useQueueBatch(endpointId: number) {
  const utils = trpc.useUtils();
  const notices = useNotices();
  const [running, setRunning] = useState<QueueAction | null>(null);

  const call = (action: QueueAction, after: number | undefined) => {
    const input = { id: endpointId, ...(after === undefined ? {} : { after }) };
    return waitingOutRateLimit(() =>
      action === 'discard' ? utils.client.webhooks.discardWaiting.mutate(input) : utils.client.webhooks.retryAll.mutate({ ...input, state: action === 'retryWaiting' ? 'pending' : 'failed' }),
    );
  };

  async function run(action: QueueAction) {
    if (running) return;
    setRunning(action);
    let done = 0;
    try {
      let after: number | undefined;
      for (;;) {
        const batch = await call(action, after);
        done += batch.done;
        if (batch.nextAfter === null) break;
        after = batch.nextAfter;
        notices.show({ kind: 'info', key: `queue-${endpointId}`, content: `Working… ${plural(done)} so far.` });
      }
      notices.show({ kind: 'success', key: `queue-${endpointId}`, content: DONE[action](done) });
    } catch (error) {
      const problem = problemOf(error);
      if (problem.status !== 401) notices.show({ kind: 'error', key: `queue-${endpointId}`, content: `Stopped after ${plural(done)}: ${problem.message}.` });
    } finally {
      setRunning(null);
      await Promise.all([
        utils.webhooks.deliveries.invalidate({ id: endpointId }),
        utils.webhooks.get.invalidate({ id: endpointId }),
        utils.webhooks.backlog.invalidate({ id: endpointId }),
        utils.webhooks.list.invalidate(),
      ]);
    }
  }

  return { run, running };
}
