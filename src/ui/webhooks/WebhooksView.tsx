'use client';

import { ArrowLeft, Plus } from 'lucide-react';
import Link from 'next/link';
import { useRouter, useSearchParams } from 'next/navigation';
import { Suspense, useEffect, useMemo, useRef, useState } from 'react';

import type { WebhookEndpoint } from '@/shared/webhooks';

import { ConfirmDialog } from '../ConfirmDialog';
import { takeHeadingFocus } from '../focus';
import { useNotices } from '../notices';
import { useSession } from '../session';
import { UserText } from '../UserText';
import type { EndpointActionHandlers } from './EndpointActions';
import { EndpointDetail } from './EndpointDetail';
import { EndpointDialog } from './EndpointDialog';
import { EndpointList } from './EndpointList';
import { SecretPanel, type ShownSecret } from './SecretPanel';
import { readWebhooksQuery, webhooksHref, type WebhooksQuery } from './url-state';
import { useEndpointMutations } from './useEndpointMutations';

/** The webhooks view, for admins: endpoints, and one endpoint's delivery log at /webhooks?endpoint=ID. */
export function WebhooksView() {
  const { user } = useSession();
  if (user?.role !== 'admin') {
    return (
      <section aria-labelledby="webhooks-title">
        <h1 id="webhooks-title">Webhooks</h1>
        <p className="notice notice--info">Only admins manage webhooks. Ask an admin if a program of yours should hear about changes to plants.</p>
      </section>
    );
  }
  // Its address holds its state (url-state.ts); reading it needs a Suspense boundary in a static export.
  return (
    <Suspense
      fallback={
        <p className="placeholder" role="status">
          <span className="spinner" aria-hidden="true" /> Loading webhooks…
        </p>
      }
    >
      <WebhooksAdmin />
    </Suspense>
  );
}

type Dialog =
  | { kind: 'add' }
  | { kind: 'edit'; endpoint: WebhookEndpoint }
  | { kind: 'delete'; endpoint: WebhookEndpoint }
  | { kind: 'rotate'; endpoint: WebhookEndpoint }
  | null;

const count = new Intl.NumberFormat();

function WebhooksAdmin() {
  const router = useRouter();
  const searchParams = useSearchParams();
  const query = useMemo(() => readWebhooksQuery(new URLSearchParams(searchParams.toString())), [searchParams]);
  const go = (next: WebhooksQuery, how: 'push' | 'replace' = 'push') => router[how](webhooksHref(next), { scroll: false });
  const headingRef = useRef<HTMLHeadingElement>(null);
  const notices = useNotices();

  const [dialog, setDialog] = useState<Dialog>(null);
  const [secret, setSecret] = useState<ShownSecret | null>(null);

  useEffect(() => takeHeadingFocus(headingRef.current), []);
  // Between the list and an endpoint's log the view changes under the cursor: it goes to the new heading.
  const shownEndpoint = useRef(query.endpoint);
  useEffect(() => {
    if (shownEndpoint.current !== query.endpoint) headingRef.current?.focus();
    shownEndpoint.current = query.endpoint;
  }, [query.endpoint]);
  // What the address says that the view cannot show leaves it, as in the plants view.
  useEffect(() => {
    const search = searchParams.toString();
    const shown = webhooksHref(query);
    if (`/webhooks${search ? `?${search}` : ''}` !== shown) router.replace(shown, { scroll: false });
  }, [searchParams, query, router]);

  const mutations = useEndpointMutations({ shownEndpoint: query.endpoint, onSecret: setSecret, onGone: () => go({}, 'replace') });
  const actions: EndpointActionHandlers = {
    onTest: (endpoint) => mutations.sendTest.mutate({ id: endpoint.id }),
    onEdit: (endpoint) => setDialog({ kind: 'edit', endpoint }),
    onRotate: (endpoint) => setDialog({ kind: 'rotate', endpoint }),
    onDelete: (endpoint) => setDialog({ kind: 'delete', endpoint }),
    testing: mutations.sendTest.isPending && mutations.sendTest.variables ? Number(mutations.sendTest.variables.id) : undefined,
  };

  return (
    <section className="webhooks stack" aria-labelledby="webhooks-title">
      {query.endpoint === undefined ? (
        <div className="view-head">
          <div>
            <h1 id="webhooks-title" ref={headingRef} tabIndex={-1}>
              Webhooks
            </h1>
            <p>Programs hear of new and deleted plants: each event is POSTed, signed, to the endpoints that want it.</p>
          </div>
          <button type="button" className="button button--primary" onClick={() => setDialog({ kind: 'add' })}>
            <Plus className="icon" aria-hidden="true" />
            Add endpoint
          </button>
        </div>
      ) : (
        <div className="view-head">
          <div>
            <Link href="/webhooks" className="back-link">
              <ArrowLeft className="icon" aria-hidden="true" />
              All endpoints
            </Link>
            <h1 id="webhooks-title" ref={headingRef} tabIndex={-1}>
              Endpoint {query.endpoint}
            </h1>
          </div>
        </div>
      )}

      {secret ? <SecretPanel key={secret.secret} shown={secret} onDone={() => setSecret(null)} /> : null}

      {query.endpoint === undefined ? (
        <EndpointList actions={actions} onAdd={() => setDialog({ kind: 'add' })} />
      ) : (
        <EndpointDetail id={query.endpoint} query={query} go={go} actions={actions} onEnable={(endpoint) => mutations.enable.mutate({ id: endpoint.id, enabled: true })} />
      )}

      {dialog?.kind === 'add' ? (
        <EndpointDialog
          mode="add"
          onCancel={() => setDialog(null)}
          onCreated={(created) => {
            setDialog(null);
            setSecret({ endpointId: created.id, url: created.url, secret: created.secret });
          }}
        />
      ) : null}
      {dialog?.kind === 'edit' ? (
        <EndpointDialog
          mode="edit"
          endpoint={dialog.endpoint}
          onCancel={() => setDialog(null)}
          onSaved={(saved) => {
            setDialog(null);
            notices.show(saved ? { kind: 'success', content: `Endpoint ${saved.id} is saved.` } : { kind: 'info', content: `Nothing was changed in endpoint ${dialog.endpoint.id}.` });
          }}
        />
      ) : null}
      {dialog?.kind === 'delete' ? (
        <ConfirmDialog
          title="Delete this endpoint?"
          confirmLabel="Delete endpoint"
          onConfirm={() => {
            const { endpoint } = dialog;
            setDialog(null);
            mutations.remove.mutate({ id: endpoint.id });
            // The row loses its buttons: the cursor goes to the view's heading, not to nowhere.
            headingRef.current?.focus();
          }}
          onCancel={() => setDialog(null)}
        >
          <p>
            Endpoint {dialog.endpoint.id} (<UserText>{dialog.endpoint.url}</UserText>) and its delivery log are deleted
            {dialog.endpoint.pending > 0 ? `; the ${count.format(dialog.endpoint.pending)} deliveries waiting for it are dropped` : ''}. Nothing more is sent to
            it. This cannot be undone.
          </p>
        </ConfirmDialog>
      ) : null}
      {dialog?.kind === 'rotate' ? (
        <ConfirmDialog
          title="Rotate the signing secret?"
          confirmLabel="Rotate secret"
          onConfirm={() => {
            const { endpoint } = dialog;
            setDialog(null);
            mutations.rotate.mutate({ id: endpoint.id });
          }}
          onCancel={() => setDialog(null)}
        >
          <p>
            Endpoint {dialog.endpoint.id} (<UserText>{dialog.endpoint.url}</UserText>) gets a new signing secret, shown once. For 24 hours deliveries carry
            signatures with both the new and the current secret, so the receiver can switch over; after that only the new one signs.
          </p>
        </ConfirmDialog>
      ) : null}
    </section>
  );
}
