import type { IncomingMessage } from 'node:http';

import { describe, expect, it } from 'vitest';

import { addressGroup, createClientAddresses } from './client-address';

const request = (peer: string | undefined, forwardedFor?: string) =>
  ({ socket: { remoteAddress: peer }, connection: { remoteAddress: peer }, headers: forwardedFor === undefined ? {} : { 'x-forwarded-for': forwardedFor } }) as unknown as IncomingMessage;

describe('the client address', () => {
  it('is the peer when TRUST_PROXY is unset, whatever X-Forwarded-For says', () => {
    const addresses = createClientAddresses(null);
    expect(addresses.of(request('203.0.113.9', '1.2.3.4'))).toBe('203.0.113.9');
    expect(addresses.isTrustedProxy('127.0.0.1')).toBe(false);
  });

  it('is the right-most hop no trusted proxy stands for', () => {
    const addresses = createClientAddresses(['10.0.0.0/8', '192.0.2.7']);
    // Through two trusted proxies: what the outer one saw.
    expect(addresses.of(request('10.0.0.2', '198.51.100.1, 192.0.2.7'))).toBe('198.51.100.1');
    // A client cannot choose its address by writing the header: the proxy appends what it saw.
    expect(addresses.of(request('10.0.0.2', '1.1.1.1, 198.51.100.1'))).toBe('198.51.100.1');
    // A peer that is no proxy of ours is the client, whatever it sends.
    expect(addresses.of(request('198.51.100.66', '1.1.1.1'))).toBe('198.51.100.66');
    expect(addresses.of(request('10.0.0.2'))).toBe('10.0.0.2');
    // IPv4-mapped peers match IPv4 ranges.
    expect(addresses.isTrustedProxy('::ffff:10.1.2.3')).toBe(true);
    expect(addresses.isTrustedProxy('198.51.100.66')).toBe(false);
  });

  it('is "unknown" for a socket that has no address any more (closed before it was read), with or without the header', () => {
    for (const trustProxy of [null, ['10.0.0.0/8'], 'anyPeer' as const]) {
      const addresses = createClientAddresses(trustProxy);
      expect(addresses.of(request(undefined))).toBe('unknown');
    }
  });

  it('keeps the meaning of the deprecated TRUST_PROXY=1: any peer is one proxy', () => {
    const addresses = createClientAddresses('anyPeer');
    expect(addresses.of(request('198.51.100.66', '1.1.1.1, 2.2.2.2'))).toBe('2.2.2.2');
    expect(addresses.isTrustedProxy('198.51.100.66')).toBe(true);
  });
});

describe('the per-address key', () => {
  it('groups IPv6 by /64, IPv4-mapped IPv6 as IPv4, and leaves IPv4 and the rest alone', () => {
    expect(addressGroup('2001:db8:1:2:aaaa::1')).toBe('2001:db8:1:2::/64');
    expect(addressGroup('2001:db8:1:2:ffff:ffff:ffff:ffff')).toBe('2001:db8:1:2::/64');
    expect(addressGroup('2001:db8:1:3::1')).toBe('2001:db8:1:3::/64');
    expect(addressGroup('::1')).toBe('0:0:0:0::/64');
    expect(addressGroup('::ffff:192.0.2.1')).toBe('192.0.2.1');
    expect(addressGroup('192.0.2.1')).toBe('192.0.2.1');
    expect(addressGroup('unknown')).toBe('unknown');
  });
});
