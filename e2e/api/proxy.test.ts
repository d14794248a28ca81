/**
 * TRUST_PROXY: which peers' X-Forwarded-For is believed, and what the per-address limits key on.
 * The trusted proxy is 127.0.0.2 and a client reaching the server directly is 127.0.0.3 (all of 127/8 is
 * this machine), so one server shows both sides.
 */
import http from 'node:http';
import net from 'node:net';

import { afterAll, describe, expect, it } from 'vitest';

import { type RunningServer, startServer } from '@test-support/server-process';

const PROXY = '127.0.0.2';
const DIRECT = '127.0.0.3';
const PER_ADDRESS = 4;
const FAILURE_BURST = 5;

/** A request with a bad token from `localAddress`, with the X-Forwarded-For given; resolves to its status. */
function badToken(server: RunningServer, localAddress: string, forwardedFor?: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { authorization: `Bearer pst_${'Z'.repeat(43)}` };
    if (forwardedFor !== undefined) headers['x-forwarded-for'] = forwardedFor;
    const request = http.request(`${server.baseUrl}/api/plants`, { localAddress, headers, agent: false, timeout: 10_000 }, (response) => {
      response.resume();
      response.on('end', () => resolve(response.statusCode!));
    });
    request.on('error', reject);
    request.end();
  });
}

const statuses = async (count: number, send: (index: number) => Promise<number>) => {
  const seen: number[] = [];
  for (let index = 0; index < count; index++) seen.push(await send(index));
  return seen;
};

/** Opens `count` idle connections from `localAddress`; resolves to how many the server left open after a moment. */
async function openIdle(server: RunningServer, localAddress: string, count: number): Promise<{ open: number; sockets: net.Socket[] }> {
  const port = Number(new URL(server.baseUrl).port);
  const sockets = await Promise.all(
    Array.from({ length: count }, () => new Promise<net.Socket>((resolve) => {
      const socket = net.connect({ host: '127.0.0.1', port, localAddress }, () => resolve(socket));
      socket.on('error', () => {});
    })),
  );
  await new Promise((resolve) => setTimeout(resolve, 300));
  return { open: sockets.filter((socket) => !socket.destroyed && !socket.readableEnded).length, sockets };
}

describe('TRUST_PROXY naming the proxy (127.0.0.2)', () => {
  let server: RunningServer;
  afterAll(() => server?.stop());

  it('starts', async () => {
    server = await startServer({ env: { TRUST_PROXY: PROXY, RATE_LIMIT_AUTH_FAILURES: `${FAILURE_BURST}/0.01`, MAX_CONNECTIONS_PER_ADDRESS: String(PER_ADDRESS) } });
  });

  it('ignores X-Forwarded-For from a peer that is not a trusted proxy: bad tokens with a rotating header meet the limit', async () => {
    const seen = await statuses(FAILURE_BURST + 3, (index) => badToken(server, DIRECT, `198.51.100.${index + 1}`));
    expect(seen).toEqual([...Array<number>(FAILURE_BURST).fill(401), 429, 429, 429]);
  });

  it('takes the right-most hop the trusted proxy reports as the client, whatever the client wrote to its left', async () => {
    // Each client behind the proxy has its own bucket.
    expect(await statuses(FAILURE_BURST + 1, (index) => badToken(server, PROXY, `203.0.113.${index + 1}`))).toEqual(Array(FAILURE_BURST + 1).fill(401));
    // One client cannot escape its bucket by writing addresses of its own to the left of the proxy's entry.
    const seen = await statuses(FAILURE_BURST + 2, (index) => badToken(server, PROXY, `10.9.9.${index}, 203.0.113.77`));
    expect(seen).toEqual([...Array<number>(FAILURE_BURST).fill(401), 429, 429]);
  });

  it('keys IPv6 clients by their /64, and IPv4-mapped IPv6 as IPv4', async () => {
    const sameNetwork = await statuses(FAILURE_BURST + 2, (index) => badToken(server, PROXY, `2001:db8:1:2::${(index + 1).toString(16)}`));
    expect(sameNetwork).toEqual([...Array<number>(FAILURE_BURST).fill(401), 429, 429]);
    expect(await badToken(server, PROXY, '2001:db8:1:2:ffff:ffff:ffff:ffff')).toBe(429);
    expect(await badToken(server, PROXY, '2001:db8:1:3::1')).toBe(401);
    expect(await statuses(FAILURE_BURST, () => badToken(server, PROXY, '198.51.100.200'))).toEqual(Array(FAILURE_BURST).fill(401));
    expect(await badToken(server, PROXY, '::ffff:198.51.100.200')).toBe(429);
  });

  it('limits the connections of a direct peer, and leaves the trusted proxy’s alone', async () => {
    const direct = await openIdle(server, DIRECT, PER_ADDRESS + 3);
    const proxied = await openIdle(server, PROXY, PER_ADDRESS + 3);
    try {
      expect(direct.open, 'connections a direct peer keeps').toBe(PER_ADDRESS);
      expect(proxied.open, 'connections the trusted proxy keeps').toBe(PER_ADDRESS + 3);
    } finally {
      for (const socket of [...direct.sockets, ...proxied.sockets]) socket.destroy();
    }
  });
});

describe('the deprecated TRUST_PROXY=1', () => {
  let server: RunningServer;
  afterAll(() => server?.stop());

  it('keeps its meaning (any peer is one proxy, the last entry is the client) and warns at start', async () => {
    server = await startServer({ env: { TRUST_PROXY: '1', RATE_LIMIT_AUTH_FAILURES: `${FAILURE_BURST}/0.01` } });
    expect(server.log()).toMatch(/TRUST_PROXY=1 is deprecated: it believes X-Forwarded-For from any peer/);
    expect(await statuses(FAILURE_BURST + 1, (index) => badToken(server, DIRECT, `198.51.100.${index + 1}`))).toEqual(Array(FAILURE_BURST + 1).fill(401));
  });
});
