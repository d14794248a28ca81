import { describe, expect, it } from 'vitest';

import type { WebhookEndpoint } from '@/shared/webhooks';

import { EMPTY_ENDPOINT_FORM, endpointChanges, validateEndpointForm, webhookSentence } from './endpoint-form';

describe('the endpoint form', () => {
  it('says what is wrong, in the router’s words, for each field', () => {
    const result = validateEndpointForm({ url: '  ', events: [], enabled: true, description: 'tab\there' });
    expect(result).toEqual({
      ok: false,
      errors: { url: 'URL must not be empty.', events: 'Events must name at least one event type.', description: 'Description must not contain control characters.' },
    });
  });

  it('passes a good form on trimmed, leaving where the URL may point to the server', () => {
    expect(validateEndpointForm({ ...EMPTY_ENDPOINT_FORM, url: ' http://10.0.0.1/hook ' })).toEqual({
      ok: true,
      endpoint: { url: 'http://10.0.0.1/hook', events: ['plant.created', 'plant.deleted'], enabled: true, description: '' },
    });
  });

  it('writes the server’s clauses as sentences, keeping a scheme at the start as it is', () => {
    expect(webhookSentence('http:// is allowed only to a loopback address; 10.0.0.1 is not one: use https')).toBe(
      'http:// is allowed only to a loopback address; 10.0.0.1 is not one: use https.',
    );
    expect(webhookSentence('the webhook URL must use https://, not ftp:')).toBe('The webhook URL must use https://, not ftp:.');
  });

  it('sends only what changed', () => {
    const endpoint = {
      id: 1,
      url: 'https://example.com/a',
      events: ['plant.created', 'plant.deleted'],
      enabled: true,
      description: '',
      disabledReason: null,
      failingSince: null,
      createdAt: '2026-01-01T00:00:00.000Z',
      pending: 0,
      failed: 0,
    } satisfies WebhookEndpoint;
    expect(endpointChanges(endpoint, { url: 'https://example.com/a', events: ['plant.deleted', 'plant.created'], enabled: true, description: '' })).toEqual({});
    expect(endpointChanges(endpoint, { url: 'https://example.com/b', events: ['plant.deleted'], enabled: false, description: 'x' })).toEqual({
      url: 'https://example.com/b',
      events: ['plant.deleted'],
      enabled: false,
      description: 'x',
    });
  });
});
