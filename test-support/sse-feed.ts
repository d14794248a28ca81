/**
 * The live feed (`plants.changes`) read straight off the wire: one SSE connection over node:http, never
 * reconnected, so a test sees exactly when and how the server ended it (tRPC's client and EventSource would
 * reconnect and hide that). Each event is kept with its SSE name, id and data (superjson, ids as bigint), and
 * the time it arrived.
 */
import http from 'node:http';

import superjson from 'superjson';

export type FeedEvent = { event: string; id?: string; data: unknown; at: number };

export type OpenFeed = {
  events: FeedEvent[];
  /** The HTTP status of the answer, once its head arrived. */
  status: Promise<number>;
  /** Settles when the `live` event (a new stream) or the first event (a resumed one) has arrived. */
  ready: Promise<void>;
  /** Settles when the server ended the connection: how (a clean end of the body, or a reset) and when. */
  ended: Promise<{ at: number; how: 'end' | 'reset' }>;
  /** The data events (`created`, `updated`, `deleted`, `resync`) as they arrived, without `live` and pings. */
  changes: () => FeedEvent[];
  close: () => void;
};

export function openFeed(baseUrl: string, token: string, options: { lastEventId?: string; rawInput?: string } = {}): OpenFeed {
  const input = options.rawInput ?? (options.lastEventId === undefined ? undefined : JSON.stringify({ json: { lastEventId: options.lastEventId } }));
  const url = new URL(`${baseUrl}/api/trpc/plants.changes`);
  if (input !== undefined) url.searchParams.set('input', input);
  const events: FeedEvent[] = [];
  let settleStatus!: (status: number) => void;
  let settleReady!: () => void;
  let settleEnded!: (ending: { at: number; how: 'end' | 'reset' }) => void;
  const status = new Promise<number>((resolve) => (settleStatus = resolve));
  const ready = new Promise<void>((resolve) => (settleReady = resolve));
  const ended = new Promise<{ at: number; how: 'end' | 'reset' }>((resolve) => (settleEnded = resolve));
  let closedByUs = false;

  const request = http.get(url, { headers: { Authorization: `Bearer ${token}`, Accept: 'text/event-stream' }, agent: false }, (response) => {
    settleStatus(response.statusCode ?? 0);
    let buffer = '';
    response.setEncoding('utf8');
    response.on('data', (chunk: string) => {
      buffer += chunk;
      for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const fields: Record<string, string> = {};
        for (const line of block.split('\n')) {
          const colon = line.indexOf(':');
          if (colon > 0) fields[line.slice(0, colon)] = line.slice(colon + 1).replace(/^ /, '');
        }
        if (fields.data === undefined && fields.event === undefined) continue;
        let data: unknown = fields.data;
        try {
          const parsed = JSON.parse(fields.data ?? 'null') as unknown;
          data = parsed !== null && typeof parsed === 'object' && 'json' in parsed ? superjson.deserialize(parsed as never) : parsed;
        } catch {
          // Left as text.
        }
        const event: FeedEvent = { event: fields.event ?? 'message', id: fields.id, data, at: Date.now() };
        events.push(event);
        const kind = (data as { kind?: string } | null)?.kind;
        if (kind === 'live' || (options.lastEventId !== undefined && event.event === 'message') || event.event === 'serialized-error') settleReady();
      }
    });
    response.on('end', () => settleEnded({ at: Date.now(), how: 'end' }));
    response.on('error', () => settleEnded({ at: Date.now(), how: 'reset' }));
    response.on('close', () => {
      if (!response.complete) settleEnded({ at: Date.now(), how: 'reset' });
      settleReady();
    });
  });
  request.on('error', () => {
    if (!closedByUs) settleEnded({ at: Date.now(), how: 'reset' });
    settleStatus(0);
    settleReady();
  });

  return {
    events,
    status,
    ready,
    ended,
    changes: () => events.filter((event) => event.event === 'message' && (event.data as { kind?: string } | null)?.kind !== 'live'),
    close: () => {
      closedByUs = true;
      request.destroy();
    },
  };
}
