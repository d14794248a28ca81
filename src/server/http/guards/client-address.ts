import type { IncomingMessage } from 'node:http';

import ipaddr from 'ipaddr.js';
import proxyaddr from 'proxy-addr';

import type { Config } from '@/server/config';

/**
 * Who a request comes from, as the per-address limits see it. With `TRUST_PROXY` naming the proxies
 * (addresses or CIDR ranges), `X-Forwarded-For` is read from the right, as Express's `trust proxy` and
 * nginx's `set_real_ip_from` read it: each hop is believed only while the one that reported it is a
 * trusted proxy, so the client is the right-most address no trusted proxy stands for. A peer that is not
 * a trusted proxy is the client, whatever header it sends. The deprecated `TRUST_PROXY=1` trusts any peer
 * as one proxy (the last entry is the client): only safe when nothing but the proxy can reach the server.
 */
export function createClientAddresses(trustProxy: Config['TRUST_PROXY']) {
  const trusted: (address: string, hop: number) => boolean =
    trustProxy === null ? () => false : trustProxy === 'anyPeer' ? (_address, hop) => hop === 0 : proxyaddr.compile(trustProxy);
  return {
    /**
     * The client's address: the socket's, or the right-most untrusted hop of `X-Forwarded-For`. Without that
     * header it is the peer (proxy-addr's answer then, whatever TRUST_PROXY says), which needs no call into
     * proxy-addr: no header parsed, no list of hops built, per request.
     */
    of: (request: IncomingMessage): string => {
      const peer = request.socket.remoteAddress;
      if (peer !== undefined && !request.headers['x-forwarded-for']) return peer;
      return proxyaddr(request, trusted) ?? peer ?? 'unknown';
    },
    /** Whether a peer is a proxy of ours: its connections are many clients', so no per-address limit applies to them. */
    isTrustedProxy: (address: string): boolean => trusted(address, 0),
  };
}

/**
 * The key of an address for the per-address limits (connections, failed authentications): an IPv4 address
 * as it is (also when written IPv4-mapped, `::ffff:192.0.2.1`), an IPv6 address by its /64. One customer
 * of an ISP gets a whole /64 (RFC 6177), so counting each of its 2^64 addresses apart would let one
 * client through any limit. Anything that is not an IP address is its own key.
 */
export function addressGroup(address: string): string {
  if (!ipaddr.isValid(address)) return address;
  let parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) parsed = (parsed as ipaddr.IPv6).toIPv4Address();
  if (parsed.kind() === 'ipv4') return parsed.toString();
  const prefix = (parsed as ipaddr.IPv6).parts.slice(0, 4).map((part) => part.toString(16));
  return `${prefix.join(':')}::/64`;
}
