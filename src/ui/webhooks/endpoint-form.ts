import '../zod-browser';

import { createWebhookEndpointInput, type WebhookEndpoint, type WebhookEventType } from '@/shared/webhooks';

import { asSentence } from '../problems';

export type EndpointFormValues = { url: string; events: WebhookEventType[]; enabled: boolean; description: string };
export type EndpointField = 'url' | 'events' | 'description';
export type EndpointFormErrors = Partial<Record<EndpointField, string>>;

export const ENDPOINT_FIELDS: readonly EndpointField[] = ['url', 'events', 'description'];

export const EMPTY_ENDPOINT_FORM: EndpointFormValues = { url: '', events: ['plant.created', 'plant.deleted'], enabled: true, description: '' };

export function endpointFormValues(endpoint: WebhookEndpoint): EndpointFormValues {
  return { url: endpoint.url, events: [...endpoint.events], enabled: endpoint.enabled, description: endpoint.description };
}

/**
 * The router's clauses as sentences, as the other views show them, with two words kept as they are written:
 * "url" is the URL, and a message that starts with a scheme ("http:// is allowed only to …") keeps it lower-case.
 */
export function webhookSentence(message: string): string {
  const text = message.trim().replace(/^url\b/, 'URL');
  if (!/^[a-z][a-z0-9+.-]*:\/\//.test(text)) return asSentence(text);
  return /[.!?]$/.test(text) ? text : `${text}.`;
}

type Valid = { url: string; events: WebhookEventType[]; enabled: boolean; description: string };

/**
 * Checks the form with the router's own schema (`createWebhookEndpointInput`), so the page and both doors
 * of the API agree on every rule and word. Where a URL may point (https, no private addresses) is the
 * server's to say: it resolves the host, which a page cannot. Returns the first message of each field.
 */
export function validateEndpointForm(values: EndpointFormValues): { ok: true; endpoint: Valid } | { ok: false; errors: EndpointFormErrors } {
  const result = createWebhookEndpointInput.safeParse({
    url: values.url,
    // In the order the schema's enum gives, whatever order the boxes were ticked in.
    events: values.events,
    enabled: values.enabled,
    description: values.description,
  });
  if (result.success) {
    return { ok: true, endpoint: { url: result.data.url, events: result.data.events, enabled: result.data.enabled ?? true, description: result.data.description ?? '' } };
  }
  const errors: EndpointFormErrors = {};
  for (const issue of result.error.issues) {
    const field = issue.path[0];
    if (typeof field === 'string' && (ENDPOINT_FIELDS as readonly string[]).includes(field) && !errors[field as EndpointField]) {
      errors[field as EndpointField] = webhookSentence(issue.message);
    }
  }
  return { ok: false, errors };
}

/** Only what changed, for `webhooks.update`; an empty object when nothing did. */
export function endpointChanges(endpoint: WebhookEndpoint, valid: Valid): Partial<Valid> {
  const changes: Partial<Valid> = {};
  if (valid.url !== endpoint.url) changes.url = valid.url;
  if ([...valid.events].sort().join() !== [...endpoint.events].sort().join()) changes.events = valid.events;
  if (valid.enabled !== endpoint.enabled) changes.enabled = valid.enabled;
  if (valid.description !== endpoint.description) changes.description = valid.description;
  return changes;
}
