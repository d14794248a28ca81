'use client';

import { trpc } from '@/ui/trpc';

import { useNotices } from '../notices';
import { problemOf } from '../problems';

const count = new Intl.NumberFormat();

/**
 * "Retry now", saying what it did: the delivery is due at once, but an endpoint gets its events in order,
 * so it goes out after the older ones waiting for the same endpoint; the notice says how many those are.
 */
export function useRetry(endpointId: number) {
  const utils = trpc.useUtils();
  const notices = useNotices();
  const retry = trpc.webhooks.retry.useMutation({
    onSuccess: async (delivery) => {
      const { ahead, oldest } = await utils.webhooks.backlog.fetch({ id: endpointId, deliveryId: delivery.id });
      const first = oldest[0];
      notices.show({
        kind: 'info',
        content:
          ahead === 0 || ahead === null
            ? `Delivery ${delivery.id} is due now and first in line: it goes out at the next attempt (attempts so far: ${delivery.attempts}).`
            : `Delivery ${delivery.id} is due now: it goes out after the ${count.format(ahead)} older ${ahead === 1 ? 'delivery' : 'deliveries'} waiting for this endpoint${first ? `, the oldest being #${first.id}` : ''}.`,
      });
    },
    onError: (error, { id }) => {
      const problem = problemOf(error);
      if (problem.status !== 401) notices.show({ kind: 'error', content: `Delivery ${id} was not retried: ${problem.message}.` });
    },
    onSettled: () =>
      Promise.all([utils.webhooks.deliveries.invalidate({ id: endpointId }), utils.webhooks.get.invalidate({ id: endpointId }), utils.webhooks.backlog.invalidate({ id: endpointId }), utils.webhooks.list.invalidate()]),
  });
  return { run: (id: number) => retry.mutate({ id }), pending: retry.isPending && retry.variables ? Number(retry.variables.id) : undefined };
}

export type Retry = ReturnType<typeof useRetry>;
