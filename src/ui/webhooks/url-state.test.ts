import { describe, expect, it } from 'vitest';

import { readWebhooksQuery, webhooksHref } from './url-state';

const read = (search: string) => readWebhooksQuery(new URLSearchParams(search));

describe('the webhooks view’s address', () => {
  it('reads the endpoint, the state filter and the page, and writes them back the same', () => {
    for (const href of ['/webhooks', '/webhooks?endpoint=3', '/webhooks?endpoint=3&state=failed', '/webhooks?endpoint=2147483647&state=pending&before=812']) {
      expect(webhooksHref(read(href.split('?')[1] ?? ''))).toBe(href);
    }
    expect(read('endpoint=7&state=delivered&before=20')).toEqual({ endpoint: 7, state: 'delivered', before: 20 });
  });

  it('ignores what it cannot read: ids that are not positive int32 digits, unknown states, a log without its endpoint', () => {
    for (const endpoint of ['0', '-1', '1e3', '01', '2147483648', 'abc', '']) expect(read(`endpoint=${endpoint}`)).toEqual({});
    expect(read('endpoint=4&state=lost&before=0')).toEqual({ endpoint: 4, state: undefined, before: undefined });
    expect(read('state=failed&before=9')).toEqual({});
  });
});
