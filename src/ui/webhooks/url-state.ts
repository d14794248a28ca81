import { DELIVERY_STATUSES } from '@/shared/webhooks';

/**
 * The webhooks view's state lives in its address, so a reload, Back and a shared link land on the same view:
 *
 *   /webhooks                                   the endpoints
 *   /webhooks?endpoint=3&state=failed&before=812 one endpoint and its delivery log (a state, an older page)
 *
 * Anything unreadable is ignored (the view falls back to its default), as in the plants view: an address is
 * not a form. `state` and `before` mean something only with an endpoint.
 */
export type DeliveryState = (typeof DELIVERY_STATUSES)[number];

export type WebhooksQuery = {
  endpoint?: number;
  state?: DeliveryState;
  /** The log's page: deliveries with a smaller id than this. */
  before?: number;
};

const INT32_MAX = 2 ** 31 - 1;

function readId(text: string | null): number | undefined {
  if (text === null || !/^[1-9]\d{0,9}$/.test(text)) return undefined;
  const id = Number(text);
  return id <= INT32_MAX ? id : undefined;
}

export function readWebhooksQuery(params: URLSearchParams): WebhooksQuery {
  const endpoint = readId(params.get('endpoint'));
  if (endpoint === undefined) return {};
  const state = params.get('state');
  return {
    endpoint,
    state: (DELIVERY_STATUSES as readonly string[]).includes(state ?? '') ? (state as DeliveryState) : undefined,
    before: readId(params.get('before')),
  };
}

export function webhooksHref(query: WebhooksQuery): string {
  if (query.endpoint === undefined) return '/webhooks';
  const params = new URLSearchParams({ endpoint: String(query.endpoint) });
  if (query.state) params.set('state', query.state);
  if (query.before !== undefined) params.set('before', String(query.before));
  return `/webhooks?${params.toString()}`;
}
