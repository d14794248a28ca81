import { lookup as dnsLookup } from 'node:dns/promises';
import { isIP } from 'node:net';

import { WEBHOOK_URL_MAX_LENGTH } from '@/shared/limits';

/**
 * The SSRF guard: where a webhook may be sent. docs/contract.md, "1.1.0: webhooks": an https URL (http only to a loopback address,
 * and only with WEBHOOKS_ALLOW_HTTP=1); hosts that are, or resolve to, private, loopback or link-local
 * addresses are refused unless WEBHOOKS_ALLOW_PRIVATE=1. Addresses that are no destination at all
 * (unspecified, multicast, broadcast, documentation, reserved) are refused always.
 *
 * Checked when an endpoint is registered or changed, and again before every delivery against the
 * addresses the name resolves to then; the connection is made to the address that was checked, so a name
 * that resolves differently a moment later (DNS rebinding) cannot slip in between. The URL is read by the
 * WHATWG parser, the one the sender uses, so `http://2130706433/`, `http://0x7f.1/` and
 * `http://[::ffff:127.0.0.1]/` are seen as the loopback addresses they are.
 */

export type AddressClass = 'public' | 'loopback' | 'private' | 'linkLocal' | 'unspecified' | 'reserved';

export type TargetPolicy = { allowHttp: boolean; allowPrivate: boolean };

/** dns.promises.lookup's shape with `all: true`; tests pass their own to resolve a name anywhere. */
export type Lookup = (hostname: string, options: { all: true; verbatim: true }) => Promise<{ address: string; family: number }[]>;

export const defaultLookup: Lookup = (hostname, options) => dnsLookup(hostname, options);

/** A URL that may be delivered to, and the checked address to connect to. */
/** A URL the guard let through: `host` is its host name or IP literal without brackets, `address` what to connect to. */
export type CheckedTarget = { url: URL; host: string; address: string; family: 4 | 6 };

export class TargetRefused extends Error {
  override readonly name = 'TargetRefused';
}

const DESCRIBED: Record<Exclude<AddressClass, 'public'>, string> = {
  loopback: 'a loopback address',
  private: 'a private address',
  linkLocal: 'a link-local address',
  unspecified: 'not a destination (an unspecified address)',
  reserved: 'not a public unicast address (multicast, broadcast, documentation or reserved)',
};

/** Ports browsers refuse to fetch from (the WHATWG Fetch standard's "bad port" list): other protocols' ports. */
const BAD_PORTS = new Set([
  1, 7, 9, 11, 13, 15, 17, 19, 20, 21, 22, 23, 25, 37, 42, 43, 53, 69, 77, 79, 87, 95, 101, 102, 103, 104, 109, 110, 111, 113, 115, 117, 119,
  123, 135, 137, 139, 143, 161, 179, 389, 427, 465, 512, 513, 514, 515, 526, 530, 531, 532, 540, 548, 554, 556, 563, 587, 601, 636, 989, 990,
  993, 995, 1719, 1720, 1723, 2049, 3659, 4045, 4190, 5060, 5061, 6000, 6566, 6665, 6666, 6667, 6668, 6669, 6679, 6697, 10080,
]);

function ipv4Bytes(address: string): number[] {
  return address.split('.').map(Number);
}

/** The 16 bytes of an IPv6 address (with `::` and a trailing dotted quad), without zone. */
function ipv6Bytes(address: string): number[] {
  let text = address.split('%', 1)[0]!;
  const tail: number[] = [];
  const last = text.slice(text.lastIndexOf(':') + 1);
  const dotted = /^\d+\.\d+\.\d+\.\d+$/.test(last) ? last : undefined;
  if (dotted) {
    tail.push(...ipv4Bytes(dotted));
    text = text.slice(0, -dotted.length) + '0:0';
  }
  const [head, rest] = text.split('::') as [string, string | undefined];
  const groups = (part: string) => (part === '' ? [] : part.split(':').map((group) => Number.parseInt(group, 16)));
  const before = groups(head);
  const after = rest === undefined ? [] : groups(rest);
  const all = [...before, ...Array<number>(8 - before.length - after.length).fill(0), ...after];
  const bytes = all.flatMap((group) => [group >> 8, group & 0xff]);
  if (dotted) bytes.splice(12, 4, ...tail);
  return bytes;
}

const inV4 = (bytes: number[], prefix: number[], bits: number) => {
  for (let bit = 0; bit < bits; bit++) {
    const mask = 0x80 >> bit % 8;
    if ((bytes[Math.floor(bit / 8)]! & mask) !== (prefix[Math.floor(bit / 8)]! & mask)) return false;
  }
  return true;
};

function classifyV4(bytes: number[]): AddressClass {
  const within = (cidr: string) => {
    const [base, bits] = cidr.split('/') as [string, string];
    return inV4(bytes, ipv4Bytes(base), Number(bits));
  };
  if (within('0.0.0.0/8')) return 'unspecified';
  if (within('127.0.0.0/8')) return 'loopback';
  if (within('169.254.0.0/16')) return 'linkLocal';
  if (['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '100.64.0.0/10', '198.18.0.0/15'].some(within)) return 'private';
  if (['192.0.0.0/24', '192.0.2.0/24', '192.88.99.0/24', '198.51.100.0/24', '203.0.113.0/24', '224.0.0.0/4', '240.0.0.0/4'].some(within)) return 'reserved';
  return 'public';
}

function classifyV6(bytes: number[]): AddressClass {
  const within = (prefix: number[], bits: number) => inV4(bytes, [...prefix, ...Array<number>(16).fill(0)].slice(0, 16), bits);
  const embeddedV4 = (offset: number) => classifyV4(bytes.slice(offset, offset + 4));
  if (bytes.every((byte) => byte === 0)) return 'unspecified';
  if (bytes.slice(0, 15).every((byte) => byte === 0) && bytes[15] === 1) return 'loopback';
  // ::ffff:a.b.c.d (IPv4-mapped) and 64:ff9b::a.b.c.d (NAT64) reach the IPv4 address inside.
  if (within([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff], 96)) return embeddedV4(12);
  if (within([0, 0x64, 0xff, 0x9b], 96)) return embeddedV4(12);
  if (within([0, 0x64, 0xff, 0x9b, 0, 1], 48)) return 'private';
  // 6to4 carries an IPv4 address in bytes 2–5.
  if (within([0x20, 0x02], 16)) return embeddedV4(2);
  if (within([0xfc], 7)) return 'private';
  if (within([0xfe, 0x80], 10)) return 'linkLocal';
  if (within([0xfe, 0xc0], 10)) return 'private';
  // Teredo, documentation, ORCHID and the rest of 2001::/23, discard-only, multicast; IPv4-compatible ::/96.
  if (within([0x20, 0x01, 0x00], 23) || within([0x20, 0x01, 0x0d, 0xb8], 32) || within([0x01], 64) || within([0xff], 8)) return 'reserved';
  if (within([], 96)) return 'reserved';
  // Global unicast is 2000::/3; everything else is unassigned.
  return within([0x20], 3) ? 'public' : 'reserved';
}

/** What kind of address this is; anything that is not an IP address is 'reserved'. */
export function classifyAddress(address: string): AddressClass {
  const version = isIP(address.split('%', 1)[0]!);
  if (version === 4) return classifyV4(ipv4Bytes(address));
  if (version === 6) return classifyV6(ipv6Bytes(address));
  return 'reserved';
}

function refuseAddress(host: string, address: string, policy: TargetPolicy, http: boolean): void {
  const kind = classifyAddress(address);
  const shown = host === address ? address : `${host} (${address})`;
  if (http && kind !== 'loopback') throw new TargetRefused(`http:// is allowed only to a loopback address; ${shown} is not one: use https`);
  if (kind === 'public') return;
  if (kind === 'unspecified' || kind === 'reserved') throw new TargetRefused(`${shown} is ${DESCRIBED[kind]}`);
  if (!policy.allowPrivate) throw new TargetRefused(`${shown} is ${DESCRIBED[kind]}; webhooks go to public addresses only (WEBHOOKS_ALLOW_PRIVATE=1 allows private, loopback and link-local ones)`);
}

/** The URL's own rules (scheme, credentials, fragment, port), before any name is resolved. */
export function parseWebhookUrl(text: string, policy: TargetPolicy): URL {
  if (text.length > WEBHOOK_URL_MAX_LENGTH) throw new TargetRefused(`the webhook URL must be at most ${WEBHOOK_URL_MAX_LENGTH} characters`);
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new TargetRefused('the webhook URL is not a valid absolute URL');
  }
  // Stored and answered as the parser writes it, which percent-encodes: the written form keeps the limit too.
  if (url.href.length > WEBHOOK_URL_MAX_LENGTH) throw new TargetRefused(`the webhook URL must be at most ${WEBHOOK_URL_MAX_LENGTH} characters once percent-encoded`);
  if (url.protocol === 'http:') {
    if (!policy.allowHttp) throw new TargetRefused('the webhook URL must use https:// (http:// to a loopback address needs WEBHOOKS_ALLOW_HTTP=1)');
  } else if (url.protocol !== 'https:') {
    throw new TargetRefused(`the webhook URL must use https://, not ${url.protocol.slice(0, 20)}`);
  }
  if (url.username || url.password) throw new TargetRefused('the webhook URL must not carry a user name or password');
  if (url.hash) throw new TargetRefused('the webhook URL must not have a #fragment');
  if (url.port && BAD_PORTS.has(Number(url.port))) throw new TargetRefused(`port ${url.port} belongs to another protocol; use another port`);
  return url;
}

const LOOKUP_TIMEOUT_MS = 5_000;

/**
 * Checks a webhook URL and what its host resolves to now. Every address the name has must be allowed
 * (one bad address refuses it: a resolver may hand out any of them). Resolves to the address to connect to.
 */
export async function checkWebhookTarget(
  text: string,
  policy: TargetPolicy,
  options: { lookup?: Lookup; timeoutMs?: number } = {},
): Promise<CheckedTarget> {
  const url = parseWebhookUrl(text, policy);
  const http = url.protocol === 'http:';
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  const literal = isIP(host);
  if (literal) {
    refuseAddress(host, host, policy, http);
    return { url, host, address: host, family: literal as 4 | 6 };
  }
  const lookup = options.lookup ?? defaultLookup;
  let timer: NodeJS.Timeout | undefined;
  let addresses: { address: string; family: number }[];
  try {
    addresses = await Promise.race([
      lookup(host, { all: true, verbatim: true }),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new TargetRefused(`the host name ${host} did not resolve in time`)), options.timeoutMs ?? LOOKUP_TIMEOUT_MS);
      }),
    ]);
  } catch (error) {
    if (error instanceof TargetRefused) throw error;
    throw new TargetRefused(`the host name ${host} does not resolve`);
  } finally {
    clearTimeout(timer);
  }
  if (addresses.length === 0) throw new TargetRefused(`the host name ${host} does not resolve`);
  for (const { address } of addresses) refuseAddress(host, address, policy, http);
  const first = addresses[0]!;
  return { url, host, address: first.address, family: first.family === 6 ? 6 : 4 };
}
