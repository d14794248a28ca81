'use client';

import Link from 'next/link';

import { trpc } from '@/ui/trpc';

import { useNotices } from '../notices';
import { problemOf } from '../problems';
import type { ShownSecret } from './SecretPanel';
import { webhooksHref } from './url-state';

/**
 * What the webhooks view does to an endpoint (test event, new secret, delete, enable again), each saying
 * what came of it in a notice, and refreshing what it changed.
 */
export function useEndpointMutations(options: { shownEndpoint: number | undefined; onSecret: (secret: ShownSecret | null | ((shown: ShownSecret | null) => ShownSecret | null)) => void; onGone: () => void }) {
  const utils = trpc.useUtils();
  const notices = useNotices();
  const refresh = (id?: number) =>
    Promise.all([
      utils.webhooks.list.invalidate(),
      ...(id === undefined ? [] : [utils.webhooks.get.invalidate({ id }), utils.webhooks.deliveries.invalidate({ id }), utils.webhooks.backlog.invalidate({ id })]),
    ]);
  const failed = (what: string) => (error: unknown) => {
    const problem = problemOf(error);
    if (problem.status !== 401) notices.show({ kind: 'error', content: `${what}: ${problem.message}.` });
  };

  const sendTest = trpc.webhooks.sendTest.useMutation({
    onSuccess: (delivery) =>
      notices.show({
        kind: 'success',
        content: (
          <>
            A test event is on its way to endpoint {delivery.endpointId} (delivery {delivery.id}).
            {options.shownEndpoint === delivery.endpointId ? (
              ' Its outcome appears in the log below.'
            ) : (
              <>
                {' '}
                <Link href={webhooksHref({ endpoint: delivery.endpointId })}>See it in the delivery log</Link>.
              </>
            )}
          </>
        ),
      }),
    onError: (error, { id }) => failed(`No test event was sent to endpoint ${id}`)(error),
    onSettled: (_, __, { id }) => refresh(Number(id)),
  });

  const rotate = trpc.webhooks.rotateSecret.useMutation({
    onSuccess: (rotated, variables) => {
      const id = Number(variables.id);
      const endpoint = utils.webhooks.list.getData({})?.find((each) => each.id === id) ?? utils.webhooks.get.getData({ id });
      options.onSecret({ endpointId: id, url: endpoint?.url ?? '', secret: rotated.secret, previousValidUntil: rotated.previousValidUntil });
    },
    onError: (error, { id }) => failed(`The secret of endpoint ${id} was not rotated`)(error),
  });

  const remove = trpc.webhooks.delete.useMutation({
    onSuccess: (_, variables) => {
      const id = Number(variables.id);
      notices.show({ kind: 'info', content: `Endpoint ${id} is deleted, with its delivery log: nothing more is sent to it.` });
      // Its one-time panel must not go on offering a secret that signs nothing.
      options.onSecret((shown) => (shown?.endpointId === id ? null : shown));
      if (options.shownEndpoint === id) options.onGone();
    },
    onError: (error, { id }) => failed(`Endpoint ${id} was not deleted`)(error),
    onSettled: () => utils.webhooks.list.invalidate(),
  });

  const enable = trpc.webhooks.update.useMutation({
    onSuccess: (saved) => notices.show({ kind: 'success', content: `Endpoint ${saved.id} is enabled again: its waiting deliveries go out now.` }),
    onError: (error, { id }) => failed(`Endpoint ${id} was not enabled`)(error),
    onSettled: (_, __, { id }) => refresh(Number(id)),
  });

  return { sendTest, rotate, remove, enable };
}
